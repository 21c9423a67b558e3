import ivm from 'isolated-vm';
import { code, runCode } from './builtins/code';
import { fakeContext } from './testing/context';

const items = [{ json: { n: 1 } }, { json: { n: 2 } }];

describe('code node', () => {
  it('returns items computed from items, $node and $trigger (copies)', async () => {
    const ctx = fakeContext(code, { code: 'return items.map(i => ({ n: i.n * 10, from: $node.Fetch.json.id, ev: $trigger.event, tpl: "{{ x }}" }))' }, {
      items,
      scope: { $node: { Fetch: { json: { id: 'u1' }, items: [] } }, $trigger: { event: 'push' }, $execution: { id: 'e', workflowId: null, mode: 'manual' }, $now: 'now' },
    });
    const r = await code.executor.execute(ctx);
    expect(r).toEqual({ kind: 'output', outputs: [[{ json: { n: 10, from: 'u1', ev: 'push', tpl: '{{ x }}' } }, { json: { n: 20, from: 'u1', ev: 'push', tpl: '{{ x }}' } }]] });
    expect(items[0].json.n).toBe(1);
  });

  it('accepts one object, n8n-style { json } items, and nothing', async () => {
    expect(await runCode('return { a: 1 }', {}, { timeoutMs: 1000, memoryMb: 16 })).toEqual([{ a: 1 }]);
    expect(await runCode('return [{ json: { a: 1 } }]', {}, { timeoutMs: 1000, memoryMb: 16 })).toEqual([{ a: 1 }]);
    expect(await runCode('return []', {}, { timeoutMs: 1000, memoryMb: 16 })).toEqual([]);
    await expect(runCode('return [1]', {}, { timeoutMs: 1000, memoryMb: 16 })).rejects.toThrow(/must return objects; item 0 is number/);
    await expect(runCode('return (', {}, { timeoutMs: 1000, memoryMb: 16 })).rejects.toThrow(/syntax error/);
    await expect(runCode('throw new Error("boom")', {}, { timeoutMs: 1000, memoryMb: 16 })).rejects.toThrow('Code node failed: boom');
  });

  it('has no Node: require, process, fetch are undefined', async () => {
    const r = await runCode('return { r: typeof require, p: typeof process, f: typeof fetch, s: typeof setTimeout, g: typeof globalThis.__input }', {}, { timeoutMs: 1000, memoryMb: 16 });
    expect(r).toEqual([{ r: 'undefined', p: 'undefined', f: 'undefined', s: 'undefined', g: 'undefined' }]);
    await expect(runCode('return require("fs")', {}, { timeoutMs: 1000, memoryMb: 16 })).rejects.toThrow(/require is not defined/);
  });

  it('kills an infinite loop at the timeout', async () => {
    const t0 = Date.now();
    await expect(code.executor.execute(fakeContext(code, { code: 'while(true){}', timeoutMs: 200 }))).rejects.toThrow('Code node timed out after 200 ms');
    expect(Date.now() - t0).toBeLessThan(1500);
  });

  it('fails a memory bomb with a clear error', async () => {
    const t0 = Date.now();
    await expect(code.executor.execute(fakeContext(code, { code: 'const a=[]; while(true) a.push(new Array(1e6).fill(1))', memoryMb: 16, timeoutMs: 10000 })))
      .rejects.toThrow('Code node exceeded its memory limit of 16 MB');
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it('disposes the isolate at once when the execution is aborted', async () => {
    const ac = new AbortController();
    const t0 = Date.now();
    const p = code.executor.execute(fakeContext(code, { code: 'while(true){}', timeoutMs: 20000 }, { signal: ac.signal }));
    setTimeout(() => ac.abort(), 100);
    await expect(p).rejects.toThrow('Code node was cancelled');
    expect(Date.now() - t0).toBeLessThan(1000);
    const aborted = new AbortController();
    aborted.abort();
    await expect(runCode('return {}', {}, { timeoutMs: 1000, memoryMb: 16, signal: aborted.signal })).rejects.toThrow('Code node was cancelled');
  });

  it('caps the timeout at the execution\'s remaining time', async () => {
    await expect(code.executor.execute(fakeContext(code, { code: 'while(true){}', timeoutMs: 5000 }, { remainingMs: 100 }))).rejects.toThrow('Code node timed out after 100 ms');
  });

  it('measures: a fresh isolate per step', async () => {
    const n = 20;
    let t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) new ivm.Isolate({ memoryLimit: 32 }).dispose();
    const createMs = Number(process.hrtime.bigint() - t0) / 1e6 / n;
    t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await code.executor.execute(fakeContext(code, { code: 'return items' }, { items }));
    const runMs = Number(process.hrtime.bigint() - t0) / 1e6 / n;
    // eslint-disable-next-line no-console
    console.log(`code node: isolate create+dispose ${createMs.toFixed(2)} ms; trivial code node run (isolate+context+compile+run) ${runMs.toFixed(2)} ms`);
    expect(runMs).toBeLessThan(200);
  });
});

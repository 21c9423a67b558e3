import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BUILTIN_NODE_TYPES, verifyWebhookAuth } from './builtins';
import { fakeContext } from './testing/context';
import type { Item, NodeServices, NodeType } from './types';

const T = Object.fromEntries(BUILTIN_NODE_TYPES.map((t) => [t.definition.type, t])) as Record<string, NodeType>;
const items = (...js: Record<string, unknown>[]): Item[] => js.map((json) => ({ json }));
const scope = (trigger: Record<string, unknown>) => ({ $node: {}, $trigger: trigger, $execution: { id: 'e', workflowId: 'w', mode: 'webhook' }, $now: '2025-01-01T00:00:00.000Z' });

describe('triggers', () => {
  it('manual-trigger outputs the execute input as one item', async () => {
    expect(await T['manual-trigger'].executor.execute(fakeContext(T['manual-trigger'], {}, { scope: scope({ a: 1 }) }))).toEqual({ kind: 'output', outputs: [[{ json: { a: 1 } }]] });
    expect(await T['manual-trigger'].executor.execute(fakeContext(T['manual-trigger'], {}, { scope: { ...scope({}), $trigger: undefined as never } }))).toEqual({ kind: 'output', outputs: [[{ json: {} }]] });
  });

  it('webhook outputs the request', async () => {
    const req = { body: { x: 1 }, query: { q: '1' }, headers: { 'content-type': 'application/json' }, method: 'POST', path: 'in', extra: 'dropped' };
    const r = await T.webhook.executor.execute(fakeContext(T.webhook, {}, { scope: scope(req) }));
    expect(r).toEqual({ kind: 'output', outputs: [[{ json: { body: { x: 1 }, query: { q: '1' }, headers: { 'content-type': 'application/json' }, method: 'POST', path: 'in' } }]] });
  });

  it('schedule outputs firedAt', async () => {
    expect(await T.schedule.executor.execute(fakeContext(T.schedule, { cron: '* * * * *' }, { scope: scope({ firedAt: '2025-02-02T00:00:00Z' }) })))
      .toEqual({ kind: 'output', outputs: [[{ json: { firedAt: '2025-02-02T00:00:00Z' } }]] });
  });
});

describe('verifyWebhookAuth', () => {
  const rawBody = Buffer.from('{"a":1}');
  it('none and header', () => {
    expect(verifyWebhookAuth({}, { headers: {}, rawBody })).toBe(true);
    const p = { auth: { type: 'header', name: 'X-Token', value: 's3cret' } };
    expect(verifyWebhookAuth(p, { headers: { 'x-token': 's3cret' }, rawBody })).toBe(true);
    expect(verifyWebhookAuth(p, { headers: { 'x-token': 's3cre' }, rawBody })).toBe(false);
    expect(verifyWebhookAuth(p, { headers: { 'x-token': 's3cretX' }, rawBody })).toBe(false);
    expect(verifyWebhookAuth(p, { headers: {}, rawBody })).toBe(false);
  });
  it('hmac good, prefixed, bad, missing, sha1', () => {
    const p = { auth: { type: 'hmac', secret: 'k' } };
    const sig = createHmac('sha256', 'k').update(rawBody).digest('hex');
    expect(verifyWebhookAuth(p, { headers: { 'x-signature': sig }, rawBody })).toBe(true);
    expect(verifyWebhookAuth(p, { headers: { 'x-signature': `sha256=${sig}` }, rawBody })).toBe(true);
    expect(verifyWebhookAuth(p, { headers: { 'x-signature': sig.toUpperCase() }, rawBody })).toBe(true);
    expect(verifyWebhookAuth(p, { headers: { 'x-signature': sig }, rawBody: Buffer.from('{"a":2}') })).toBe(false);
    expect(verifyWebhookAuth(p, { headers: { 'x-signature': 'deadbeef' }, rawBody })).toBe(false);
    expect(verifyWebhookAuth(p, { headers: {}, rawBody })).toBe(false);
    const p1 = { auth: { type: 'hmac', secret: 'k', algorithm: 'sha1', header: 'X-Hub-Signature' } };
    const s1 = createHmac('sha1', 'k').update(rawBody).digest('hex');
    expect(verifyWebhookAuth(p1, { headers: { 'x-hub-signature': `sha1=${s1}` }, rawBody })).toBe(true);
    expect(verifyWebhookAuth(p1, { headers: { 'x-hub-signature': sig }, rawBody })).toBe(false);
    expect(verifyWebhookAuth({ auth: { type: 'weird' } }, { headers: {}, rawBody })).toBe(false);
  });
});

describe('http-request', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => { body += c; });
      req.on('end', () => {
        const url = new URL(req.url!, 'http://x');
        if (url.pathname === '/slow') { const t = setTimeout(() => res.end('late'), 2000); res.on('close', () => clearTimeout(t)); return; }
        if (url.pathname === '/text') { res.end('plain text'); return; }
        res.writeHead(url.pathname === '/fail' ? 500 : 200, { 'content-type': 'application/json', 'x-echo': 'yes' });
        res.end(JSON.stringify({ method: req.method, path: url.pathname, query: Object.fromEntries(url.searchParams), auth: req.headers.authorization ?? null, ct: req.headers['content-type'] ?? null, body: body || null }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('sends one request per item with resolved parameters', async () => {
    const ctx = fakeContext(T['http-request'], {
      method: 'POST', url: `${base}/users/{{ $json.id }}`, headers: { authorization: 'Bearer {{ $json.token }}' }, query: { v: 2 }, body: { id: '{{ $json.id }}' },
    }, { items: items({ id: 1, token: 't1' }, { id: 2, token: 't2' }) });
    const r = await T['http-request'].executor.execute(ctx);
    if (r.kind !== 'output') throw new Error('expected output');
    expect(r.outputs[0]).toHaveLength(2);
    expect(r.outputs[0][1].json).toMatchObject({ status: 200, headers: { 'x-echo': 'yes' }, body: { method: 'POST', path: '/users/2', query: { v: '2' }, auth: 'Bearer t2', ct: 'application/json', body: '{"id":2}' } });
  });

  it('reads text, fails on non-2xx unless ignored, times out', async () => {
    const text = await T['http-request'].executor.execute(fakeContext(T['http-request'], { url: `${base}/text`, responseFormat: 'text' }));
    expect(text).toMatchObject({ outputs: [[{ json: { status: 200, body: 'plain text' } }]] });
    await expect(T['http-request'].executor.execute(fakeContext(T['http-request'], { url: `${base}/fail` }))).rejects.toThrow(/status 500/);
    const ignored = await T['http-request'].executor.execute(fakeContext(T['http-request'], { url: `${base}/fail`, ignoreHttpErrors: true }));
    expect(ignored).toMatchObject({ outputs: [[{ json: { status: 500 } }]] });
    const t0 = Date.now();
    await expect(T['http-request'].executor.execute(fakeContext(T['http-request'], { url: `${base}/slow`, timeoutMs: 150 }))).rejects.toThrow('HTTP request timed out after 150 ms');
    expect(Date.now() - t0).toBeLessThan(1500);
    await expect(T['http-request'].executor.execute(fakeContext(T['http-request'], { url: 'file:///etc/passwd' }))).rejects.toThrow(/http or https/);
  });

  it('stops when the execution is cancelled', async () => {
    const ac = new AbortController();
    const p = T['http-request'].executor.execute(fakeContext(T['http-request'], { url: `${base}/slow` }, { signal: ac.signal }));
    setTimeout(() => ac.abort(), 50);
    await expect(p).rejects.toThrow('Execution was cancelled');
  });
});

describe('flow and data nodes', () => {
  it('if routes items per item', async () => {
    const r = await T.if.executor.execute(fakeContext(T.if, { conditions: [{ left: '{{ $json.age }}', operator: 'gte', right: 18 }, { left: '{{ $json.name }}', operator: 'contains', right: 'a' }], combine: 'and' }, {
      items: items({ age: 20, name: 'Ada' }, { age: 10, name: 'Bea' }, { age: '30', name: 'Bob' }),
    }));
    expect(r).toEqual({ kind: 'output', outputs: [items({ age: 20, name: 'Ada' }), items({ age: 10, name: 'Bea' }, { age: '30', name: 'Bob' })] });
    const or = await T.if.executor.execute(fakeContext(T.if, { conditions: [{ left: '{{ $json.x }}', operator: 'exists' }, { left: '{{ $json.ok }}', operator: 'isTrue' }], combine: 'or' }, {
      items: items({ x: 0 }, { ok: true }, { y: 1 }),
    }));
    expect(or).toEqual({ kind: 'output', outputs: [items({ x: 0 }, { ok: true }), items({ y: 1 })] });
  });

  it('switch picks the first matching rule and the fallback', async () => {
    const params = { rules: [{ left: '{{ $json.n }}', operator: 'gt', right: 10 }, { left: '{{ $json.n }}', operator: 'gt', right: 5 }], fallback: true };
    const its = items({ n: 20 }, { n: 7 }, { n: 1 }, { n: 11 });
    expect(await T.switch.executor.execute(fakeContext(T.switch, params, { items: its }))).toEqual({ kind: 'output', outputs: [items({ n: 20 }, { n: 11 }), items({ n: 7 }), items({ n: 1 })] });
    expect(await T.switch.executor.execute(fakeContext(T.switch, { ...params, fallback: false }, { items: its }))).toEqual({ kind: 'output', outputs: [items({ n: 20 }, { n: 11 }), items({ n: 7 }), []] });
    expect(T.switch.outputCount!(params)).toBe(3);
  });

  it('set sets dotted paths, keeping or dropping the rest', async () => {
    const its = items({ a: 1, user: { id: 'u' } });
    expect(await T.set.executor.execute(fakeContext(T.set, { values: { 'user.name': '{{ $json.a }}', 'x.y.z': 'lit' } }, { items: its })))
      .toEqual({ kind: 'output', outputs: [items({ a: 1, user: { id: 'u', name: 1 }, x: { y: { z: 'lit' } } })] });
    expect(its[0].json).toEqual({ a: 1, user: { id: 'u' } });
    expect(await T.set.executor.execute(fakeContext(T.set, { values: { b: 'Hi {{ $json.a }}' }, keepOnlySet: true }, { items: its })))
      .toEqual({ kind: 'output', outputs: [items({ b: 'Hi 1' })] });
  });

  it('merge appends, pairs by position and joins by key', async () => {
    const a = items({ id: 1, a: 'x' }, { id: 2, a: 'y' }, { id: 3, a: 'z' });
    const b = items({ id: 2, b: 'B2' }, { id: 1, b: 'B1' });
    const run = (p: Record<string, unknown>) => T.merge.executor.execute(fakeContext(T.merge, p, { items: [...a, ...b], inputs: [a, b] }));
    expect(await run({ mode: 'append' })).toEqual({ kind: 'output', outputs: [[...a, ...b]] });
    expect(await run({ mode: 'combineByPosition' })).toEqual({ kind: 'output', outputs: [items({ id: 2, a: 'x', b: 'B2' }, { id: 1, a: 'y', b: 'B1' })] });
    expect(await run({ mode: 'combineByPosition', includeUnpaired: true })).toMatchObject({ outputs: [{ length: 3 }] });
    expect(await run({ mode: 'combineByKey', key: 'id' })).toEqual({ kind: 'output', outputs: [items({ id: 1, a: 'x', b: 'B1' }, { id: 2, a: 'y', b: 'B2' })] });
    expect(await run({ mode: 'combineByKey', key: 'id', includeUnpaired: true })).toMatchObject({ outputs: [{ length: 3 }] });
  });

  it('wait returns when to resume', async () => {
    const before = Date.now();
    const r = await T.wait.executor.execute(fakeContext(T.wait, { seconds: 60 }));
    if (r.kind !== 'wait') throw new Error('expected wait');
    expect(r.until.getTime()).toBeGreaterThanOrEqual(before + 60_000);
    const at = new Date(Date.now() + 86_400_000).toISOString();
    expect(await T.wait.executor.execute(fakeContext(T.wait, { until: '{{ $json.at }}' }, { items: items({ at }) })))
      .toEqual({ kind: 'wait', until: new Date(at) });
    await expect(T.wait.executor.execute(fakeContext(T.wait, { until: '2099-01-01T00:00:00Z' }))).rejects.toThrow(/more than a year/);
    await expect(T.wait.executor.execute(fakeContext(T.wait, { until: 'soon' }))).rejects.toThrow(/not a date/);
  });

  it('respond-to-webhook answers and passes items on', async () => {
    const its = items({ ok: true }, { ok: false });
    expect(await T['respond-to-webhook'].executor.execute(fakeContext(T['respond-to-webhook'], {}, { items: its })))
      .toEqual({ kind: 'respond', response: { status: 200, headers: {}, body: { ok: true } }, outputs: [its] });
    expect(await T['respond-to-webhook'].executor.execute(fakeContext(T['respond-to-webhook'], { status: 201, headers: { 'x-id': '{{ $json.ok }}' }, body: { got: '{{ $json.ok }}' } }, { items: its })))
      .toEqual({ kind: 'respond', response: { status: 201, headers: { 'x-id': 'true' }, body: { got: true } }, outputs: [its] });
  });
});

describe('service nodes', () => {
  const services: NodeServices = {
    sandboxExec: jest.fn(async (input) => ({ exitCode: 0, stdout: `ran ${JSON.stringify(input.command)} in ${input.sandboxId}`, stderr: '', timedOut: false })),
    aiChat: jest.fn(async (input) => ({ text: `echo: ${input.prompt}`, inputTokens: 3, outputTokens: 2 })),
  };
  it('sandbox-exec calls the service per item', async () => {
    const r = await T['sandbox-exec'].executor.execute(fakeContext(T['sandbox-exec'], { sandboxId: 'sb_1', command: ['echo', '{{ $json.w }}'], timeoutSeconds: 5 }, { items: items({ w: 'a' }, { w: 'b' }), services }));
    expect(r).toEqual({ kind: 'output', outputs: [items(
      { exitCode: 0, stdout: 'ran ["echo","a"] in sb_1', stderr: '', timedOut: false },
      { exitCode: 0, stdout: 'ran ["echo","b"] in sb_1', stderr: '', timedOut: false },
    )] });
    expect(services.sandboxExec).toHaveBeenCalledWith(expect.objectContaining({ workspaceId: 'ws_1', timeoutSeconds: 5, signal: expect.any(AbortSignal) }));
  });
  it('ai-chat calls the service per item', async () => {
    const r = await T['ai-chat'].executor.execute(fakeContext(T['ai-chat'], { poolId: 'p1', model: 'm', system: 'be brief', prompt: 'Summarize {{ $json.t }}' }, { items: items({ t: 'x' }), services }));
    expect(r).toEqual({ kind: 'output', outputs: [items({ text: 'echo: Summarize x', inputTokens: 3, outputTokens: 2 })] });
    expect(services.aiChat).toHaveBeenCalledWith(expect.objectContaining({ workspaceId: 'ws_1', poolId: 'p1', model: 'm', system: 'be brief' }));
  });
});

import ivm from 'isolated-vm';
import type { Item, NodeType } from '../types';
import { isPlainObject } from './util';

export const CODE_MAX_BYTES = 100 * 1024;
export const CODE_MAX_TIMEOUT_MS = 30_000;

/**
 * Runs user JavaScript in a fresh isolated-vm Isolate per step: nothing is shared between
 * executions (no state leaks, a crashed or poisoned isolate never outlives its step). The cost
 * is creating an isolate + context each time: measured ~1 ms for isolate create+dispose and
 * ~2 ms for a whole trivial step (see code.test.ts "measures"); a pool would save that but risks leaks
 * between workspaces, so we pay it.
 *
 * The code sees `items` (copies of the input items' json), `$node` and `$trigger` (copies), and
 * nothing of Node: no require, process, fetch, timers. It runs synchronously and must `return`
 * an array of objects or one object.
 */
export const code: NodeType = {
  definition: {
    type: 'code',
    displayName: 'Code',
    group: 'core',
    version: 1,
    description: 'Runs JavaScript in an isolated sandbox over all input items. The code sees `items` (array of the items\' json), `$node` and `$trigger`, and must `return` an array of objects (or one object).',
    inputs: 1,
    outputs: 1,
    parametersSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['code'],
      properties: {
        code: { type: 'string', maxLength: CODE_MAX_BYTES, description: 'JavaScript function body; must return the output items\' json.' },
        timeoutMs: { type: 'integer', minimum: 1, maximum: CODE_MAX_TIMEOUT_MS, default: 1000, description: 'CPU time limit, ms.' },
        memoryMb: { type: 'integer', minimum: 8, maximum: 128, default: 32, description: 'Heap limit of the sandbox, MB.' },
      },
    },
    noExpressions: ['code'],
  },
  validateParameters(parameters) {
    if (typeof parameters.code === 'string' && Buffer.byteLength(parameters.code, 'utf8') > CODE_MAX_BYTES) {
      return [{ field: 'parameters.code', message: `must be at most ${CODE_MAX_BYTES} bytes` }];
    }
    return [];
  },
  executor: {
    async execute(ctx) {
      // `code` is read raw: it is never expression-resolved ({{ }} is valid JavaScript).
      const raw = ctx.rawParameters;
      const p = ctx.parametersFor(0);
      const source = String(raw.code ?? '');
      const timeoutMs = Math.max(1, Math.min(typeof p.timeoutMs === 'number' ? p.timeoutMs : 1000, CODE_MAX_TIMEOUT_MS, ctx.remainingMs > 0 ? ctx.remainingMs : 1));
      const memoryMb = Math.max(8, Math.min(typeof p.memoryMb === 'number' ? p.memoryMb : 32, 128));
      const json = await runCode(source, {
        items: ctx.items.map((i) => i.json),
        $node: Object.fromEntries(Object.entries(ctx.scope.$node ?? {}).map(([k, v]) => [k, { json: v.json, items: v.items }])),
        $trigger: ctx.scope.$trigger ?? {},
        $execution: ctx.scope.$execution,
        $now: ctx.scope.$now,
      }, { timeoutMs, memoryMb, signal: ctx.signal });
      return { kind: 'output', outputs: [json.map((j): Item => ({ json: j }))] };
    },
  },
};

export interface RunCodeOptions {
  timeoutMs: number;
  memoryMb: number;
  signal?: AbortSignal;
}

/** Runs `source` as a function body in a fresh isolate with `globals` (JSON-copied) in scope. */
export async function runCode(source: string, globals: Record<string, unknown>, options: RunCodeOptions): Promise<Record<string, unknown>[]> {
  const { timeoutMs, memoryMb, signal } = options;
  if (signal?.aborted) throw new Error('Code node was cancelled');
  const isolate = new ivm.Isolate({ memoryLimit: memoryMb });
  let cancelled = false;
  const onAbort = (): void => {
    cancelled = true;
    if (!isolate.isDisposed) isolate.dispose();
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const context = await isolate.createContext();
    await context.global.set('__input', JSON.stringify(globals ?? {}));
    const names = Object.keys(globals).filter((n) => /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(n));
    // The user's code is a function body; the wrapper only parses the input and serializes the result.
    const wrapped = `(function () {
      const __g = JSON.parse(__input);
      delete globalThis.__input;
      const __r = (function (${names.join(', ')}) {\n${source}\n}).call(undefined, ${names.map((n) => `__g[${JSON.stringify(n)}]`).join(', ')});
      return JSON.stringify(__r === undefined ? null : __r);
    })()`;
    let script: ivm.Script;
    try {
      script = await isolate.compileScript(wrapped, { filename: 'code-node.js' });
    } catch (err) {
      throw new Error(`Code node has a syntax error: ${(err as Error).message}`);
    }
    const result: unknown = await script.run(context, { timeout: timeoutMs });
    return toItems(result);
  } catch (err) {
    if (cancelled) throw new Error('Code node was cancelled');
    const message = (err as Error)?.message ?? String(err);
    if (/memory limit/i.test(message) || (isolate.isDisposed && !/timed out/i.test(message))) {
      throw new Error(`Code node exceeded its memory limit of ${memoryMb} MB`);
    }
    if (/Script execution timed out/i.test(message)) throw new Error(`Code node timed out after ${timeoutMs} ms`);
    if (message.startsWith('Code node')) throw err;
    throw new Error(`Code node failed: ${message}`);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    if (!isolate.isDisposed) isolate.dispose();
  }
}

function toItems(result: unknown): Record<string, unknown>[] {
  if (typeof result !== 'string') throw new Error('Code node must return an array of objects or an object');
  const value: unknown = JSON.parse(result);
  if (value === null) return [];
  const list = Array.isArray(value) ? value : [value];
  return list.map((v, i) => {
    if (!isPlainObject(v)) throw new Error(`Code node must return objects; item ${i} is ${v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v}`);
    // n8n style `{ json: {...} }` is accepted too.
    if (Object.keys(v).length === 1 && isPlainObject(v.json)) return v.json;
    return v;
  });
}

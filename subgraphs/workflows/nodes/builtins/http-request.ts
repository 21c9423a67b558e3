import type { Item, NodeType } from '../types';
import { hasExpression } from '../expressions';
import { isPlainObject, itemsOrOne, throwIfAborted } from './util';

const MAX_TIMEOUT_MS = 60_000;
const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

function checkUrl(url: unknown): string | null {
  if (typeof url !== 'string') return 'must be a string';
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'must be an absolute http(s) URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'must use http or https';
  return null;
}

async function readLimited(res: Response, signal: AbortSignal): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    throwIfAborted(signal);
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_RESPONSE_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw new Error(`HTTP response is larger than ${MAX_RESPONSE_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export const httpRequest: NodeType = {
  definition: {
    type: 'http-request',
    displayName: 'HTTP request',
    group: 'integration',
    version: 1,
    description: 'Sends an HTTP request per input item; outputs { status, headers, body }.',
    inputs: 1,
    outputs: 1,
    parametersSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['url'],
      properties: {
        method: { type: 'string', enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'], default: 'GET', description: 'HTTP method.' },
        url: { type: 'string', minLength: 1, maxLength: 8192, description: 'http(s) URL; may use expressions.' },
        headers: { type: 'object', additionalProperties: { type: 'string' }, default: {}, description: 'Request headers.' },
        query: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] }, default: {}, description: 'Query string parameters, added to the URL.' },
        body: { description: 'JSON body (objects and arrays are sent as application/json; strings as they are).' },
        timeoutMs: { type: 'integer', minimum: 1, maximum: MAX_TIMEOUT_MS, default: 30_000, description: 'Timeout per request, ms.' },
        responseFormat: { type: 'string', enum: ['json', 'text'], default: 'json', description: 'How to read the body (json falls back to text when it does not parse).' },
        ignoreHttpErrors: { type: 'boolean', default: false, description: 'Output non-2xx responses instead of failing.' },
      },
    },
  },
  validateParameters(parameters) {
    if (typeof parameters.url === 'string' && !hasExpression(parameters.url)) {
      const err = checkUrl(parameters.url);
      if (err) return [{ field: 'parameters.url', message: err }];
    }
    return [];
  },
  executor: {
    async execute(ctx) {
      const out: Item[] = [];
      const items = itemsOrOne(ctx);
      for (let i = 0; i < items.length; i++) {
        throwIfAborted(ctx.signal);
        const p = ctx.parametersFor(i);
        const urlError = checkUrl(p.url);
        if (urlError) throw new Error(`url ${urlError} (got ${JSON.stringify(p.url)})`);
        const url = new URL(p.url as string);
        if (isPlainObject(p.query)) for (const [k, v] of Object.entries(p.query)) if (v !== undefined && v !== null) url.searchParams.set(k, String(v));
        const method = typeof p.method === 'string' ? p.method.toUpperCase() : 'GET';
        const headers: Record<string, string> = {};
        if (isPlainObject(p.headers)) for (const [k, v] of Object.entries(p.headers)) if (v !== undefined && v !== null) headers[k] = String(v);
        let body: string | undefined;
        if (p.body !== undefined && p.body !== null && method !== 'GET' && method !== 'HEAD') {
          if (typeof p.body === 'string') body = p.body;
          else {
            body = JSON.stringify(p.body);
            if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
          }
        }
        const timeoutMs = Math.min(typeof p.timeoutMs === 'number' ? p.timeoutMs : 30_000, MAX_TIMEOUT_MS, Math.max(1, ctx.remainingMs));
        const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]);
        let res: Response;
        let text: string;
        try {
          res = await fetch(url, { method, headers, body, signal, redirect: 'follow' });
          text = await readLimited(res, signal);
        } catch (err) {
          throwIfAborted(ctx.signal);
          if ((err as Error).name === 'TimeoutError' || signal.aborted) throw new Error(`HTTP request timed out after ${timeoutMs} ms`);
          throw new Error(`HTTP request failed: ${(err as Error).message}`);
        }
        let parsed: unknown = text;
        if (p.responseFormat !== 'text' && text) {
          try { parsed = JSON.parse(text); } catch { parsed = text; }
        }
        if (!res.ok && p.ignoreHttpErrors !== true) {
          const snippet = text.length > 200 ? `${text.slice(0, 200)}…` : text;
          throw new Error(`HTTP request failed with status ${res.status}: ${snippet}`);
        }
        out.push({ json: { status: res.status, headers: Object.fromEntries(res.headers), body: parsed } });
      }
      return { kind: 'output', outputs: [out] };
    },
  },
};

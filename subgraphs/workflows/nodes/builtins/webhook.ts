import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { NodeType } from '../types';

export const WEBHOOK_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', '*'] as const;

export const webhook: NodeType = {
  replayable: true,
  definition: {
    type: 'webhook',
    displayName: 'Webhook',
    group: 'trigger',
    version: 1,
    description: 'Starts the workflow on an HTTP request to its URL while deployed; outputs { body, query, headers, method, path }.',
    inputs: 0,
    outputs: 1,
    trigger: 'webhook',
    parametersSchema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        method: { type: 'string', enum: [...WEBHOOK_METHODS], default: 'POST', description: 'HTTP method it answers; * for any.' },
        path: { type: 'string', pattern: '^[A-Za-z0-9/_-]*$', maxLength: 200, default: '', description: 'Suffix after the workflow\'s webhook URL.' },
        auth: {
          description: 'How callers authenticate.',
          default: { type: 'none' },
          oneOf: [
            { type: 'object', additionalProperties: false, required: ['type'], properties: { type: { const: 'none' } } },
            {
              type: 'object', additionalProperties: false, required: ['type', 'name', 'value'],
              properties: {
                type: { const: 'header' },
                name: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9!#$%&\'*+.^_`|~-]+$', description: 'Header name.' },
                value: { type: 'string', minLength: 1, maxLength: 1024, writeOnly: true, description: 'Expected header value. Never shown again: readers see a placeholder.' },
              },
            },
            {
              type: 'object', additionalProperties: false, required: ['type', 'secret'],
              properties: {
                type: { const: 'hmac' },
                header: { type: 'string', minLength: 1, maxLength: 128, default: 'x-signature', description: 'Header carrying the hex signature (or sha256=<hex>).' },
                secret: { type: 'string', minLength: 1, maxLength: 1024, writeOnly: true, description: 'Shared secret. Never shown again: readers see a placeholder.' },
                algorithm: { type: 'string', enum: ['sha256', 'sha1'], default: 'sha256' },
              },
            },
          ],
        },
        respond: { type: 'string', enum: ['immediately', 'lastNode', 'respondNode'], default: 'lastNode', description: 'When the caller gets its answer: at once (202), with the last node\'s output, or from a respond-to-webhook node.' },
        responseCode: { type: 'integer', minimum: 100, maximum: 599, default: 200, description: 'Status code of the answer (immediately / lastNode).' },
      },
    },
    noExpressions: ['method', 'path', 'auth', 'respond', 'responseCode'],
  },
  executor: {
    async execute(ctx) {
      const t = ctx.scope.$trigger ?? {};
      return {
        kind: 'output',
        outputs: [[{ json: { body: t.body ?? null, query: t.query ?? {}, headers: t.headers ?? {}, method: t.method ?? null, path: t.path ?? '' } }]],
      };
    },
  },
};

/** The normalized method and path suffix of a webhook node (for registrations and uniqueness). */
export function webhookRoute(parameters: Record<string, unknown>): { method: string; path: string } {
  const method = typeof parameters.method === 'string' ? parameters.method.toUpperCase() : 'POST';
  const path = typeof parameters.path === 'string' ? parameters.path.replace(/^\/+|\/+$/g, '').replace(/\/{2,}/g, '/') : '';
  return { method, path };
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const want = name.toLowerCase();
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() === want) return Array.isArray(v) ? v[0] : v;
  }
  return undefined;
}

/** Compares without leaking the position of the first difference or (via hashing) the length. */
function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}

/**
 * Checks a webhook request against the node's `auth` parameter: none, a header with a fixed
 * value, or an HMAC of the raw body (hex, optionally prefixed `sha256=` / `sha1=`).
 */
export function verifyWebhookAuth(
  parameters: Record<string, unknown>,
  request: { headers: Record<string, string | string[] | undefined>; rawBody: Buffer },
): boolean {
  const auth = (parameters.auth ?? { type: 'none' }) as Record<string, unknown>;
  switch (auth.type) {
    case undefined:
    case 'none':
      return true;
    case 'header': {
      if (typeof auth.name !== 'string' || typeof auth.value !== 'string' || !auth.value) return false;
      const got = header(request.headers, auth.name);
      return got !== undefined && safeEqual(got, auth.value);
    }
    case 'hmac': {
      if (typeof auth.secret !== 'string' || !auth.secret) return false;
      const algorithm = auth.algorithm === 'sha1' ? 'sha1' : 'sha256';
      let got = header(request.headers, typeof auth.header === 'string' && auth.header ? auth.header : 'x-signature');
      if (!got) return false;
      got = got.trim();
      if (got.toLowerCase().startsWith(`${algorithm}=`)) got = got.slice(algorithm.length + 1);
      const want = createHmac(algorithm, auth.secret).update(request.rawBody).digest('hex');
      return safeEqual(got.toLowerCase(), want);
    }
    default:
      return false;
  }
}

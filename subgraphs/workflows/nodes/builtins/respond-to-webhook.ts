import type { NodeType } from '../types';
import { isPlainObject } from './util';

export const respondToWebhook: NodeType = {
  replayable: true,
  definition: {
    type: 'respond-to-webhook',
    displayName: 'Respond to webhook',
    group: 'flow',
    version: 1,
    description: 'Answers the webhook caller now (webhook respond = respondNode); its input items continue the graph.',
    inputs: 1,
    outputs: 1,
    parametersSchema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        status: { type: 'integer', minimum: 100, maximum: 599, default: 200, description: 'Status code.' },
        headers: { type: 'object', additionalProperties: { type: 'string' }, default: {}, description: 'Response headers.' },
        body: { description: 'Response body (may be an expression); default: the first item\'s json.' },
      },
    },
  },
  executor: {
    async execute(ctx) {
      const p = ctx.parametersFor(0);
      const status = typeof p.status === 'number' ? p.status : Number(p.status ?? 200);
      if (!Number.isInteger(status) || status < 100 || status > 599) throw new Error(`Respond to webhook: bad status ${JSON.stringify(p.status)}`);
      const headers: Record<string, string> = {};
      if (isPlainObject(p.headers)) for (const [k, v] of Object.entries(p.headers)) if (v !== undefined && v !== null) headers[k] = String(v);
      const body = p.body !== undefined ? p.body : (ctx.items[0]?.json ?? {});
      return { kind: 'respond', response: { status, headers, body }, outputs: [ctx.items] };
    },
  },
};

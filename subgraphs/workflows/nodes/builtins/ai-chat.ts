import type { Item, NodeType } from '../types';
import { itemsOrOne, throwIfAborted } from './util';

export const aiChat: NodeType = {
  definition: {
    type: 'ai-chat',
    displayName: 'AI chat',
    group: 'integration',
    version: 1,
    description: 'One chat completion per item through the workspace\'s AI gateway (a pool or an upstream); outputs { text, inputTokens, outputTokens }.',
    inputs: 1,
    outputs: 1,
    parametersSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['model', 'prompt'],
      properties: {
        poolId: { type: 'string', minLength: 1, maxLength: 128, description: 'AI pool to use (or upstreamId).' },
        upstreamId: { type: 'string', minLength: 1, maxLength: 128, description: 'AI upstream to use (or poolId).' },
        model: { type: 'string', minLength: 1, maxLength: 256, description: 'Model name.' },
        system: { type: 'string', maxLength: 100000, description: 'System prompt.' },
        prompt: { type: 'string', minLength: 1, maxLength: 1000000, description: 'User prompt; usually an expression.' },
        maxTokens: { type: 'integer', minimum: 1, maximum: 200000, default: 1024, description: 'Most tokens to generate.' },
      },
      oneOf: [{ required: ['poolId'] }, { required: ['upstreamId'] }],
    },
  },
  executor: {
    async execute(ctx) {
      const out: Item[] = [];
      const items = itemsOrOne(ctx);
      for (let i = 0; i < items.length; i++) {
        throwIfAborted(ctx.signal);
        const p = ctx.parametersFor(i);
        const prompt = typeof p.prompt === 'string' ? p.prompt : JSON.stringify(p.prompt ?? '');
        const r = await ctx.services.aiChat({
          workspaceId: ctx.workspaceId,
          poolId: typeof p.poolId === 'string' ? p.poolId : undefined,
          upstreamId: typeof p.upstreamId === 'string' ? p.upstreamId : undefined,
          model: String(p.model),
          system: typeof p.system === 'string' ? p.system : undefined,
          prompt,
          maxTokens: typeof p.maxTokens === 'number' ? p.maxTokens : undefined,
          signal: ctx.signal,
        });
        out.push({ json: { text: r.text, inputTokens: r.inputTokens, outputTokens: r.outputTokens } });
      }
      return { kind: 'output', outputs: [out] };
    },
  },
};

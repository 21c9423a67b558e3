import type { Item, NodeType } from '../types';
import { itemsOrOne, throwIfAborted } from './util';

export const sandboxExec: NodeType = {
  definition: {
    type: 'sandbox-exec',
    displayName: 'Sandbox exec',
    group: 'integration',
    version: 1,
    description: 'Runs a command in a sandbox of the workspace per item; outputs { exitCode, stdout, stderr, timedOut }.',
    inputs: 1,
    outputs: 1,
    parametersSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['sandboxId', 'command'],
      properties: {
        sandboxId: { type: 'string', minLength: 1, maxLength: 128, description: 'Sandbox to run in.' },
        command: {
          description: 'Shell command line, or argv array.',
          anyOf: [
            { type: 'string', minLength: 1, maxLength: 65536 },
            { type: 'array', minItems: 1, maxItems: 256, items: { type: 'string', maxLength: 65536 } },
          ],
        },
        timeoutSeconds: { type: 'integer', minimum: 1, maximum: 3600, default: 60, description: 'Command timeout.' },
      },
    },
  },
  executor: {
    async execute(ctx) {
      const out: Item[] = [];
      const items = itemsOrOne(ctx);
      for (let i = 0; i < items.length; i++) {
        throwIfAborted(ctx.signal);
        const p = ctx.parametersFor(i);
        const command = Array.isArray(p.command) ? p.command.map(String) : String(p.command);
        const r = await ctx.services.sandboxExec({
          workspaceId: ctx.workspaceId,
          sandboxId: String(p.sandboxId),
          command,
          timeoutSeconds: typeof p.timeoutSeconds === 'number' ? p.timeoutSeconds : undefined,
          signal: ctx.signal,
        });
        out.push({ json: { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr, timedOut: r.timedOut } });
      }
      return { kind: 'output', outputs: [out] };
    },
  },
};

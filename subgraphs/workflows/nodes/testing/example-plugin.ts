import type { NodeType } from '../types';

/** A fixture plugin package for registry tests: its default export is NodeType[]. */
const nodeTypes: NodeType[] = [
  {
    definition: {
      type: 'shout',
      displayName: 'Shout',
      group: 'data',
      version: 1,
      description: 'Upper-cases `text` of each item.',
      inputs: 1,
      outputs: 1,
      parametersSchema: {
        type: 'object',
        additionalProperties: false,
        required: ['text'],
        properties: { text: { type: 'string', description: 'Text to shout.' } },
      },
    },
    executor: {
      async execute(ctx) {
        return { kind: 'output', outputs: [ctx.items.map((_, i) => ({ json: { text: String(ctx.parametersFor(i).text).toUpperCase() } }))] };
      },
    },
  },
];

export default nodeTypes;

import type { Item, NodeType } from '../types';
import { CONDITION_SCHEMA, testCondition, type Condition } from './conditions';

export const ifNode: NodeType = {
  replayable: true,
  definition: {
    type: 'if',
    displayName: 'If',
    group: 'flow',
    version: 1,
    description: 'Routes each item to output "true" or "false" by its conditions.',
    inputs: 1,
    outputs: 2,
    outputNames: ['true', 'false'],
    parametersSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['conditions'],
      properties: {
        conditions: { type: 'array', minItems: 1, maxItems: 50, items: CONDITION_SCHEMA, description: 'Conditions tested per item.' },
        combine: { type: 'string', enum: ['and', 'or'], default: 'and', description: 'Whether all (and) or any (or) condition must hold.' },
      },
    },
  },
  executor: {
    async execute(ctx) {
      const yes: Item[] = [];
      const no: Item[] = [];
      ctx.items.forEach((item, i) => {
        const p = ctx.parametersFor(i);
        const conditions = (p.conditions ?? []) as Condition[];
        const ok = p.combine === 'or' ? conditions.some(testCondition) : conditions.every(testCondition);
        (ok ? yes : no).push(item);
      });
      return { kind: 'output', outputs: [yes, no] };
    },
  },
};

import type { Item, NodeType } from '../types';
import { CONDITION_SCHEMA, testCondition, type Condition } from './conditions';

export const switchNode: NodeType = {
  replayable: true,
  definition: {
    type: 'switch',
    displayName: 'Switch',
    group: 'flow',
    version: 1,
    description: 'Routes each item to the output of the first rule it matches (output i for rule i); the last output takes the rest when fallback is on.',
    inputs: 1,
    outputs: 'dynamic',
    parametersSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['rules'],
      properties: {
        rules: { type: 'array', minItems: 1, maxItems: 50, items: CONDITION_SCHEMA, description: 'Rules in order; each adds an output.' },
        fallback: { type: 'boolean', default: false, description: 'Send items that match no rule to the last output (else they are dropped).' },
      },
    },
  },
  outputCount(parameters) {
    return (Array.isArray(parameters.rules) ? parameters.rules.length : 0) + 1;
  },
  executor: {
    async execute(ctx) {
      const ruleCount = Array.isArray(ctx.rawParameters.rules) ? ctx.rawParameters.rules.length : 0;
      const outputs: Item[][] = Array.from({ length: ruleCount + 1 }, () => []);
      ctx.items.forEach((item, i) => {
        const p = ctx.parametersFor(i);
        const rules = (p.rules ?? []) as Condition[];
        const idx = rules.findIndex(testCondition);
        if (idx >= 0) outputs[idx].push(item);
        else if (p.fallback === true) outputs[ruleCount].push(item);
      });
      return { kind: 'output', outputs };
    },
  },
};

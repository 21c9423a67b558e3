import type { NodeType } from '../types';
import { isPlainObject } from './util';

export const manualTrigger: NodeType = {
  replayable: true,
  definition: {
    type: 'manual-trigger',
    displayName: 'Manual trigger',
    group: 'trigger',
    version: 1,
    description: 'Starts the workflow when it is executed by hand or through the API; outputs the execute input as one item.',
    inputs: 0,
    outputs: 1,
    trigger: 'manual',
    parametersSchema: { type: 'object', additionalProperties: false, properties: {} },
  },
  executor: {
    async execute(ctx) {
      const input = ctx.scope.$trigger as unknown;
      const json = input === undefined || input === null ? {} : isPlainObject(input) ? input : { input };
      return { kind: 'output', outputs: [[{ json }]] };
    },
  },
};

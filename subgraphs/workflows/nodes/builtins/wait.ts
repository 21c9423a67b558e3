import type { NodeType } from '../types';

export const WAIT_MAX_SECONDS = 31_536_000;

export const wait: NodeType = {
  definition: {
    type: 'wait',
    displayName: 'Wait',
    group: 'flow',
    version: 1,
    description: 'Pauses the execution durably for a number of seconds or until a time, then passes its input items on.',
    inputs: 1,
    outputs: 1,
    parametersSchema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        seconds: { type: 'integer', minimum: 1, maximum: WAIT_MAX_SECONDS, description: 'How long to wait.' },
        until: { type: 'string', minLength: 1, maxLength: 200, description: 'ISO 8601 time to wait until (may be an expression).' },
      },
      oneOf: [{ required: ['seconds'] }, { required: ['until'] }],
    },
  },
  validateParameters(parameters) {
    if (typeof parameters.until === 'string' && !parameters.until.includes('{{') && Number.isNaN(Date.parse(parameters.until))) {
      return [{ field: 'parameters.until', message: 'must be an ISO 8601 date-time' }];
    }
    return [];
  },
  executor: {
    async execute(ctx) {
      const p = ctx.parametersFor(0);
      if (typeof p.seconds === 'number') return { kind: 'wait', until: new Date(Date.now() + p.seconds * 1000) };
      const until = p.until instanceof Date ? p.until : new Date(String(p.until));
      if (Number.isNaN(until.getTime())) throw new Error(`Wait: "until" is not a date (${JSON.stringify(p.until)})`);
      if (until.getTime() - Date.now() > WAIT_MAX_SECONDS * 1000) throw new Error('Wait: "until" is more than a year away');
      return { kind: 'wait', until };
    },
  },
};

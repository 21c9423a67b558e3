import { CronExpressionParser } from 'cron-parser';
import type { NodeType } from '../types';

function isValidTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

export const schedule: NodeType = {
  replayable: true,
  definition: {
    type: 'schedule',
    displayName: 'Schedule',
    group: 'trigger',
    version: 1,
    description: 'Starts the workflow on a cron schedule while it is deployed; outputs { firedAt }.',
    inputs: 0,
    outputs: 1,
    trigger: 'schedule',
    parametersSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['cron'],
      properties: {
        cron: { type: 'string', minLength: 1, maxLength: 200, description: 'Cron expression (5 fields, or 6 with seconds), e.g. "*/5 * * * *".' },
        timezone: { type: 'string', default: 'UTC', maxLength: 64, description: 'IANA time zone the cron expression is read in.' },
      },
    },
  },
  validateParameters(parameters) {
    const errors: Array<{ field: string; message: string }> = [];
    const tz = typeof parameters.timezone === 'string' ? parameters.timezone : 'UTC';
    if (!isValidTimezone(tz)) errors.push({ field: 'parameters.timezone', message: `is not a known time zone ("${tz}")` });
    if (typeof parameters.cron === 'string') {
      try {
        CronExpressionParser.parse(parameters.cron, { tz: errors.length ? 'UTC' : tz, strict: false });
      } catch (err) {
        errors.push({ field: 'parameters.cron', message: `is not a valid cron expression: ${(err as Error).message}` });
      }
    }
    return errors;
  },
  executor: {
    async execute(ctx) {
      const firedAt = typeof ctx.scope.$trigger?.firedAt === 'string' ? ctx.scope.$trigger.firedAt : ctx.scope.$now;
      return { kind: 'output', outputs: [[{ json: { firedAt } }]] };
    },
  },
};

/** The next fire time after `from` (for the scheduler). */
export function nextScheduleTime(parameters: Record<string, unknown>, from: Date = new Date()): Date {
  const tz = typeof parameters.timezone === 'string' ? parameters.timezone : 'UTC';
  return CronExpressionParser.parse(String(parameters.cron), { tz, currentDate: from }).next().toDate();
}

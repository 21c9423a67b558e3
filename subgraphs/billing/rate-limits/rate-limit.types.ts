import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { PlanName } from '../../../core/rate-limits';

/** core/rate-limits.ts PLAN_NAMES as a GraphQL enum; values are the lower-case plan names. */
export const WorkspacePlanEnum: { [P in PlanName]: P } = {
  free: 'free',
  pro: 'pro',
  enterprise: 'enterprise',
};

registerEnumType(WorkspacePlanEnum, { name: 'WorkspacePlan', description: 'The plan a workspace is on; it decides the limits before overrides.' });

@ObjectType({ description: 'The limits in force for a workspace.' })
export class RateLimitValues {
  @Field(() => Int, { description: 'GraphQL queries, subscriptions and REST GET requests per minute, across all callers of the workspace.' })
  readRequestsPerMinute: number;

  @Field(() => Int, { description: 'GraphQL mutations and REST POST/PUT/PATCH/DELETE requests per minute, across all callers of the workspace.' })
  writeRequestsPerMinute: number;

  @Field(() => Int, { description: 'Sandboxes running at once.' })
  concurrentSandboxes: number;

  @Field(() => Int, { description: 'Browser sessions running at once.' })
  concurrentBrowserSessions: number;

  @Field(() => Int, { description: 'Model tokens (input plus output) through the AI gateway per minute.' })
  aiTokensPerMinute: number;
}

@ObjectType({ description: 'Use of a per-minute budget in the current window.' })
export class RateWindowUsage {
  @Field(() => Int, { description: 'Used in the current window (for requests: counted at arrival, refused ones included).' })
  used: number;

  @Field(() => Int, { description: 'The budget of a window.' })
  limit: number;

  @Field(() => Int, { description: 'What is left of the budget in the current window (never below 0).' })
  remaining: number;

  @Field(() => Int, { description: 'Seconds until the current window ends and `used` starts again from 0; 0 when no window is open.' })
  resetsInSeconds: number;
}

@ObjectType({ description: 'Use of a limit on things running at once.' })
export class ConcurrencyUsage {
  @Field(() => Int, { description: 'Running now.' })
  inUse: number;

  @Field(() => Int)
  limit: number;

  @Field(() => Int, { description: 'How many more may start now (never below 0).' })
  available: number;
}

@ObjectType({ description: "A workspace's current use of its limits." })
export class RateLimitUsage {
  @Field(() => RateWindowUsage, { description: 'Read requests (queries, subscriptions, REST GET) in the current 60-second window.' })
  readRequests: RateWindowUsage;

  @Field(() => RateWindowUsage, { description: 'Write requests (mutations, REST POST/PUT/PATCH/DELETE) in the current 60-second window.' })
  writeRequests: RateWindowUsage;

  @Field(() => ConcurrencyUsage)
  concurrentSandboxes: ConcurrencyUsage;

  @Field(() => ConcurrencyUsage)
  concurrentBrowserSessions: ConcurrencyUsage;

  @Field(() => RateWindowUsage, { description: 'AI gateway tokens in the current calendar minute (UTC).' })
  aiTokens: RateWindowUsage;
}

@ObjectType({ description: "A workspace's plan, the limits in force, and its current use of them." })
export class WorkspaceRateLimits {
  @Field(() => ID)
  workspaceId: string;

  @Field(() => WorkspacePlanEnum)
  plan: PlanName;

  @Field(() => RateLimitValues, { description: 'The plan’s limits with the operator’s overrides applied, as of computedAt.' })
  limits: RateLimitValues;

  @Field(() => RateLimitUsage)
  usage: RateLimitUsage;

  @Field(() => String, { description: 'ISO 8601: when the limits were last computed (first read or refresh).' })
  computedAt: string;

  @Field(() => String, { description: 'ISO 8601.' })
  updatedAt: string;
}

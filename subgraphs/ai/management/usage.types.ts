import { ArgsType, Field, Float, ID, Int, ObjectType } from 'type-graphql';

@ObjectType({ description: 'Sums over requests: counts, tokens, cost and mean latencies.' })
export class AiUsageTotals {
  @Field(() => Int)
  requests: number;

  @Field(() => Int, { description: 'Requests answered with a status of 400 or more.' })
  errors: number;

  @Field(() => Float)
  inputTokens: number;

  @Field(() => Float)
  outputTokens: number;

  @Field(() => Float)
  cachedTokens: number;

  @Field(() => Float)
  costUsd: number;

  @Field(() => Float, { nullable: true, description: 'null when there were no requests.' })
  avgLatencyMs: number | null;

  @Field(() => Float, { nullable: true, description: 'Mean time to the first byte; null when no request recorded one.' })
  avgTtfbMs: number | null;
}

@ObjectType({ description: 'The totals of one group: a UTC day (YYYY-MM-DD), a model, a key, an upstream or a pool id.' })
export class AiUsageGroup extends AiUsageTotals {
  @Field(() => String, { nullable: true, description: 'null groups requests without one (no key, no upstream: a platform model keeps its id here).' })
  key: string | null;
}

@ObjectType({ description: 'Usage of a window, in total and by group.' })
export class AiUsageReport {
  @Field(() => String)
  from: string;

  @Field(() => String)
  to: string;

  @Field(() => String, { description: 'day | model | key | upstream | pool | none' })
  groupBy: string;

  @Field(() => AiUsageTotals)
  totals: AiUsageTotals;

  @Field(() => [AiUsageGroup], { description: 'Days in order; other groups by requests, most first. Empty for none.' })
  groups: AiUsageGroup[];
}

@ObjectType({ description: 'Usage of the last minute, counted live by the proxy.' })
export class AiRealtimeUsage {
  @Field(() => Int)
  windowSeconds: number;

  @Field(() => Int)
  requests: number;

  @Field(() => Int)
  errors: number;

  @Field(() => Float)
  inputTokens: number;

  @Field(() => Float)
  outputTokens: number;

  @Field(() => Float)
  cachedTokens: number;

  @Field(() => Float)
  costUsd: number;

  @Field(() => String)
  at: string;
}

@ArgsType()
export class AiUsageArgs {
  @Field(() => ID, { nullable: true, description: "Default: X-Workspace-ID, else the caller's personal workspace." })
  workspaceId?: string | null;

  @Field(() => String, { nullable: true, description: 'ISO 8601; default 30 days before `to`.' })
  from?: string | null;

  @Field(() => String, { nullable: true, description: 'ISO 8601; default now. At most 366 days after from.' })
  to?: string | null;

  @Field(() => String, { nullable: true, description: 'day (default) | model | key | upstream | pool | none' })
  groupBy?: string | null;

  @Field(() => String, { nullable: true })
  model?: string | null;

  @Field(() => ID, { nullable: true })
  keyId?: string | null;

  @Field(() => ID, { nullable: true })
  upstreamId?: string | null;

  @Field(() => ID, { nullable: true })
  poolId?: string | null;
}

@ArgsType()
export class AiRealtimeUsageArgs {
  @Field(() => ID, { nullable: true, description: "Default: X-Workspace-ID, else the caller's personal workspace." })
  workspaceId?: string | null;
}

import { ArgsType, Field, Float, ID, InputType, Int, ObjectType } from 'type-graphql';
import { PageArgs, PaginatedList } from '../../../core/pagination';

@ObjectType({ description: 'One funnel step: an event by name, or a pageview whose path matches (* matches any run of characters).' })
export class AnalyticsFunnelStep {
  @Field(() => String, { description: 'event | page' })
  type: string;

  @Field(() => String, { description: 'Event name, or path pattern such as /pricing or /docs/*.' })
  match: string;

  @Field(() => String, { description: 'Shown in results; default: match.' })
  label: string;
}

@InputType()
export class AnalyticsFunnelStepInput {
  @Field(() => String, { description: 'event | page' })
  type: string;

  @Field(() => String, { description: 'Event name, or path pattern (* matches any run of characters).' })
  match: string;

  @Field(() => String, { nullable: true, description: 'Default: match.' })
  label?: string | null;
}

@ObjectType({ description: 'An ordered series of steps whose conversion is analysed per visitor.' })
export class AnalyticsFunnel {
  @Field(() => ID)
  id: string;

  @Field(() => ID)
  workspaceId: string;

  @Field(() => ID)
  installationId: string;

  @Field(() => String)
  name: string;

  @Field(() => [AnalyticsFunnelStep])
  steps: AnalyticsFunnelStep[];

  @Field(() => Int, { description: 'A visitor converts when each step follows the previous one within this many seconds of the first.' })
  windowSeconds: number;

  @Field(() => ID, { nullable: true })
  createdByUserId: string | null;

  @Field(() => String)
  createdAt: string;

  @Field(() => String)
  updatedAt: string;
}

@ObjectType({ description: 'A page of funnels, newest first.' })
export class AnalyticsFunnelList extends PaginatedList(AnalyticsFunnel) {}

@ObjectType({ description: 'How many visitors reached one step, in order and within the window.' })
export class AnalyticsFunnelStepResult {
  @Field(() => Int, { description: '1-based.' })
  step: number;

  @Field(() => String)
  type: string;

  @Field(() => String)
  match: string;

  @Field(() => String)
  label: string;

  @Field(() => Int)
  visitors: number;

  @Field(() => Float, { nullable: true, description: 'visitors / visitors of the previous step (1 on the first step; null when the previous step has none).' })
  conversionFromPrevious: number | null;

  @Field(() => Float, { nullable: true, description: 'visitors / visitors of the first step (null when it has none).' })
  conversionFromFirst: number | null;

  @Field(() => Float, { nullable: true, description: 'Median seconds from the previous step (null on the first step and when nobody reached it).' })
  medianSecondsFromPrevious: number | null;
}

@ObjectType({ description: "A funnel's conversion, counted from each visitor's first step-1 event in [from, to); later steps count within the window of it, even past `to`." })
export class AnalyticsFunnelAnalysis {
  @Field(() => ID)
  funnelId: string;

  @Field(() => ID)
  installationId: string;

  @Field(() => String)
  from: string;

  @Field(() => String)
  to: string;

  @Field(() => Int)
  windowSeconds: number;

  @Field(() => [AnalyticsFunnelStepResult])
  steps: AnalyticsFunnelStepResult[];

  @Field(() => Float, { nullable: true, description: 'Last step over first step (null when nobody entered).' })
  conversion: number | null;
}

@ArgsType()
export class ListAnalyticsFunnelsArgs extends PageArgs {
  @Field(() => ID, { nullable: true, description: 'Only the funnels of this installation.' })
  installationId?: string | null;

  @Field(() => ID, { nullable: true, description: "Without installationId: X-Workspace-ID, else the caller's personal workspace." })
  workspaceId?: string | null;
}

@ArgsType()
export class AnalyticsFunnelIdArgs {
  @Field(() => ID)
  id: string;
}

@ArgsType()
export class CreateAnalyticsFunnelArgs {
  @Field(() => ID)
  installationId: string;

  @Field(() => String)
  name: string;

  @Field(() => [AnalyticsFunnelStepInput], { description: '2 to 10 steps, in order.' })
  steps: AnalyticsFunnelStepInput[];

  @Field(() => Int, { nullable: true, description: 'From 1 second to 90 days. Default 86400 (a day).' })
  windowSeconds?: number | null;
}

@ArgsType()
export class UpdateAnalyticsFunnelArgs {
  @Field(() => ID)
  id: string;

  @Field(() => String, { nullable: true })
  name?: string | null;

  @Field(() => [AnalyticsFunnelStepInput], { nullable: true, description: 'Replaces the steps: 2 to 10.' })
  steps?: AnalyticsFunnelStepInput[] | null;

  @Field(() => Int, { nullable: true, description: 'From 1 second to 90 days.' })
  windowSeconds?: number | null;
}

@ArgsType()
export class AnalyzeAnalyticsFunnelArgs {
  @Field(() => ID)
  id: string;

  @Field(() => String, { nullable: true, description: 'ISO 8601. Default: 7 days before `to`.' })
  from?: string | null;

  @Field(() => String, { nullable: true, description: 'ISO 8601. Default: now.' })
  to?: string | null;
}

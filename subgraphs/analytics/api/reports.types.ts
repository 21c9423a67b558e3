import { ArgsType, Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { PaginatedList } from '../../../core/pagination';
import { JSONObjectScalar } from '../../../core/scalars';

// ---------------------------------------------------------------- shared

@ArgsType()
export class AnalyticsRangeArgs {
  @Field(() => ID)
  installationId: string;

  @Field(() => String, { nullable: true, description: 'ISO 8601. Default: 7 days before `to`; at most 366 days before it.' })
  from?: string | null;

  @Field(() => String, { nullable: true, description: 'ISO 8601, exclusive. Default: now.' })
  to?: string | null;
}

@ObjectType({ description: 'One recorded event: a pageview, a custom event or an identify call.' })
export class AnalyticsEvent {
  @Field(() => ID)
  eventId: string;

  @Field(() => String)
  at: string;

  @Field(() => String, { description: 'pageview | event | identify' })
  kind: string;

  @Field(() => String, { description: '$pageview, $identify, or the event name.' })
  name: string;

  @Field(() => String, { description: 'Daily-salted hash of the visitor (a decimal integer).' })
  visitorId: string;

  @Field(() => String)
  sessionId: string;

  @Field(() => String, { nullable: true })
  userId: string | null;

  @Field(() => String, { nullable: true })
  hostname: string | null;

  @Field(() => String, { nullable: true })
  path: string | null;

  @Field(() => String, { nullable: true })
  query: string | null;

  @Field(() => String, { nullable: true })
  referrer: string | null;

  @Field(() => String, { nullable: true })
  referrerDomain: string | null;

  @Field(() => String, { nullable: true })
  utmSource: string | null;

  @Field(() => String, { nullable: true })
  utmMedium: string | null;

  @Field(() => String, { nullable: true })
  utmCampaign: string | null;

  @Field(() => String, { nullable: true })
  browser: string | null;

  @Field(() => String, { nullable: true })
  os: string | null;

  @Field(() => String, { nullable: true })
  device: string | null;

  @Field(() => Int, { nullable: true })
  screenWidth: number | null;

  @Field(() => JSONObjectScalar, { nullable: true })
  props: Record<string, unknown> | null;
}

@ObjectType()
export class AnalyticsPageCount {
  @Field(() => String)
  path: string;

  @Field(() => Int)
  pageviews: number;
}

// ---------------------------------------------------------------- dashboard

@ArgsType()
export class AnalyticsRealtimeArgs {
  @Field(() => ID)
  installationId: string;

  @Field(() => Int, { nullable: true, description: 'Top pages to list. Default 10, at most 100.' })
  limit?: number | null;
}

@ObjectType({ description: 'The last 5 minutes.' })
export class AnalyticsRealtime {
  @Field(() => ID)
  installationId: string;

  @Field(() => String)
  at: string;

  @Field(() => Int)
  windowSeconds: number;

  @Field(() => Int, { description: 'Distinct visitors with an event in the window.' })
  visitors: number;

  @Field(() => Int)
  pageviews: number;

  @Field(() => [AnalyticsPageCount])
  topPages: AnalyticsPageCount[];
}

@ArgsType()
export class AnalyticsTimeseriesArgs extends AnalyticsRangeArgs {
  @Field(() => String, { nullable: true, defaultValue: 'day', description: 'minute | hour | day | week | month (UTC; weeks start on Monday).' })
  interval?: string | null;

  @Field(() => String, { nullable: true, defaultValue: 'pageviews', description: 'pageviews | visitors | sessions | events | bounce_rate | visit_duration' })
  metric?: string | null;
}

@ObjectType()
export class AnalyticsTimeseriesBucket {
  @Field(() => String, { description: 'Start of the bucket.' })
  at: string;

  @Field(() => Float, { nullable: true, description: 'Null for bounce_rate and visit_duration in a bucket without sessions.' })
  value: number | null;
}

@ObjectType({ description: 'One metric per bucket, empty buckets included. Sessions count in the bucket they started in.' })
export class AnalyticsTimeseries {
  @Field(() => ID)
  installationId: string;

  @Field(() => String)
  from: string;

  @Field(() => String)
  to: string;

  @Field(() => String)
  interval: string;

  @Field(() => String)
  metric: string;

  @Field(() => [AnalyticsTimeseriesBucket])
  buckets: AnalyticsTimeseriesBucket[];
}

@ArgsType()
export class AnalyticsEventsArgs extends AnalyticsRangeArgs {
  @Field(() => String, { nullable: true, description: 'Exact event name ($pageview for pageviews).' })
  name?: string | null;

  @Field(() => String, { nullable: true, description: 'pageview | event | identify' })
  kind?: string | null;

  @Field(() => String, { nullable: true, description: 'Exact path.' })
  path?: string | null;

  @Field(() => String, { nullable: true })
  visitorId?: string | null;

  @Field(() => String, { nullable: true })
  userId?: string | null;

  @Field(() => Int, { nullable: true, description: '1-based page number. Default 1.' })
  page?: number | null;

  @Field(() => Int, { nullable: true, description: 'Items per page. Default 50, at most 500.' })
  limit?: number | null;
}

@ObjectType({ description: 'A page of events, newest first.' })
export class AnalyticsEventList extends PaginatedList(AnalyticsEvent) {}

// ---------------------------------------------------------------- stats

@ArgsType()
export class AnalyticsStatsArgs extends AnalyticsRangeArgs {
  @Field(() => Int, { nullable: true, description: 'Entries of each top list. Default 10, at most 100.' })
  limit?: number | null;
}

@ObjectType({ description: 'Sessions (visits) sharing one value; sessions without a value are left out.' })
export class AnalyticsBreakdownItem {
  @Field(() => String)
  value: string;

  @Field(() => Int)
  sessions: number;
}

@ObjectType({ description: 'Totals and top lists of a window. Sessions count when they started in it; pageviews when they happened in it.' })
export class AnalyticsStats {
  @Field(() => ID)
  installationId: string;

  @Field(() => String)
  from: string;

  @Field(() => String)
  to: string;

  @Field(() => Int)
  pageviews: number;

  @Field(() => Int, { description: 'Distinct visitors of the sessions.' })
  visitors: number;

  @Field(() => Int)
  sessions: number;

  @Field(() => Float, { nullable: true, description: 'Sessions with at most one pageview / sessions (null without sessions).' })
  bounceRate: number | null;

  @Field(() => Float, { nullable: true, description: 'Average seconds from the first to the last event of a session.' })
  visitDurationSeconds: number | null;

  @Field(() => [AnalyticsPageCount])
  topPages: AnalyticsPageCount[];

  @Field(() => [AnalyticsBreakdownItem], { description: 'By referrer domain.' })
  referrers: AnalyticsBreakdownItem[];

  @Field(() => [AnalyticsBreakdownItem])
  utmSources: AnalyticsBreakdownItem[];

  @Field(() => [AnalyticsBreakdownItem])
  browsers: AnalyticsBreakdownItem[];

  @Field(() => [AnalyticsBreakdownItem])
  operatingSystems: AnalyticsBreakdownItem[];

  @Field(() => [AnalyticsBreakdownItem])
  devices: AnalyticsBreakdownItem[];
}

// ---------------------------------------------------------------- trajectory

@ArgsType()
export class AnalyticsTrajectoryArgs extends AnalyticsRangeArgs {
  @Field(() => String, { nullable: true, description: 'Exactly one of visitorId and userId.' })
  visitorId?: string | null;

  @Field(() => String, { nullable: true })
  userId?: string | null;

  @Field(() => Int, { nullable: true, description: 'Most events. Default 500, at most 500.' })
  limit?: number | null;
}

@ObjectType({ description: "One visit's events, oldest first." })
export class AnalyticsTrajectorySession {
  @Field(() => String)
  sessionId: string;

  @Field(() => String)
  visitorId: string;

  @Field(() => String, { description: 'Its first event in the window.' })
  startedAt: string;

  @Field(() => String, { description: 'Its last event in the window.' })
  endedAt: string;

  @Field(() => [AnalyticsEvent])
  events: AnalyticsEvent[];
}

@ObjectType({ description: 'The events of one visitor or user in order, grouped into visits.' })
export class AnalyticsTrajectory {
  @Field(() => ID)
  installationId: string;

  @Field(() => String, { nullable: true })
  visitorId: string | null;

  @Field(() => String, { nullable: true })
  userId: string | null;

  @Field(() => String)
  from: string;

  @Field(() => String)
  to: string;

  @Field(() => Int)
  events: number;

  @Field(() => Boolean, { description: 'More events than `limit` fell in the window: the oldest `limit` are shown.' })
  truncated: boolean;

  @Field(() => [AnalyticsTrajectorySession])
  sessions: AnalyticsTrajectorySession[];
}

// ---------------------------------------------------------------- users

@ArgsType()
export class AnalyticsUsersArgs extends AnalyticsRangeArgs {
  @Field(() => Int, { nullable: true, description: '1-based page number. Default 1.' })
  page?: number | null;

  @Field(() => Int, { nullable: true, description: 'Items per page. Default 20, at most 100.' })
  limit?: number | null;
}

@ObjectType({ description: 'A user identified by the site (POST /analytics/identify).' })
export class AnalyticsUser {
  @Field(() => String)
  userId: string;

  @Field(() => JSONObjectScalar)
  traits: Record<string, unknown>;

  @Field(() => String)
  firstSeenAt: string;

  @Field(() => String)
  lastSeenAt: string;

  @Field(() => Int, { description: 'Events of the user in the window.' })
  events: number;
}

@ObjectType({ description: 'Users seen in the window, most recently seen first.' })
export class AnalyticsUserList extends PaginatedList(AnalyticsUser) {}

@ArgsType()
export class AnalyticsUserProfileArgs extends AnalyticsRangeArgs {
  @Field(() => String)
  userId: string;

  @Field(() => Int, { nullable: true, description: 'Recent events to list. Default 50, at most 500.' })
  limit?: number | null;
}

@ObjectType()
export class AnalyticsUserProfile {
  @Field(() => ID)
  installationId: string;

  @Field(() => String)
  userId: string;

  @Field(() => JSONObjectScalar)
  traits: Record<string, unknown>;

  @Field(() => String)
  firstSeenAt: string;

  @Field(() => String)
  lastSeenAt: string;

  @Field(() => String)
  from: string;

  @Field(() => String)
  to: string;

  @Field(() => Int, { description: 'Sessions with an event of the user in the window.' })
  sessions: number;

  @Field(() => Int, { description: 'Events of the user in the window.' })
  events: number;

  @Field(() => [AnalyticsEvent], { description: 'Newest first.' })
  recentEvents: AnalyticsEvent[];
}

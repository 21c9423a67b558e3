import type { RequestContext } from '../../../core/context';
import { NotFoundError, ValidationError } from '../../../core/errors';
import { pageResult, toPage, type PageResult } from '../../../core/pagination';
import type { InstallationService } from './installations.service';
import { toEvent, toUser } from './mapper';
import { BREAKDOWNS, INTERVALS, METRICS, type EventRow, type Interval, type Metric, type ReportRepository, type Window } from './reports.repository';
import type {
  AnalyticsEvent,
  AnalyticsEventsArgs,
  AnalyticsRealtime,
  AnalyticsRealtimeArgs,
  AnalyticsStats,
  AnalyticsStatsArgs,
  AnalyticsTimeseries,
  AnalyticsTimeseriesArgs,
  AnalyticsTrajectory,
  AnalyticsTrajectoryArgs,
  AnalyticsTrajectorySession,
  AnalyticsUser,
  AnalyticsUserProfile,
  AnalyticsUserProfileArgs,
  AnalyticsUsersArgs,
} from './reports.types';
import { limitOf, optionalFilter, optionalKind, pageOf, parseVisitorId, reportRange } from './validation';

/** The realtime view's window. */
export const REALTIME_SECONDS = 300;
/** Most buckets of one timeseries (a day by the minute fits). */
export const MAX_BUCKETS = 1500;
export const MAX_TOP_LIMIT = 100;
export const MAX_EVENT_LIMIT = 500;

/**
 * Dashboards and reports of one installation, read with the viewer role in its workspace (an
 * installation the caller may not read is 404). Each takes a window [from, to), 7 days by default.
 */
export class ReportService {
  constructor(
    private readonly installations: InstallationService,
    private readonly reports: ReportRepository,
  ) {}

  /** The checked window of a report and its installation, read with the viewer role (inputs are checked first: 400 before 404). */
  private async window(ctx: RequestContext, installationId: string, range: { from: Date; to: Date }): Promise<Window> {
    const installation = await this.installations.load(ctx, installationId, 'viewer');
    return { installationId: installation.id, from: range.from, to: range.to };
  }

  async realtime(ctx: RequestContext, args: AnalyticsRealtimeArgs): Promise<AnalyticsRealtime> {
    const limit = limitOf(args.limit, 10, MAX_TOP_LIMIT);
    const to = new Date();
    const w = await this.window(ctx, args.installationId, { from: new Date(to.getTime() - REALTIME_SECONDS * 1000), to });
    const [visitors, top] = await Promise.all([this.reports.visitors(w), this.reports.topPages(w, limit)]);
    return { installationId: w.installationId, at: to.toISOString(), windowSeconds: REALTIME_SECONDS, visitors, pageviews: top.pageviews, topPages: top.pages };
  }

  async timeseries(ctx: RequestContext, args: AnalyticsTimeseriesArgs): Promise<AnalyticsTimeseries> {
    const interval = oneOf(args.interval ?? 'day', INTERVALS, 'interval');
    const metric = oneOf(args.metric ?? 'pageviews', METRICS, 'metric');
    const range = reportRange(args);
    const buckets = bucketStarts(range.from, range.to, interval);
    const w = await this.window(ctx, args.installationId, range);
    const rows = await this.reports.timeseries(w, interval, metric, buckets);
    return {
      installationId: w.installationId,
      from: w.from.toISOString(),
      to: w.to.toISOString(),
      interval,
      metric,
      buckets: rows.map((r) => ({ at: new Date(r.at).toISOString(), value: r.value === null ? null : Number(r.value) })),
    };
  }

  async events(ctx: RequestContext, args: AnalyticsEventsArgs): Promise<PageResult<AnalyticsEvent>> {
    const page = pageOf(args, 50, MAX_EVENT_LIMIT);
    const filter = {
      name: optionalFilter(args.name, 'name'),
      kind: optionalKind(args.kind),
      path: optionalFilter(args.path, 'path'),
      visitorId: parseVisitorId(args.visitorId),
      userId: optionalFilter(args.userId, 'userId'),
    };
    const w = await this.window(ctx, args.installationId, reportRange(args));
    const { rows, total } = await this.reports.events({ ...w, ...filter }, page.limit, page.offset);
    return pageResult(rows.map(toEvent), total, page);
  }

  async stats(ctx: RequestContext, args: AnalyticsStatsArgs): Promise<AnalyticsStats> {
    const limit = limitOf(args.limit, 10, MAX_TOP_LIMIT);
    const w = await this.window(ctx, args.installationId, reportRange(args));
    // Independent reads (session totals, their breakdowns, pageviews), on separate connections at once.
    const [{ totals: sessions, breakdowns }, pages] = await Promise.all([this.reports.sessionStats(w, limit), this.reports.topPages(w, limit)]);
    const lists = Object.fromEntries(BREAKDOWNS.map((b) => [b, breakdowns.filter((r) => r.dimension === b).map(({ value, sessions: count }) => ({ value, sessions: count }))]));
    return {
      installationId: w.installationId,
      from: w.from.toISOString(),
      to: w.to.toISOString(),
      pageviews: pages.pageviews,
      visitors: sessions.visitors,
      sessions: sessions.sessions,
      bounceRate: sessions.sessions ? sessions.bounces / sessions.sessions : null,
      visitDurationSeconds: sessions.durationSeconds === null ? null : Number(sessions.durationSeconds),
      topPages: pages.pages,
      referrers: lists.referrers,
      utmSources: lists.utmSources,
      browsers: lists.browsers,
      operatingSystems: lists.operatingSystems,
      devices: lists.devices,
    };
  }

  /** The events of exactly one visitor or user, oldest first, split where the session changes. */
  async trajectory(ctx: RequestContext, args: AnalyticsTrajectoryArgs): Promise<AnalyticsTrajectory> {
    const visitorId = parseVisitorId(args.visitorId);
    const userId = optionalFilter(args.userId, 'userId');
    if ((visitorId === undefined) === (userId === undefined)) throw new ValidationError('Give exactly one of visitorId and userId', { field: visitorId === undefined ? 'visitorId' : 'userId' });
    const limit = limitOf(args.limit, MAX_EVENT_LIMIT, MAX_EVENT_LIMIT);
    const w = await this.window(ctx, args.installationId, reportRange(args));
    const rows = await this.reports.trajectory(w, { visitorId, userId }, limit + 1);
    const shown = rows.slice(0, limit);
    return {
      installationId: w.installationId,
      visitorId: visitorId ?? null,
      userId: userId ?? null,
      from: w.from.toISOString(),
      to: w.to.toISOString(),
      events: shown.length,
      truncated: rows.length > limit,
      sessions: bySession(shown),
    };
  }

  async users(ctx: RequestContext, args: AnalyticsUsersArgs): Promise<PageResult<AnalyticsUser>> {
    const page = toPage(args);
    const w = await this.window(ctx, args.installationId, reportRange(args));
    const { rows, total } = await this.reports.users(w, page.limit, page.offset);
    return pageResult(rows.map(toUser), total, page);
  }

  async userProfile(ctx: RequestContext, args: AnalyticsUserProfileArgs): Promise<AnalyticsUserProfile> {
    const userId = optionalFilter(args.userId, 'userId');
    if (userId === undefined) throw new ValidationError('userId is required', { field: 'userId' });
    const limit = limitOf(args.limit, 50, MAX_EVENT_LIMIT);
    const w = await this.window(ctx, args.installationId, reportRange(args));
    const user = await this.reports.user(w.installationId, userId);
    if (!user) throw new NotFoundError('User', userId);
    const activity = await this.reports.userActivity(w, userId, limit);
    const { traits, firstSeenAt, lastSeenAt } = toUser(user);
    return {
      installationId: w.installationId,
      userId,
      traits,
      firstSeenAt,
      lastSeenAt,
      from: w.from.toISOString(),
      to: w.to.toISOString(),
      sessions: activity.sessions,
      events: activity.events,
      recentEvents: activity.recent.map(toEvent),
    };
  }
}

function oneOf<T extends string>(value: string, allowed: readonly T[], field: string): T {
  if (!(allowed as readonly string[]).includes(value)) throw new ValidationError(`${field} must be one of ${allowed.join(', ')}`, { field });
  return value as T;
}

const FIXED_MS: Record<Exclude<Interval, 'month'>, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000, week: 7 * 86_400_000 };

/** Start of the UTC bucket holding `t`, cut as PostgreSQL's date_trunc cuts it (weeks start on Monday). */
export function bucketStart(t: Date, interval: Interval): Date {
  const d = new Date(t.getTime());
  if (interval === 'month') return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
  if (interval === 'week') {
    const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    return new Date(day - ((d.getUTCDay() + 6) % 7) * FIXED_MS.day);
  }
  const step = FIXED_MS[interval];
  return new Date(Math.floor(d.getTime() / step) * step);
}

/** Starts of the buckets from the one holding `from` to the one holding the last instant before `to`; 400 past MAX_BUCKETS. */
export function bucketStarts(from: Date, to: Date, interval: Interval): Date[] {
  const first = bucketStart(from, interval);
  const last = bucketStart(new Date(to.getTime() - 1), interval);
  const count =
    interval === 'month'
      ? (last.getUTCFullYear() - first.getUTCFullYear()) * 12 + last.getUTCMonth() - first.getUTCMonth() + 1
      : Math.round((last.getTime() - first.getTime()) / FIXED_MS[interval]) + 1;
  if (count > MAX_BUCKETS) throw new ValidationError(`from..to holds ${count} buckets of a ${interval}; at most ${MAX_BUCKETS}: use a longer interval or a shorter window`, { field: 'interval' });
  return Array.from({ length: count }, (_, i) =>
    interval === 'month' ? new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth() + i, 1)) : new Date(first.getTime() + i * FIXED_MS[interval]),
  );
}

function bySession(rows: EventRow[]): AnalyticsTrajectorySession[] {
  const sessions: AnalyticsTrajectorySession[] = [];
  for (const row of rows) {
    const event = toEvent(row);
    const current = sessions[sessions.length - 1];
    if (current && current.sessionId === event.sessionId) {
      current.events.push(event);
      current.endedAt = event.at;
    } else {
      sessions.push({ sessionId: event.sessionId, visitorId: event.visitorId, startedAt: event.at, endedAt: event.at, events: [event] });
    }
  }
  return sessions;
}

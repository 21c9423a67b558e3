import type { DataSource } from 'typeorm';
import { preparedQuery } from '../../../core/database';
import { BREAKDOWN_GROUPING, ROLLED_DIMENSIONS, SESSION_AGGREGATES } from '../rollup/session-days';
import { reportQuery } from './report-query';

/**
 * Reads of `analytics.events`, `analytics.sessions` and `analytics.users` (SQL only: the events
 * table is partitioned by month). Every query bounds `ts` or `started_at` to a window, so it
 * runs on the (installation_id, ts) family of indexes and touches only the partitions in it.
 * Session totals and breakdowns read the daily rollup and the sessions table (one row per visit,
 * kept by the writer); pageview counts and page lists read the page_hours rollup and the events.
 */

export interface EventRow {
  ts: Date;
  event_id: string;
  kind: string;
  name: string;
  visitor_id: string;
  session_id: string;
  user_id: string | null;
  hostname: string | null;
  path: string | null;
  query: string | null;
  referrer: string | null;
  referrer_domain: string | null;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  browser: string | null;
  os: string | null;
  device: string | null;
  screen_width: number | null;
  props: Record<string, unknown> | null;
}

export interface UserRow {
  user_id: string;
  traits: Record<string, unknown>;
  first_seen_at: Date;
  last_seen_at: Date;
  events?: number;
}

export interface Window {
  installationId: string;
  from: Date;
  to: Date;
}

export interface EventFilter extends Window {
  name?: string;
  kind?: string;
  path?: string;
  visitorId?: string;
  userId?: string;
}

export interface PageCountRow {
  path: string;
  pageviews: number;
}

export interface SessionTotals {
  sessions: number;
  visitors: number;
  bounces: number;
  durationSeconds: number | null;
}

export const BREAKDOWNS = ['referrers', 'utmSources', 'browsers', 'operatingSystems', 'devices'] as const;
export type Breakdown = (typeof BREAKDOWNS)[number];

export interface BreakdownRow {
  dimension: Breakdown;
  value: string;
  sessions: number;
}

export const INTERVALS = ['minute', 'hour', 'day', 'week', 'month'] as const;
export type Interval = (typeof INTERVALS)[number];
export const METRICS = ['pageviews', 'visitors', 'sessions', 'events', 'bounce_rate', 'visit_duration'] as const;
export type Metric = (typeof METRICS)[number];

/** Width of each fixed bucket, for date_bin. */
const STRIDES: Record<Exclude<Interval, 'month'>, string> = { minute: '1 minute', hour: '1 hour', day: '1 day', week: '7 days' };

const EVENT_COLUMNS = `ts, event_id, kind, name, visitor_id, session_id, user_id, hostname, path, query, referrer, referrer_domain,
  utm_source, utm_medium, utm_campaign, browser, os, device, screen_width, props`;

// The rollup's breakdowns (and their columns, BREAKDOWN_GROUPING) are the stats' breakdowns: checked when compiling.
ROLLED_DIMENSIONS satisfies Record<Breakdown, string>;

/** Where each metric comes from and how a bucket's value is computed; fixed strings, never caller input. */
const METRIC_SQL: Record<Metric, { table: 'events' | 'sessions'; where: string; value: string }> = {
  pageviews: { table: 'events', where: `name = '$pageview'`, value: 'count(*)::float8' },
  events: { table: 'events', where: `kind = 'event'`, value: 'count(*)::float8' },
  visitors: { table: 'sessions', where: 'true', value: 'count(DISTINCT visitor_id)::float8' },
  sessions: { table: 'sessions', where: 'true', value: 'count(*)::float8' },
  bounce_rate: { table: 'sessions', where: 'true', value: 'avg((pageviews <= 1)::int)::float8' },
  visit_duration: { table: 'sessions', where: 'true', value: 'avg(EXTRACT(EPOCH FROM last_seen_at - started_at))::float8' },
};

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/**
 * The whole hours [first, last) inside a window, for the page_hours rollup; the events cover
 * [from, first) and [last, to). A window inside one hour has none (first = last = to, so the
 * events cover all of it).
 */
function wholeHours(w: Window): [Date, Date] {
  const first = Math.ceil(w.from.getTime() / HOUR_MS) * HOUR_MS;
  const last = Math.floor(w.to.getTime() / HOUR_MS) * HOUR_MS;
  if (first >= last) return [w.to, w.to];
  return [new Date(first), new Date(last)];
}

/**
 * The window's pageviews as rows (`path` or time `t`, count `n`): whole hours from the page_hours
 * rollup, the partial hours at either end from the events. Parameters: $1 installation, $2 from,
 * $3 to, $5 and $6 the whole hours (wholeHours).
 */
function pageviewParts(by: 'path' | 't'): string {
  return `SELECT ${by === 'path' ? `NULLIF(path, '') AS path` : 'hour AS t'}, sum(pageviews)::float8 AS n
            FROM "analytics"."page_hours"
           WHERE installation_id = $1 AND hour >= $5 AND hour < $6
           GROUP BY 1
          UNION ALL
          SELECT ${by === 'path' ? 'path' : 'ts AS t'}, count(*)::float8 AS n
            FROM "analytics"."events"
           WHERE installation_id = $1 AND name = '$pageview' AND ((ts >= $2 AND ts < $5) OR (ts >= $6 AND ts < $3))
           GROUP BY 1`;
}

export class ReportRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Distinct visitors with an event in the window. */
  async visitors(w: Window): Promise<number> {
    const [row] = await this.dataSource.query(
      `SELECT count(DISTINCT visitor_id)::int AS visitors FROM "analytics"."events" WHERE installation_id = $1 AND ts >= $2 AND ts < $3`,
      [w.installationId, w.from, w.to],
    );
    return row.visitors;
  }

  /**
   * The most viewed paths of a window and, from the same scan, the window's pageviews: whole hours
   * from the page_hours rollup, the partial hours at either end from the events.
   */
  async topPages(w: Window, limit: number): Promise<{ pageviews: number; pages: PageCountRow[] }> {
    const [first, last] = wholeHours(w);
    const rows = await reportQuery<PageCountRow & { total: string }>(
      this.dataSource,
      `WITH parts AS (${pageviewParts('path')})
       SELECT path, sum(n)::int AS pageviews, sum(sum(n)) OVER () AS total
         FROM parts
        GROUP BY path
        ORDER BY path IS NULL, pageviews DESC, path
        LIMIT $4`,
      [w.installationId, w.from, w.to, limit, first, last],
    );
    return { pageviews: Number(rows[0]?.total ?? 0), pages: rows.filter((r) => r.path !== null).map(({ path, pageviews }) => ({ path, pageviews })) };
  }

  /**
   * Totals and top breakdown values of the sessions that started in the window. Whole UTC days
   * whose rollup is current (session_days, rollup/session-days.ts) are read from it; the rest of
   * the window (its partial days at either end, days written since their rollup) from the
   * sessions. Visitors are summed per day: visitor ids change with the daily salt, so one person
   * on two days is two visitor ids either way.
   */
  async sessionStats(w: Window, limit: number): Promise<{ totals: SessionTotals; breakdowns: BreakdownRow[] }> {
    const { days, gaps } = await this.sessionCoverage(w);
    const [totals, breakdowns] = await Promise.all([this.sessionTotals(w.installationId, days, gaps), this.breakdowns(w.installationId, days, gaps, limit)]);
    return { totals, breakdowns };
  }

  /** The window's whole days with a current rollup, and the ranges left to read from the sessions (as two arrays: starts, ends). */
  private async sessionCoverage(w: Window): Promise<{ days: string[]; gaps: [Date[], Date[]] }> {
    const firstDay = Math.ceil(w.from.getTime() / DAY_MS) * DAY_MS;
    const lastDay = Math.floor(w.to.getTime() / DAY_MS) * DAY_MS;
    const rolled: Array<{ day: Date }> =
      firstDay < lastDay
        ? await preparedQuery(
            this.dataSource,
            'analytics_report_rolled_days',
            `SELECT (day::timestamp AT TIME ZONE 'UTC') AS day FROM analytics.session_day_writes
              WHERE installation_id = $1 AND day >= ($2::timestamptz AT TIME ZONE 'UTC')::date AND day < ($3::timestamptz AT TIME ZONE 'UTC')::date AND rolled_writes = writes
              ORDER BY day`,
            [w.installationId, new Date(firstDay), new Date(lastDay)],
          )
        : [];
    const starts: Date[] = [];
    const ends: Date[] = [];
    let cursor = w.from.getTime();
    for (const { day } of rolled) {
      const start = day.getTime();
      if (start > cursor) {
        starts.push(new Date(cursor));
        ends.push(day);
      }
      cursor = start + DAY_MS;
    }
    if (cursor < w.to.getTime()) {
      starts.push(new Date(cursor));
      ends.push(w.to);
    }
    return { days: rolled.map(({ day }) => day.toISOString().slice(0, 10)), gaps: [starts, ends] };
  }

  /** Sessions, visitors (summed per day), bounces (at most one pageview) and mean duration, from the rollup's days and the sessions of the gaps. */
  private async sessionTotals(installationId: string, days: string[], [starts, ends]: [Date[], Date[]]): Promise<SessionTotals> {
    const [row] = await reportQuery<SessionTotals>(
      this.dataSource,
      `WITH parts AS (
         SELECT sessions, visitors, bounces, duration_seconds
           FROM analytics.session_days
          WHERE installation_id = $1 AND day = ANY($2::date[]) AND dimension = ''
         UNION ALL
         SELECT ${SESSION_AGGREGATES}
           FROM analytics.sessions s
           JOIN unnest($3::timestamptz[], $4::timestamptz[]) AS r(lo, hi) ON s.started_at >= r.lo AND s.started_at < r.hi
          WHERE s.installation_id = $1
          GROUP BY date_trunc('day', s.started_at AT TIME ZONE 'UTC')
       )
       SELECT COALESCE(sum(sessions), 0)::int AS sessions, COALESCE(sum(visitors), 0)::int AS visitors, COALESCE(sum(bounces), 0)::int AS bounces,
              (sum(duration_seconds) / NULLIF(sum(sessions), 0))::float8 AS "durationSeconds"
         FROM parts`,
      [installationId, days, starts, ends],
    );
    return row;
  }

  /**
   * Top values of each breakdown: the rollup's days plus one scan of the gaps' sessions (GROUPING
   * SETS, one set per column, hashed); sessions without a value are left out, `limit` per breakdown.
   */
  private breakdowns(installationId: string, days: string[], [starts, ends]: [Date[], Date[]], limit: number): Promise<BreakdownRow[]> {
    return reportQuery<BreakdownRow>(
      this.dataSource,
      `WITH parts AS (
         SELECT dimension, value, sum(sessions)::bigint AS n
           FROM analytics.session_days
          WHERE installation_id = $1 AND day = ANY($2::date[]) AND dimension <> ''
          GROUP BY 1, 2
         UNION ALL
         SELECT ${BREAKDOWN_GROUPING.dimension}, ${BREAKDOWN_GROUPING.value}, count(*)
           FROM analytics.sessions s
           JOIN unnest($3::timestamptz[], $4::timestamptz[]) AS r(lo, hi) ON s.started_at >= r.lo AND s.started_at < r.hi
          WHERE s.installation_id = $1
          GROUP BY GROUPING SETS (${BREAKDOWN_GROUPING.sets})
       )
       SELECT dimension, value, sessions FROM (
         SELECT dimension, value, sum(n)::int AS sessions, row_number() OVER (PARTITION BY dimension ORDER BY sum(n) DESC, value) AS rank
           FROM parts
          WHERE value IS NOT NULL
          GROUP BY 1, 2
       ) ranked
       WHERE rank <= $5
       ORDER BY dimension, rank`,
      [installationId, days, starts, ends, limit],
    );
  }

  /**
   * One value per bucket start of `buckets` (UTC), zero or null where nothing happened: the
   * window's rows are grouped by bucket first (date_bin for fixed widths, cheaper per row than
   * date_trunc; weeks from a Monday), then joined to the buckets.
   */
  timeseries(w: Window, interval: Interval, metric: Metric, buckets: Date[]): Promise<Array<{ at: Date; value: number | null }>> {
    if (metric === 'pageviews' && interval !== 'minute') return this.pageviewSeries(w, interval, buckets);
    const m = METRIC_SQL[metric];
    const time = m.table === 'events' ? 'ts' : 'started_at';
    const bucket = interval === 'month' ? `date_trunc('month', ${time} AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'` : `date_bin('${STRIDES[interval]}', ${time}, '2000-01-03T00:00:00Z')`;
    const empty = metric === 'bounce_rate' || metric === 'visit_duration' ? 'NULL' : '0';
    return reportQuery(
      this.dataSource,
      `WITH grouped AS (
         SELECT ${bucket} AS bucket, ${m.value} AS value
           FROM "analytics"."${m.table}"
          WHERE installation_id = $1 AND ${time} >= $2 AND ${time} < $3 AND ${m.where}
          GROUP BY 1
       )
       SELECT b.at, COALESCE(grouped.value, ${empty}) AS value
         FROM unnest($4::timestamptz[]) AS b(at)
         LEFT JOIN grouped ON grouped.bucket = b.at
        ORDER BY b.at`,
      [w.installationId, w.from, w.to, buckets],
    );
  }

  /** Pageviews per bucket of an hour or more: whole hours from page_hours, the partial hours at either end from the events. */
  private pageviewSeries(w: Window, interval: Interval, buckets: Date[]): Promise<Array<{ at: Date; value: number | null }>> {
    const [first, last] = wholeHours(w);
    const bucket = interval === 'month' ? `date_trunc('month', t AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'` : `date_bin('${STRIDES[interval]}', t, '2000-01-03T00:00:00Z')`;
    return reportQuery(
      this.dataSource,
      `WITH parts AS (${pageviewParts('t')}), grouped AS (
         SELECT ${bucket} AS bucket, sum(n) AS value FROM parts GROUP BY 1
       )
       SELECT b.at, COALESCE(grouped.value, 0) AS value
         FROM unnest($4::timestamptz[]) AS b(at)
         LEFT JOIN grouped ON grouped.bucket = b.at
        ORDER BY b.at`,
      [w.installationId, w.from, w.to, buckets, first, last],
    );
  }

  /** Events of the window matching the filter, newest first, and how many match. */
  async events(f: EventFilter, limit: number, offset: number): Promise<{ rows: EventRow[]; total: number }> {
    const params: unknown[] = [f.installationId, f.from, f.to];
    const where = ['installation_id = $1', 'ts >= $2', 'ts < $3'];
    for (const [column, value] of [['name', f.name], ['kind', f.kind], ['path', f.path], ['visitor_id', f.visitorId], ['user_id', f.userId]] as const) {
      if (value === undefined) continue;
      params.push(value);
      where.push(`${column} = $${params.length}`);
    }
    const [rows, [count]] = await Promise.all([
      this.dataSource.query(
        `SELECT ${EVENT_COLUMNS} FROM "analytics"."events" WHERE ${where.join(' AND ')}
          ORDER BY ts DESC, event_id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
        [...params, limit, offset],
      ),
      this.dataSource.query(`SELECT count(*)::int AS total FROM "analytics"."events" WHERE ${where.join(' AND ')}`, params),
    ]);
    return { rows, total: count.total };
  }

  /** The first `limit` events of one visitor or one user in the window, oldest first. */
  trajectory(w: Window, who: { visitorId?: string; userId?: string }, limit: number): Promise<EventRow[]> {
    const column = who.visitorId !== undefined ? 'visitor_id' : 'user_id';
    return this.dataSource.query(
      `SELECT ${EVENT_COLUMNS} FROM "analytics"."events"
        WHERE installation_id = $1 AND ${column} = $2 AND ts >= $3 AND ts < $4
        ORDER BY ts, event_id
        LIMIT $5`,
      [w.installationId, who.visitorId ?? who.userId, w.from, w.to, limit],
    );
  }

  /** Users seen in the window (first seen before its end, last seen after its start), most recently seen first, with their events in it. */
  async users(w: Window, limit: number, offset: number): Promise<{ rows: UserRow[]; total: number }> {
    const params = [w.installationId, w.from, w.to];
    const seen = 'installation_id = $1 AND last_seen_at >= $2 AND first_seen_at < $3';
    const [rows, [count]] = await Promise.all([
      this.dataSource.query(
        `SELECT u.user_id, u.traits, u.first_seen_at, u.last_seen_at, c.events
           FROM (SELECT installation_id, user_id, traits, first_seen_at, last_seen_at
                   FROM "analytics"."users" WHERE ${seen}
                  ORDER BY last_seen_at DESC, user_id LIMIT $4 OFFSET $5) u
          CROSS JOIN LATERAL (
            SELECT count(*)::int AS events FROM "analytics"."events" e
             WHERE e.installation_id = u.installation_id AND e.user_id = u.user_id AND e.ts >= $2 AND e.ts < $3
          ) c
          ORDER BY u.last_seen_at DESC, u.user_id`,
        [...params, limit, offset],
      ),
      this.dataSource.query(`SELECT count(*)::int AS total FROM "analytics"."users" WHERE ${seen}`, params),
    ]);
    return { rows, total: count.total };
  }

  async user(installationId: string, userId: string): Promise<UserRow | null> {
    const [row] = await this.dataSource.query(
      `SELECT user_id, traits, first_seen_at, last_seen_at FROM "analytics"."users" WHERE installation_id = $1 AND user_id = $2`,
      [installationId, userId],
    );
    return row ?? null;
  }

  /** A user's events and sessions in the window, and the newest `limit` events. */
  async userActivity(w: Window, userId: string, limit: number): Promise<{ events: number; sessions: number; recent: EventRow[] }> {
    const params = [w.installationId, userId, w.from, w.to];
    const where = 'installation_id = $1 AND user_id = $2 AND ts >= $3 AND ts < $4';
    const [[counts], recent] = await Promise.all([
      this.dataSource.query(`SELECT count(*)::int AS events, count(DISTINCT session_id)::int AS sessions FROM "analytics"."events" WHERE ${where}`, params),
      this.dataSource.query(`SELECT ${EVENT_COLUMNS} FROM "analytics"."events" WHERE ${where} ORDER BY ts DESC, event_id DESC LIMIT $5`, [...params, limit]),
    ]);
    return { events: counts.events, sessions: counts.sessions, recent };
  }
}

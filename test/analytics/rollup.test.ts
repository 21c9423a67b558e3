import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { openSubgraphDatabase } from '../../core/database';
import { ID_PREFIX, newId } from '../../core/ids';
import type { Logger } from '../../core/logger';
import { analyticsSubgraph } from '../../subgraphs/analytics';
import { ReportRepository } from '../../subgraphs/analytics/api/reports.repository';
import { resolveIngestOptions } from '../../subgraphs/analytics/ingest/options';
import { createPartitionKeeper } from '../../subgraphs/analytics/ingest/partitions';
import type { IngestEvent } from '../../subgraphs/analytics/ingest/payload';
import { createEventWriter, type AcceptedVisit, type EventWriter } from '../../subgraphs/analytics/ingest/writer';
import { createSessionDayRoller, type SessionDayRoller } from '../../subgraphs/analytics/rollup/session-days';
import { createTestDatabase, eventually, type TestDatabase } from '../services';

/*
 * The daily sessions rollup: the writer marks the days it writes, the roller rebuilds them, and the
 * stats read whole current days from it and everything else from the sessions. Every check
 * compares the stats with the same figures computed from the sessions alone.
 */

let database: TestDatabase;
let dataSource: DataSource;
let writer: EventWriter;
let roller: SessionDayRoller;
let reports: ReportRepository;
const errors: unknown[] = [];
const logger: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: (_message, fields) => void errors.push(fields), child: () => logger };

const DAY_MS = 86_400_000;
/** Two days ago, midnight UTC: the days under test are D-1, D and D+1 (yesterday). */
const D = Math.floor(Date.now() / DAY_MS) * DAY_MS - 2 * DAY_MS;
const at = (day: number, hours: number, minutes = 0): number => D + day * DAY_MS + hours * 3_600_000 + minutes * 60_000;
const iso = (ms: number): Date => new Date(ms);
const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

let eventSeq = 0;
const pageview = (ts: number, path: string, referrerDomain: string | null = null): IngestEvent => ({
  kind: 'pageview',
  id: `rollup-${++eventSeq}`,
  name: '$pageview',
  ts,
  url: { hostname: 'site.example', path, query: null, utmSource: referrerDomain ? 'campaign' : null, utmMedium: null, utmCampaign: null },
  referrer: referrerDomain ? `https://${referrerDomain}/` : null,
  referrerDomain,
  screenWidth: null,
  userId: null,
  props: null,
  traits: null,
});

function visit(installationId: string, visitorId: string, sessionId: string, events: IngestEvent[], browser = 'Chrome'): AcceptedVisit {
  return { installationId, visitorId, sessionId, userId: null, browser, os: 'Linux', device: 'desktop', events };
}

async function install(): Promise<string> {
  const id = newId(ID_PREFIX.installation);
  await dataSource.query(`INSERT INTO analytics.installations (id, workspace_id, name, domains, public_key) VALUES ($1, 'ws_rollup', 'rollup test', $2, $3)`, [
    id,
    ['site.example'],
    newId('pk', 24),
  ]);
  return id;
}

/** The stats' session figures computed from the sessions alone (visitors counted per UTC day), for comparison. */
async function fromSessions(installationId: string, from: number, to: number) {
  const [totals] = await dataSource.query(
    `SELECT COALESCE(sum(n), 0)::int AS sessions, COALESCE(sum(v), 0)::int AS visitors, COALESCE(sum(b), 0)::int AS bounces, (sum(d) / NULLIF(sum(n), 0))::float8 AS "durationSeconds"
       FROM (SELECT count(*) AS n, count(DISTINCT visitor_id) AS v, count(*) FILTER (WHERE pageviews <= 1) AS b, sum(EXTRACT(EPOCH FROM last_seen_at - started_at)) AS d
               FROM analytics.sessions WHERE installation_id = $1 AND started_at >= $2 AND started_at < $3
              GROUP BY date_trunc('day', started_at AT TIME ZONE 'UTC')) per_day`,
    [installationId, iso(from), iso(to)],
  );
  const browsers = await dataSource.query(
    `SELECT browser AS value, count(*)::int AS sessions FROM analytics.sessions WHERE installation_id = $1 AND started_at >= $2 AND started_at < $3 GROUP BY 1 ORDER BY 2 DESC, 1`,
    [installationId, iso(from), iso(to)],
  );
  const referrers = await dataSource.query(
    `SELECT referrer_domain AS value, count(*)::int AS sessions FROM analytics.sessions
      WHERE installation_id = $1 AND started_at >= $2 AND started_at < $3 AND referrer_domain IS NOT NULL GROUP BY 1 ORDER BY 2 DESC, 1`,
    [installationId, iso(from), iso(to)],
  );
  return { totals, browsers, referrers };
}

async function stats(installationId: string, from: number, to: number) {
  const { totals, breakdowns } = await reports.sessionStats({ installationId, from: iso(from), to: iso(to) }, 10);
  const list = (dimension: string) => breakdowns.filter((r) => r.dimension === dimension).map(({ value, sessions }) => ({ value, sessions }));
  return { totals, browsers: list('browsers'), referrers: list('referrers') };
}

async function expectStatsAsSessions(installationId: string, from: number, to: number): Promise<void> {
  const expected = await fromSessions(installationId, from, to);
  const actual = await stats(installationId, from, to);
  expect(actual.totals).toEqual({ ...expected.totals, durationSeconds: expected.totals.durationSeconds === null ? null : expect.closeTo(expected.totals.durationSeconds, 6) });
  expect(actual.browsers).toEqual(expected.browsers);
  expect(actual.referrers).toEqual(expected.referrers);
}

const writes = (installationId: string) =>
  dataSource.query(`SELECT day::text AS day, writes::int, rolled_writes::int AS rolled FROM analytics.session_day_writes WHERE installation_id = $1 ORDER BY day`, [installationId]);

/** Three days of visits: D-1 late evening, D all day (one visit crossing into D+1), D+1. */
async function seed(site: string, visitorBase: number): Promise<void> {
  const v = (n: number) => String(visitorBase + n);
  writer.add(visit(site, v(1), `${visitorBase}01`, [pageview(at(-1, 22), '/'), pageview(at(-1, 22, 5), '/pricing')], 'Firefox'));
  writer.add(visit(site, v(2), `${visitorBase}02`, [pageview(at(0, 9), '/', 'google.com'), pageview(at(0, 9, 3), '/docs'), pageview(at(0, 9, 9), '/pricing')]));
  writer.add(visit(site, v(2), `${visitorBase}03`, [pageview(at(0, 15), '/blog')]));
  writer.add(visit(site, v(3), `${visitorBase}04`, [pageview(at(0, 12), '/', 'news.example')], 'Safari'));
  writer.add(visit(site, v(4), `${visitorBase}05`, [pageview(at(0, 23, 50), '/'), pageview(at(1, 0, 10), '/pricing')]));
  writer.add(visit(site, v(5), `${visitorBase}06`, [pageview(at(1, 8), '/', 'google.com')], 'Safari'));
  await writer.flush();
}

beforeAll(async () => {
  database = await createTestDatabase('t_analytics_rollup');
  dataSource = await openSubgraphDatabase({ url: database.url, schema: 'analytics', entities: analyticsSubgraph.entities, migrations: analyticsSubgraph.migrations });
  writer = createEventWriter({ dataSource, partitions: createPartitionKeeper(dataSource, logger), logger, options: resolveIngestOptions({ flushIntervalMs: 60_000 }) });
  // quietMs 1: due as soon as written. The timer is left to the tests' runOnce (interval one hour).
  roller = createSessionDayRoller({ dataSource, logger, options: { quietMs: 1, intervalMs: 3_600_000 } });
  reports = new ReportRepository(dataSource);
}, 60_000);

afterAll(async () => {
  await roller?.close();
  await writer?.close();
  await dataSource?.destroy();
  await database?.drop();
});

afterEach(() => {
  expect(errors).toEqual([]);
});

describe('the daily sessions rollup', () => {
  it('marks every day a written session spans, including the day a session crosses into', async () => {
    const site = await install();
    await seed(site, 1000);
    expect(await writes(site)).toEqual([
      { day: dayOf(at(-1, 0)), writes: 1, rolled: null },
      { day: dayOf(at(0, 0)), writes: 1, rolled: null },
      { day: dayOf(at(1, 0)), writes: 1, rolled: null },
    ]);
  });

  it('rolls up the due days, and the stats over whole and partial days equal those of the sessions alone', async () => {
    const site = await install();
    await seed(site, 2000);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await roller.runOnce()).toBeGreaterThanOrEqual(3);
    expect((await writes(site)).every((row: { writes: number; rolled: number }) => row.rolled === row.writes)).toBe(true);

    const totals = await dataSource.query(`SELECT day::text AS day, sessions, visitors, bounces, duration_seconds FROM analytics.session_days WHERE installation_id = $1 AND dimension = '' ORDER BY day`, [site]);
    // D: sessions 02 (3 pageviews, 540 s), 03 (bounce), 04 (bounce), 05 (starts 23:50, 1200 s); visitors 2, 3, 4.
    expect(totals).toEqual([
      { day: dayOf(at(-1, 0)), sessions: 1, visitors: 1, bounces: 0, duration_seconds: 300 },
      { day: dayOf(at(0, 0)), sessions: 4, visitors: 3, bounces: 2, duration_seconds: 540 + 1200 },
      { day: dayOf(at(1, 0)), sessions: 1, visitors: 1, bounces: 1, duration_seconds: 0 },
    ]);

    // Whole days only; whole day D with partial neighbours; inside one day; all three days and more.
    for (const [from, to] of [
      [at(-1, 0), at(2, 0)],
      [at(-1, 23), at(1, 9)],
      [at(0, 10), at(0, 20)],
      [at(-5, 0), at(2, 0)],
      [at(0, 0), at(1, 0)],
    ]) {
      await expectStatsAsSessions(site, from, to);
    }
    expect((await stats(site, at(-1, 0), at(2, 0))).totals).toEqual({ sessions: 6, visitors: 5, bounces: 3, durationSeconds: (300 + 540 + 1200) / 6 });
  });

  it('reads a day from the rollup only while it holds every write: a later write sends the day back to the sessions until it is rolled again', async () => {
    const site = await install();
    await seed(site, 3000);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await roller.runOnce();
    const wholeD: [number, number] = [at(0, 0), at(1, 0)];
    expect((await stats(site, ...wholeD)).totals.sessions).toBe(4);

    // A session put in the table behind the writer's back is not seen: the day is read from its rollup.
    await dataSource.query(
      `INSERT INTO analytics.sessions (installation_id, session_id, visitor_id, started_at, last_seen_at, pageviews, events, browser) VALUES ($1, 3999, 3999, $2, $2, 1, 1, 'Opera')`,
      [site, iso(at(0, 18))],
    );
    expect((await stats(site, ...wholeD)).totals.sessions).toBe(4);

    // A write through the writer makes the day stale: now read from the sessions, both new ones count.
    writer.add(visit(site, '3998', '399801', [pageview(at(0, 19), '/late')], 'Edge'));
    await writer.flush();
    expect((await stats(site, ...wholeD)).totals.sessions).toBe(6);
    await expectStatsAsSessions(site, ...wholeD);

    await new Promise((resolve) => setTimeout(resolve, 5));
    await roller.runOnce();
    expect((await writes(site)).every((row: { writes: number; rolled: number }) => row.rolled === row.writes)).toBe(true);
    await expectStatsAsSessions(site, ...wholeD);
    expect((await stats(site, ...wholeD)).browsers).toEqual(expect.arrayContaining([{ value: 'Opera', sessions: 1 }, { value: 'Edge', sessions: 1 }]));
  });

  it('does not mark a day current when a batch commits while it is being rolled up', async () => {
    const site = await install();
    await seed(site, 4000);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const day = dayOf(at(0, 0));
    // A writer's batch in flight: it has counted the day and not committed yet.
    const batch = new Client({ connectionString: database.url });
    await batch.connect();
    try {
      await batch.query('BEGIN');
      await batch.query(`UPDATE analytics.session_day_writes SET writes = writes + 1, written_at = now() - interval '1 hour' WHERE installation_id = $1 AND day = $2`, [site, day]);
      const run = roller.runOnce();
      // The roller has read its snapshot and waits on the batch's row lock.
      await eventually(async () => {
        const [row] = await dataSource.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
        return row.n > 0;
      }, 10_000, 'the roller to wait on the batch');
      await batch.query('COMMIT');
      await run;
    } finally {
      await batch.end();
    }
    const rows: Array<{ day: string; writes: number; rolled: number | null }> = await writes(site);
    const stale = rows.find((r) => r.day === day)!;
    expect(stale.rolled).not.toBe(stale.writes);
    // The other days were rolled; the stale one is rolled at the next run.
    expect(rows.filter((r) => r.day !== day).every((r) => r.rolled === r.writes)).toBe(true);
    await roller.runOnce();
    expect((await writes(site)).every((row: { writes: number; rolled: number }) => row.rolled === row.writes)).toBe(true);
  });

  it('keeps each installation to its own rows, and drops them with it', async () => {
    const mine = await install();
    const theirs = await install();
    await seed(mine, 5000);
    writer.add(visit(theirs, '5999', '599901', [pageview(at(0, 10), '/theirs', 'their.example')], 'Theirs'));
    await writer.flush();
    await new Promise((resolve) => setTimeout(resolve, 5));
    await roller.runOnce();
    const mineStats = await stats(mine, at(-1, 0), at(2, 0));
    expect(mineStats.totals.sessions).toBe(6);
    expect(mineStats.browsers.map((b) => b.value)).not.toContain('Theirs');
    expect(await stats(theirs, at(-1, 0), at(2, 0))).toMatchObject({ totals: { sessions: 1, visitors: 1 }, browsers: [{ value: 'Theirs', sessions: 1 }], referrers: [{ value: 'their.example', sessions: 1 }] });

    await dataSource.query(`DELETE FROM analytics.installations WHERE id = $1`, [theirs]);
    expect(await dataSource.query(`SELECT 1 FROM analytics.session_days WHERE installation_id = $1 UNION ALL SELECT 1 FROM analytics.session_day_writes WHERE installation_id = $1`, [theirs])).toEqual([]);
    expect((await stats(mine, at(-1, 0), at(2, 0))).totals.sessions).toBe(6);
  });

  it('goes on with the other days when one fails, and rolls that one at a later run', async () => {
    const site = await install();
    await seed(site, 7000);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const bad = dayOf(at(0, 0));
    await dataSource.query(
      `CREATE FUNCTION analytics.refuse_day() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN IF NEW.installation_id = '${site}' AND NEW.day = '${bad}' THEN RAISE EXCEPTION 'refused for the test'; END IF; RETURN NEW; END $$`,
    );
    await dataSource.query(`CREATE TRIGGER refuse_day BEFORE INSERT ON analytics.session_days FOR EACH ROW EXECUTE FUNCTION analytics.refuse_day()`);
    try {
      await roller.runOnce();
      const rows: Array<{ day: string; writes: number; rolled: number | null }> = await writes(site);
      expect(rows.find((r) => r.day === bad)!.rolled).toBeNull();
      expect(rows.filter((r) => r.day !== bad).every((r) => r.rolled === r.writes)).toBe(true);
      expect(errors).toHaveLength(1);
      // Meanwhile the stats read that day from the sessions.
      await expectStatsAsSessions(site, at(-1, 0), at(2, 0));
    } finally {
      await dataSource.query(`DROP TRIGGER refuse_day ON analytics.session_days`);
      await dataSource.query(`DROP FUNCTION analytics.refuse_day()`);
      errors.length = 0;
    }
    await roller.runOnce();
    expect((await writes(site)).every((row: { writes: number; rolled: number }) => row.rolled === row.writes)).toBe(true);
  });

  it('leaves days written within quietMs for later', async () => {
    const patient = createSessionDayRoller({ dataSource, logger, options: { quietMs: 3_600_000, intervalMs: 3_600_000 } });
    try {
      const site = await install();
      writer.add(visit(site, '6001', '600101', [pageview(at(0, 10), '/')]));
      await writer.flush();
      await patient.runOnce();
      expect(await writes(site)).toEqual([{ day: dayOf(at(0, 0)), writes: 1, rolled: null }]);
    } finally {
      await patient.close();
    }
  });
});

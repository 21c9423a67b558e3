import type { DataSource } from 'typeorm';
import type { Logger } from '../../../core/logger';

/**
 * The daily sessions rollup (analytics.session_days): per installation, UTC day (of a session's
 * start) and breakdown value, the sessions, distinct visitors, bounces and summed duration, so a
 * stats window reads its whole days from a few hundred rows instead of every session in them.
 *
 * Freshness without locks: the writer counts every batch that touches a day's sessions in
 * analytics.session_day_writes (`writes`). A day is rolled up in a REPEATABLE READ transaction:
 * the rollup rows are rebuilt from the sessions of its snapshot, and `rolled_writes` is set to the
 * `writes` of that same snapshot. A batch committed after the snapshot has raised `writes` (and
 * the final UPDATE then fails to serialize, so nothing of the run is kept), so `rolled_writes =
 * writes` holds exactly when the rollup includes every write. Readers use a day's rollup only
 * then, and read its sessions otherwise (reports.repository.ts).
 *
 * Days are rolled once their writes have been quiet for `quietMs`: today, written all day long, is
 * rolled after midnight; a late event makes its day stale until the next run.
 */
export interface SessionDayRollupOptions {
  /** How often due days are looked for, ms. @defaultValue 10000 */
  intervalMs?: number;
  /** A day is due once no batch has written its sessions for this long, ms. @defaultValue 60000 */
  quietMs?: number;
  /** Days rolled per run at most. @defaultValue 100 */
  daysPerRun?: number;
}

export interface SessionDayRoller {
  /** Rolls the days that are due now; resolves to how many were rolled. */
  runOnce(): Promise<number>;
  /** Stops the timer and waits for a run in progress. */
  close(): Promise<void>;
}

/** The breakdowns the stats list (reports.repository.ts BREAKDOWNS) and their session columns; fixed strings. */
export const ROLLED_DIMENSIONS = {
  referrers: 'referrer_domain',
  utmSources: 'utm_source',
  browsers: 'browser',
  operatingSystems: 'os',
  devices: 'device',
} as const;

const columns = Object.values(ROLLED_DIMENSIONS);

/**
 * SQL pieces of a breakdown scan of analytics.sessions by `GROUP BY GROUPING SETS (…sets)`: each
 * row's breakdown name (`dimension`; '' for the empty set) and its value (`value`; null for a
 * session without one). The rollup and the stats' scan of the partial days both use them.
 */
export const BREAKDOWN_GROUPING = {
  dimension: `CASE ${Object.entries(ROLLED_DIMENSIONS)
    .map(([name, column]) => `WHEN GROUPING(${column}) = 0 THEN '${name}'`)
    .join(' ')} ELSE '' END`,
  value: `COALESCE(${columns.join(', ')})`,
  sets: columns.map((c) => `(${c})`).join(', '),
} as const;

/**
 * What the stats count of a group of sessions, as the columns of session_days: sessions, distinct
 * visitors, bounces (at most one pageview) and summed duration (last_seen_at - started_at). The
 * rollup stores them; the stats compute them the same way for the days they read from the sessions.
 */
export const SESSION_AGGREGATES = `count(*)::int AS sessions, count(DISTINCT visitor_id)::int AS visitors, (count(*) FILTER (WHERE pageviews <= 1))::int AS bounces,
           COALESCE(sum(EXTRACT(EPOCH FROM last_seen_at - started_at)), 0)::float8 AS duration_seconds`;

/**
 * One day's rows from its sessions: the totals (grouping set (), dimension '') and each breakdown
 * value (sessions without a value are left out). $1 installation, $2 day.
 */
const ROLL_UP_DAY_SQL = `
  INSERT INTO analytics.session_days (installation_id, day, dimension, value, sessions, visitors, bounces, duration_seconds)
  SELECT $1, $2::date, dimension, value, sessions, visitors, bounces, duration_seconds FROM (
    SELECT ${BREAKDOWN_GROUPING.dimension} AS dimension, COALESCE(${BREAKDOWN_GROUPING.value}, '') AS value, ${SESSION_AGGREGATES}
      FROM analytics.sessions
     WHERE installation_id = $1 AND started_at >= ($2::date)::timestamp AT TIME ZONE 'UTC' AND started_at < ($2::date + 1)::timestamp AT TIME ZONE 'UTC'
     GROUP BY GROUPING SETS ((), ${BREAKDOWN_GROUPING.sets})
  ) rolled
  WHERE dimension = '' OR value IS DISTINCT FROM ''`;

export function createSessionDayRoller(deps: { dataSource: DataSource; logger: Logger; options?: SessionDayRollupOptions }): SessionDayRoller {
  const { dataSource, logger } = deps;
  const intervalMs = deps.options?.intervalMs ?? 10_000;
  const quietMs = deps.options?.quietMs ?? 60_000;
  const daysPerRun = deps.options?.daysPerRun ?? 100;
  let running: Promise<number> | null = null;
  let closed = false;

  const rollUpDay = async (installationId: string, day: string): Promise<boolean> => {
    const runner = dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction('REPEATABLE READ');
      const [state] = (await runner.query(`SELECT writes FROM analytics.session_day_writes WHERE installation_id = $1 AND day = $2::date`, [installationId, day])) as Array<{ writes: string }>;
      if (!state) {
        await runner.rollbackTransaction();
        return false;
      }
      await runner.query(`DELETE FROM analytics.session_days WHERE installation_id = $1 AND day = $2::date`, [installationId, day]);
      await runner.query(ROLL_UP_DAY_SQL, [installationId, day]);
      await runner.query(`UPDATE analytics.session_day_writes SET rolled_writes = $3 WHERE installation_id = $1 AND day = $2::date`, [installationId, day, state.writes]);
      await runner.commitTransaction();
      return true;
    } catch (err) {
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      // 40001: written meanwhile (the next run rolls it); 23503: its installation was deleted.
      const code = (err as { code?: string }).code;
      if (code === '40001' || code === '23503') return false;
      throw err;
    } finally {
      await runner.release();
    }
  };

  const run = async (): Promise<number> => {
    const due = (await dataSource.query(
      `SELECT installation_id, day::text AS day FROM analytics.session_day_writes
        WHERE rolled_writes IS DISTINCT FROM writes AND written_at < now() - $1 * interval '1 millisecond'
        ORDER BY written_at LIMIT $2`,
      [quietMs, daysPerRun],
    )) as Array<{ installation_id: string; day: string }>;
    let rolled = 0;
    for (const { installation_id: installationId, day } of due) {
      if (closed) break;
      try {
        if (await rollUpDay(installationId, day)) rolled++;
      } catch (err) {
        // One day failing must not hold back the others; it stays stale (read from the sessions) and is tried again next run.
        logger.error('analytics sessions rollup of a day failed; retrying at the next run', { err, installationId, day });
      }
    }
    return rolled;
  };

  const runOnce = (): Promise<number> => {
    running ??= run().finally(() => {
      running = null;
    });
    return running;
  };

  const timer = setInterval(() => {
    if (closed || running) return;
    runOnce().catch((err: unknown) => logger.error('analytics sessions rollup failed; retrying at the next run', { err }));
  }, intervalMs);
  timer.unref();

  return {
    runOnce,
    async close() {
      closed = true;
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}

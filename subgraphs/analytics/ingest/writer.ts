import type { DataSource } from 'typeorm';
import { preparedQuery } from '../../../core/database';
import type { Logger } from '../../../core/logger';
import type { ResolvedIngestOptions } from './options';
import type { PartitionKeeper } from './partitions';
import type { IngestEvent } from './payload';
import { PgArrayLiteral, quoteElement } from './pg-arrays';

/** The accepted events of one request: one visitor, one session, one user agent. */
export interface AcceptedVisit {
  installationId: string;
  visitorId: string;
  sessionId: string;
  /** The visitor's identified user, for events that name none. */
  userId: string | null;
  browser: string;
  os: string;
  device: string;
  /** Each with its id set (the client's or the server's). */
  events: IngestEvent[];
}

/**
 * The in-process buffer in front of analytics.events: requests add their accepted events and go;
 * batches of up to `flushRows` are written every `flushIntervalMs`, or as soon as one is full.
 * One batch is one prepared statement, hence one transaction and one round trip, whatever its
 * size (WRITE_BATCH_SQL): the events, the sessions they touch (aggregated here) and the users they
 * name. A failed batch stays at the head of the queue and is retried with backoff.
 */
export interface EventWriter {
  add(visit: AcceptedVisit): void;
  /** Events accepted and not yet written. */
  readonly bufferedRows: number;
  /** Writes everything buffered now; rejects (keeping the rows) when a batch fails. */
  flush(): Promise<void>;
  /** Stops the timer and writes what is buffered, retrying until closeTimeoutMs. */
  close(): Promise<void>;
}

class Batch {
  visits: AcceptedVisit[] = [];
  rows = 0;
  minTs = Number.POSITIVE_INFINITY;
  maxTs = Number.NEGATIVE_INFINITY;
}

/** Per session of a batch: what the sessions upsert adds to the row. */
interface SessionTotals {
  installationId: string;
  sessionId: string;
  visitorId: string;
  userId: string | null;
  startedAt: number;
  lastSeenAt: number;
  pageviews: number;
  events: number;
  entryTs: number;
  entryPath: string | null;
  exitTs: number;
  exitPath: string | null;
  hostname: string | null;
  referrerDomain: string | null;
  utmSource: string | null;
  utmMedium: string | null;
  utmCampaign: string | null;
  browser: string;
  os: string;
  device: string;
}

interface UserTotals {
  installationId: string;
  userId: string;
  traits: Record<string, unknown>;
  firstSeenAt: number;
  lastSeenAt: number;
}

/**
 * The whole batch in one statement, hence one transaction and one round trip: the installations
 * still there (share-locked, so a deletion waits for this to commit), the events (INSERT … SELECT
 * FROM unnest), their pageviews per hour and path (page_hours), the sessions they touch (one upsert,
 * aggregated in the writer) and the days those span (session_day_writes, which marks their
 * rollup stale), the users they name (one upsert). Rows of an installation deleted meanwhile are left out.
 */
const WRITE_BATCH_SQL = `
  WITH live AS (
    SELECT id FROM analytics.installations WHERE id = ANY($1::text[]) FOR KEY SHARE
  ), written_events AS (
    INSERT INTO analytics.events (installation_id, ts, event_id, kind, name, visitor_id, session_id, user_id, hostname, path, query, referrer, referrer_domain,
                                  utm_source, utm_medium, utm_campaign, browser, os, device, screen_width, props)
    SELECT e.installation_id, to_timestamp(e.ts / 1000.0), e.event_id, e.kind, e.name, e.visitor_id, e.session_id, e.user_id, e.hostname, e.path, e.query,
           e.referrer, e.referrer_domain, e.utm_source, e.utm_medium, e.utm_campaign, e.browser, e.os, e.device, e.screen_width, e.props::jsonb
      FROM unnest($2::text[], $3::float8[], $4::text[], $5::text[], $6::text[], $7::int8[], $8::int8[], $9::text[], $10::text[], $11::text[], $12::text[],
                  $13::text[], $14::text[], $15::text[], $16::text[], $17::text[], $18::text[], $19::text[], $20::text[], $21::int4[], $22::text[])
        AS e(installation_id, ts, event_id, kind, name, visitor_id, session_id, user_id, hostname, path, query, referrer, referrer_domain,
             utm_source, utm_medium, utm_campaign, browser, os, device, screen_width, props)
     WHERE e.installation_id IN (SELECT id FROM live)
  ), written_pages AS (
    -- Pageviews per hour and path ('' for none): the rollup the reports read for long windows.
    INSERT INTO analytics.page_hours AS p (installation_id, hour, path, pageviews)
    SELECT e.installation_id, date_bin('1 hour', to_timestamp(e.ts / 1000.0), '2000-01-01T00:00:00Z'), COALESCE(e.path, ''), count(*)::int
      FROM unnest($2::text[], $3::float8[], $6::text[], $11::text[]) AS e(installation_id, ts, name, path)
     WHERE e.name = '$pageview' AND e.installation_id IN (SELECT id FROM live)
     GROUP BY 1, 2, 3
    ON CONFLICT (installation_id, hour, path) DO UPDATE SET pageviews = p.pageviews + EXCLUDED.pageviews
  ), written_sessions AS (
    INSERT INTO analytics.sessions AS s (installation_id, session_id, visitor_id, user_id, started_at, last_seen_at, pageviews, events, entry_path, exit_path,
                                         hostname, referrer_domain, utm_source, utm_medium, utm_campaign, browser, os, device)
    SELECT a.installation_id, a.session_id, a.visitor_id, a.user_id, to_timestamp(a.started_at / 1000.0), to_timestamp(a.last_seen_at / 1000.0), a.pageviews,
           a.events, a.entry_path, a.exit_path, a.hostname, a.referrer_domain, a.utm_source, a.utm_medium, a.utm_campaign, a.browser, a.os, a.device
      FROM unnest($23::text[], $24::int8[], $25::int8[], $26::text[], $27::float8[], $28::float8[], $29::int4[], $30::int4[], $31::text[], $32::text[],
                  $33::text[], $34::text[], $35::text[], $36::text[], $37::text[], $38::text[], $39::text[], $40::text[])
        AS a(installation_id, session_id, visitor_id, user_id, started_at, last_seen_at, pageviews, events, entry_path, exit_path, hostname, referrer_domain,
             utm_source, utm_medium, utm_campaign, browser, os, device)
     WHERE a.installation_id IN (SELECT id FROM live)
    -- Entry and exit pages follow time: a late batch with earlier events moves the entry, not the exit.
    ON CONFLICT (installation_id, session_id) DO UPDATE SET
      user_id = COALESCE(EXCLUDED.user_id, s.user_id),
      started_at = LEAST(s.started_at, EXCLUDED.started_at),
      last_seen_at = GREATEST(s.last_seen_at, EXCLUDED.last_seen_at),
      pageviews = s.pageviews + EXCLUDED.pageviews,
      events = s.events + EXCLUDED.events,
      entry_path = CASE WHEN EXCLUDED.entry_path IS NOT NULL AND (s.entry_path IS NULL OR EXCLUDED.started_at < s.started_at) THEN EXCLUDED.entry_path ELSE s.entry_path END,
      exit_path = CASE WHEN EXCLUDED.exit_path IS NOT NULL AND (s.exit_path IS NULL OR EXCLUDED.last_seen_at >= s.last_seen_at) THEN EXCLUDED.exit_path ELSE s.exit_path END,
      hostname = COALESCE(s.hostname, EXCLUDED.hostname),
      referrer_domain = COALESCE(s.referrer_domain, EXCLUDED.referrer_domain),
      utm_source = COALESCE(s.utm_source, EXCLUDED.utm_source),
      utm_medium = COALESCE(s.utm_medium, EXCLUDED.utm_medium),
      utm_campaign = COALESCE(s.utm_campaign, EXCLUDED.utm_campaign)
    RETURNING s.installation_id, s.started_at, s.last_seen_at
  ), written_days AS (
    -- Every UTC day a touched session spans is counted as written again, so its rollup is stale
    -- until rolled up anew. A session's earlier start lies inside its new span (the upsert only
    -- widens it), so the day it leaves is counted too.
    INSERT INTO analytics.session_day_writes AS d (installation_id, day, writes, written_at)
    SELECT DISTINCT ws.installation_id, g.day::date, 1::bigint, now()
      FROM written_sessions ws
     CROSS JOIN LATERAL generate_series((ws.started_at AT TIME ZONE 'UTC')::date, (ws.last_seen_at AT TIME ZONE 'UTC')::date, interval '1 day') AS g(day)
     ORDER BY 1, 2
    ON CONFLICT (installation_id, day) DO UPDATE SET writes = d.writes + 1, written_at = EXCLUDED.written_at
  )
  INSERT INTO analytics.users AS u (installation_id, user_id, traits, first_seen_at, last_seen_at)
  SELECT a.installation_id, a.user_id, a.traits::jsonb, to_timestamp(a.first_seen_at / 1000.0), to_timestamp(a.last_seen_at / 1000.0)
    FROM unnest($41::text[], $42::text[], $43::text[], $44::float8[], $45::float8[]) AS a(installation_id, user_id, traits, first_seen_at, last_seen_at)
   WHERE a.installation_id IN (SELECT id FROM live)
  ON CONFLICT (installation_id, user_id) DO UPDATE SET
    traits = u.traits || EXCLUDED.traits,
    first_seen_at = LEAST(u.first_seen_at, EXCLUDED.first_seen_at),
    last_seen_at = GREATEST(u.last_seen_at, EXCLUDED.last_seen_at)`;

/** Partitions are made ahead: a month's first events never wait for its partition. */
const PARTITION_LOOKAHEAD_MS = 7 * 86_400_000;

export function createEventWriter(deps: { dataSource: DataSource; partitions: PartitionKeeper; logger: Logger; options: ResolvedIngestOptions }): EventWriter {
  const { partitions, logger, options } = deps;
  let open = new Batch();
  const sealed: Batch[] = [];
  let buffered = 0;
  let draining: Promise<void> | null = null;
  let retryDelay = 0;
  let retryAt = 0;
  let closed = false;

  const seal = (): void => {
    if (open.rows === 0) return;
    sealed.push(open);
    open = new Batch();
  };

  const drain = (): Promise<void> => {
    draining ??= (async () => {
      try {
        while (sealed.length) {
          const batch = sealed[0];
          await writeBatch(batch);
          sealed.shift();
          buffered -= batch.rows;
        }
      } finally {
        draining = null;
      }
    })();
    return draining;
  };

  const flush = (): Promise<void> => {
    seal();
    return drain();
  };

  /** The timer's flush: failures are logged and retried after a growing delay. */
  const tick = (): void => {
    if (closed || draining || Date.now() < retryAt || (open.rows === 0 && sealed.length === 0)) return;
    flush().then(
      () => {
        retryDelay = 0;
        retryAt = 0;
      },
      (err: unknown) => {
        retryDelay = Math.min(retryDelay ? retryDelay * 2 : options.retryDelayMs, options.maxRetryDelayMs);
        retryAt = Date.now() + retryDelay;
        logger.error('analytics events could not be written; retrying', { err, bufferedRows: buffered, retryInMs: retryDelay });
      },
    );
  };
  const timer = setInterval(tick, options.flushIntervalMs);
  timer.unref();

  const writeVisits = async (visits: AcceptedVisit[]): Promise<void> => {
    const installationIds = [...new Set(visits.map((v) => v.installationId))];
    const { sessions, users } = totalsOf(visits);
    await preparedQuery(deps.dataSource, 'analytics_ingest_write_batch', WRITE_BATCH_SQL, [installationIds, ...eventColumns(visits), ...sessionColumns(sessions), ...userColumns(users)]);
  };

  const writeBatch = async (batch: Batch): Promise<void> => {
    await partitions.ensure(batch.minTs, Math.max(batch.maxTs, options.now() + PARTITION_LOOKAHEAD_MS));
    try {
      await writeVisits(batch.visits);
    } catch (err) {
      if (!isRefusedData(err)) throw err;
      // Values PostgreSQL refuses (validation should have caught them) must not hold everyone's
      // events back forever: the batch is written one request at a time, the refused ones dropped.
      while (batch.visits.length) {
        const visit = batch.visits[0];
        try {
          await writeVisits([visit]);
        } catch (visitErr) {
          if (!isRefusedData(visitErr)) throw visitErr;
          logger.error('analytics events refused by the database were dropped', { err: visitErr, installationId: visit.installationId, events: visit.events.length });
        }
        // Written or dropped: either way out of the batch, so a retry never writes it twice.
        batch.visits.shift();
        batch.rows -= visit.events.length;
        buffered -= visit.events.length;
      }
    }
  };

  return {
    add(visit) {
      const batch = open;
      batch.visits.push(visit);
      batch.rows += visit.events.length;
      buffered += visit.events.length;
      for (const event of visit.events) {
        if (event.ts < batch.minTs) batch.minTs = event.ts;
        if (event.ts > batch.maxTs) batch.maxTs = event.ts;
      }
      if (batch.rows >= options.flushRows) {
        seal();
        // Written at once unless a failure is being backed off from.
        if (!draining && Date.now() >= retryAt) setImmediate(tick);
      }
    },
    get bufferedRows() {
      return buffered;
    },
    flush,
    async close() {
      closed = true;
      clearInterval(timer);
      const deadline = Date.now() + options.closeTimeoutMs;
      let delay = options.retryDelayMs;
      for (;;) {
        try {
          await draining?.catch(() => undefined);
          await flush();
          return;
        } catch (err) {
          if (Date.now() + delay > deadline) {
            logger.error('analytics events lost: they could not be written before the deadline', { err, bufferedRows: buffered });
            return;
          }
          logger.warn('analytics events could not be written while closing; retrying', { err, bufferedRows: buffered });
          await new Promise((resolve) => setTimeout(resolve, delay));
          delay = Math.min(delay * 2, options.maxRetryDelayMs);
        }
      }
    },
  };
}

/** The events insert's 21 parameters, one array literal per column. */
function eventColumns(visits: AcceptedVisit[]): string[] {
  const columns = Array.from({ length: 21 }, () => new PgArrayLiteral());
  const [installationId, ts, eventId, kind, name, visitorId, sessionId, userId, hostname, path, query, referrer, referrerDomain, utmSource, utmMedium, utmCampaign, browser, os, device, screenWidth, props] = columns;
  for (const visit of visits) {
    // The same on every event of the visit: quoted once.
    const visitInstallation = quoteElement(visit.installationId);
    const visitBrowser = quoteElement(visit.browser);
    const visitOs = quoteElement(visit.os);
    const visitDevice = quoteElement(visit.device);
    for (const event of visit.events) {
      const url = event.url;
      installationId.quoted(visitInstallation);
      ts.number(event.ts);
      eventId.text(event.id);
      kind.text(event.kind);
      name.text(event.name);
      visitorId.quoted(visit.visitorId);
      sessionId.quoted(visit.sessionId);
      userId.text(event.userId ?? visit.userId);
      hostname.text(url ? url.hostname : null);
      path.text(url ? url.path : null);
      query.text(url ? url.query : null);
      referrer.text(event.referrer);
      referrerDomain.text(event.referrerDomain);
      utmSource.text(url ? url.utmSource : null);
      utmMedium.text(url ? url.utmMedium : null);
      utmCampaign.text(url ? url.utmCampaign : null);
      browser.quoted(visitBrowser);
      os.quoted(visitOs);
      device.quoted(visitDevice);
      screenWidth.number(event.screenWidth);
      props.text(event.props);
    }
  }
  return columns.map(String);
}

/** The batch's sessions and users, each once (an upsert may touch a row only once), in a fixed order so concurrent writers lock alike. */
function totalsOf(visits: AcceptedVisit[]): { sessions: SessionTotals[]; users: UserTotals[] } {
  const sessions = new Map<string, SessionTotals>();
  const users = new Map<string, UserTotals>();
  for (const visit of visits) {
    const sessionKey = `${visit.installationId}\u0000${visit.sessionId}`;
    let session = sessions.get(sessionKey);
    if (!session) {
      session = {
        installationId: visit.installationId,
        sessionId: visit.sessionId,
        visitorId: visit.visitorId,
        userId: null,
        startedAt: Number.POSITIVE_INFINITY,
        lastSeenAt: Number.NEGATIVE_INFINITY,
        pageviews: 0,
        events: 0,
        entryTs: Number.POSITIVE_INFINITY,
        entryPath: null,
        exitTs: Number.NEGATIVE_INFINITY,
        exitPath: null,
        hostname: null,
        referrerDomain: null,
        utmSource: null,
        utmMedium: null,
        utmCampaign: null,
        browser: visit.browser,
        os: visit.os,
        device: visit.device,
      };
      sessions.set(sessionKey, session);
    }
    for (const event of visit.events) {
      const ts = event.ts;
      const url = event.url;
      if (ts < session.startedAt) session.startedAt = ts;
      if (ts > session.lastSeenAt) session.lastSeenAt = ts;
      session.events++;
      if (event.kind === 'pageview' && url) {
        session.pageviews++;
        if (ts < session.entryTs) {
          session.entryTs = ts;
          session.entryPath = url.path;
        }
        if (ts >= session.exitTs) {
          session.exitTs = ts;
          session.exitPath = url.path;
        }
        session.referrerDomain ??= event.referrerDomain;
        session.utmSource ??= url.utmSource;
        session.utmMedium ??= url.utmMedium;
        session.utmCampaign ??= url.utmCampaign;
      }
      if (url) session.hostname ??= url.hostname;
      const userId = event.userId ?? visit.userId;
      if (!userId) continue;
      session.userId = userId;
      const userKey = `${visit.installationId}\u0000${userId}`;
      const user = users.get(userKey);
      if (!user) users.set(userKey, { installationId: visit.installationId, userId, traits: { ...event.traits }, firstSeenAt: ts, lastSeenAt: ts });
      else {
        if (event.traits) Object.assign(user.traits, event.traits);
        if (ts < user.firstSeenAt) user.firstSeenAt = ts;
        if (ts > user.lastSeenAt) user.lastSeenAt = ts;
      }
    }
  }
  const byKey = <T>(map: Map<string, T>): T[] => [...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, value]) => value);
  return { sessions: byKey(sessions), users: byKey(users) };
}

/** The sessions upsert's 18 parameters. */
function sessionColumns(sessions: SessionTotals[]): string[] {
  const columns = Array.from({ length: 18 }, () => new PgArrayLiteral());
  const [installationId, sessionId, visitorId, userId, startedAt, lastSeenAt, pageviews, events, entryPath, exitPath, hostname, referrerDomain, utmSource, utmMedium, utmCampaign, browser, os, device] = columns;
  for (const s of sessions) {
    installationId.text(s.installationId);
    // Decimal strings of bigints: digits (and a sign) only.
    sessionId.quoted(s.sessionId);
    visitorId.quoted(s.visitorId);
    userId.text(s.userId);
    startedAt.number(s.startedAt);
    lastSeenAt.number(s.lastSeenAt);
    pageviews.number(s.pageviews);
    events.number(s.events);
    entryPath.text(s.entryPath);
    exitPath.text(s.exitPath);
    hostname.text(s.hostname);
    referrerDomain.text(s.referrerDomain);
    utmSource.text(s.utmSource);
    utmMedium.text(s.utmMedium);
    utmCampaign.text(s.utmCampaign);
    browser.text(s.browser);
    os.text(s.os);
    device.text(s.device);
  }
  return columns.map(String);
}

/** The users upsert's 5 parameters. */
function userColumns(users: UserTotals[]): string[] {
  const columns = Array.from({ length: 5 }, () => new PgArrayLiteral());
  const [installationId, userId, traits, firstSeenAt, lastSeenAt] = columns;
  for (const u of users) {
    installationId.text(u.installationId);
    userId.text(u.userId);
    traits.text(JSON.stringify(u.traits));
    firstSeenAt.number(u.firstSeenAt);
    lastSeenAt.number(u.lastSeenAt);
  }
  return columns.map(String);
}

/** Data exceptions (22…) and integrity violations (23…): the values themselves are refused, a retry cannot help. */
function isRefusedData(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
}

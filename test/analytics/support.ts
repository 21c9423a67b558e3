import { Client } from 'pg';
import type { TestPlatform } from '../harness';
import { createUserAndLogin, json, loginAdmin, rest } from '../helpers';

export { json, rest } from '../helpers';
export { sharedWorkspace } from '../workflows/api-support';

export interface Caller {
  auth: Record<string, string>;
  userId: string;
  workspaceId: string;
}

export interface AnalyticsTestEnv {
  alice: Caller;
  mallory: Caller;
  /** Seeds and inspects rows directly. */
  pg: Client;
  close(): Promise<void>;
}

/** Two users with a personal workspace each, and a database client. */
export async function setUpAnalyticsTest(platform: TestPlatform, prefix: string): Promise<AnalyticsTestEnv> {
  const admin = await loginAdmin(platform);
  const a = await createUserAndLogin(platform, admin.auth, `alice-${prefix}`);
  const m = await createUserAndLogin(platform, admin.auth, `mallory-${prefix}`);
  const pg = new Client({ connectionString: platform.databaseUrl });
  await pg.connect();
  return {
    alice: { auth: a.auth, userId: a.userId, workspaceId: a.defaultWorkspaceId },
    mallory: { auth: m.auth, userId: m.userId, workspaceId: m.defaultWorkspaceId },
    pg,
    close: () => pg.end().catch(() => undefined),
  };
}

/** GET with query parameters; undefined values are left out. */
export function get(platform: TestPlatform, path: string, query: Record<string, string | number | boolean | undefined>, who: Caller): Promise<Response> {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
  const qs = params.toString();
  return rest(platform, 'GET', qs ? `${path}?${qs}` : path, undefined, who.auth);
}

/** The answer's body when its status is `status`; fails with the body otherwise. */
export async function expectStatus(response: Response, status: number): Promise<any> {
  const body = await json(response);
  if (response.status !== status) throw new Error(`expected ${status}, got ${response.status}: ${JSON.stringify(body)}`);
  return body;
}

export async function createInstallation(platform: TestPlatform, who: Caller, body: Record<string, unknown> = {}): Promise<any> {
  return expectStatus(await rest(platform, 'POST', '/analytics/installations', { name: 'site', domains: ['example.com'], ...body }, who.auth), 201);
}

export interface SeedEvent {
  ts: string;
  visitorId: number;
  sessionId: number;
  kind?: 'pageview' | 'event' | 'identify';
  /** Default: `$pageview`, `$identify`, or required for kind event. */
  name?: string;
  path?: string | null;
  userId?: string | null;
  props?: Record<string, unknown>;
}

let seq = 0;

/** Inserts events as the writer stores them (kind, name, ids); returns their ids. */
export async function insertEvents(pg: Client, installationId: string, events: SeedEvent[]): Promise<string[]> {
  const ids: string[] = [];
  for (const e of events) {
    const kind = e.kind ?? 'pageview';
    const name = e.name ?? (kind === 'pageview' ? '$pageview' : kind === 'identify' ? '$identify' : undefined);
    if (!name) throw new Error('an event of kind event needs a name');
    const id = `evt_${++seq}_${Date.now().toString(36)}`;
    ids.push(id);
    await pg.query(
      `INSERT INTO analytics.events (installation_id, ts, event_id, kind, name, visitor_id, session_id, user_id, hostname, path, props)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'example.com', $9, $10)`,
      [installationId, e.ts, id, kind, name, e.visitorId, e.sessionId, e.userId ?? null, e.path === undefined ? (kind === 'pageview' ? '/' : null) : e.path, e.props ? JSON.stringify(e.props) : null],
    );
    // The writer keeps pageviews per hour and path alongside (page_hours): the same here.
    if (name === '$pageview') {
      const path = e.path === undefined ? '/' : (e.path ?? '');
      await pg.query(
        `INSERT INTO analytics.page_hours AS p (installation_id, hour, path, pageviews) VALUES ($1, date_bin('1 hour', $2::timestamptz, '2000-01-01T00:00:00Z'), $3, 1)
         ON CONFLICT (installation_id, hour, path) DO UPDATE SET pageviews = p.pageviews + 1`,
        [installationId, e.ts, path],
      );
    }
  }
  return ids;
}

export interface SeedSession {
  sessionId: number;
  visitorId: number;
  startedAt: string;
  lastSeenAt: string;
  pageviews: number;
  events: number;
  userId?: string;
  referrerDomain?: string;
  utmSource?: string;
  browser?: string;
  os?: string;
  device?: string;
}

export async function insertSessions(pg: Client, installationId: string, sessions: SeedSession[]): Promise<void> {
  for (const s of sessions) {
    await pg.query(
      `INSERT INTO analytics.sessions (installation_id, session_id, visitor_id, user_id, started_at, last_seen_at, pageviews, events, referrer_domain, utm_source, browser, os, device)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
      [installationId, s.sessionId, s.visitorId, s.userId ?? null, s.startedAt, s.lastSeenAt, s.pageviews, s.events, s.referrerDomain ?? null, s.utmSource ?? null, s.browser ?? null, s.os ?? null, s.device ?? null],
    );
  }
}

export async function insertUser(pg: Client, installationId: string, user: { userId: string; traits?: Record<string, unknown>; firstSeenAt: string; lastSeenAt: string }): Promise<void> {
  await pg.query(`INSERT INTO analytics.users (installation_id, user_id, traits, first_seen_at, last_seen_at) VALUES ($1, $2, $3, $4, $5)`, [
    installationId,
    user.userId,
    JSON.stringify(user.traits ?? {}),
    user.firstSeenAt,
    user.lastSeenAt,
  ]);
}

/** Rows of each analytics table recorded for an installation. */
export async function rowCounts(pg: Client, installationId: string): Promise<Record<'events' | 'sessions' | 'users' | 'funnels', number>> {
  const out: Record<string, number> = {};
  for (const table of ['events', 'sessions', 'users', 'funnels']) {
    const { rows } = await pg.query(`SELECT count(*)::int AS n FROM analytics.${table} WHERE installation_id = $1`, [installationId]);
    out[table] = rows[0].n;
  }
  return out as Record<'events' | 'sessions' | 'users' | 'funnels', number>;
}

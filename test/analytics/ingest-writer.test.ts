import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DataSource } from 'typeorm';
import type { PlatformConfig } from '../../core/config';
import { openSubgraphDatabase } from '../../core/database';
import { ID_PREFIX, newId } from '../../core/ids';
import type { Logger } from '../../core/logger';
import { createPlatformPubSub, type PlatformPubSub } from '../../core/pubsub';
import { createRedis, type Redis } from '../../core/redis';
import { analyticsSubgraph } from '../../subgraphs/analytics';
import { createIngest, type AnalyticsIngest, type IngestOptions } from '../../subgraphs/analytics/ingest';
import { resolveIngestOptions } from '../../subgraphs/analytics/ingest/options';
import { createPartitionKeeper } from '../../subgraphs/analytics/ingest/partitions';
import type { IngestEvent } from '../../subgraphs/analytics/ingest/payload';
import { createEventWriter, type AcceptedVisit } from '../../subgraphs/analytics/ingest/writer';
import { createTestConfig, createTestDatabase, eventually, TEST_REDIS_URL, type TestDatabase } from '../services';

/* createIngest on its own (no edge): the batch writer, its partitions, retries, bound and graceful close. */

const UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0';
const ORIGIN = 'https://app.example.com';
/** A documentation address: easy to look for in every row. */
const CLIENT_IP = '203.0.113.77';

let database: TestDatabase;
let dataSource: DataSource;
let redis: Redis;
let pubsub: PlatformPubSub;
let config: PlatformConfig;
const warnings: string[] = [];
const logger: Logger = { debug: () => undefined, info: () => undefined, warn: (message) => void warnings.push(message), error: () => undefined, child: () => logger };

/** An ingest served on a port of its own, its requests carrying an envelope with CLIENT_IP. */
interface Served {
  ingest: AnalyticsIngest;
  post(name: string, body: unknown): Promise<Response>;
  stop(): Promise<void>;
}

async function serve(options: IngestOptions): Promise<Served> {
  const ingest = createIngest({ config, dataSource, redis, pubsub, logger, installationChanged: async () => undefined }, options);
  const server: Server = createServer((req, res) => {
    void ingest.routes.handle(req, res, { principal: null, requestId: newId('req'), clientIp: CLIENT_IP, iat: Math.floor(Date.now() / 1000) });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/analytics-public/`;
  return {
    ingest,
    post: (name, body) => fetch(`${url}${name}`, { method: 'POST', headers: { 'content-type': 'text/plain', origin: ORIGIN, 'user-agent': UA }, body: JSON.stringify(body) }),
    stop: async () => {
      await ingest.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function install(): Promise<{ id: string; key: string }> {
  const id = newId(ID_PREFIX.installation);
  const key = newId('pk', 24);
  await dataSource.query(`INSERT INTO analytics.installations (id, workspace_id, name, domains, public_key) VALUES ($1, 'ws_ingest_writer', 'writer test', $2, $3)`, [id, ['app.example.com'], key]);
  return { id, key };
}

const countOf = async (installationId: string): Promise<number> => (await dataSource.query(`SELECT count(*)::int AS n FROM analytics.events WHERE installation_id = $1`, [installationId]))[0].n;
/** The UTC day, as the salts are kept. */
const today = (): string => new Date().toISOString().slice(0, 10);
const pageviews = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i}`, url: `${ORIGIN}/p/${i}` }));

beforeAll(async () => {
  database = await createTestDatabase('t_analytics_ingest');
  config = createTestConfig({ databaseUrl: database.url, prefix: database.name });
  dataSource = await openSubgraphDatabase({ url: database.url, schema: 'analytics', entities: analyticsSubgraph.entities, migrations: analyticsSubgraph.migrations });
  redis = createRedis(TEST_REDIS_URL);
  pubsub = createPlatformPubSub(TEST_REDIS_URL, database.name);
}, 60_000);

afterAll(async () => {
  // The visit state, user mappings and dedupe marks of this run would otherwise stay a day.
  if (redis && config) {
    const keys = await keysUnder(redis, `${config.redisPrefix}:an:`);
    if (keys.length) await redis.unlink(...keys);
  }
  redis?.disconnect();
  await pubsub?.close();
  await dataSource?.destroy();
  await database?.drop();
});

describe('the ingestion batch writer', () => {
  // First, on a database whose events all went to the default partition so far.
  it('keeps writing to the default partition when it already holds rows of the month (and says so once)', async () => {
    const site = await install();
    await dataSource.query(
      `INSERT INTO analytics.events (installation_id, ts, event_id, kind, name, visitor_id, session_id) VALUES ($1, now(), 'pre-existing', 'pageview', 'pageview', 1, 1)`,
      [site.id],
    );
    const served = await serve({ flushIntervalMs: 60_000 });
    try {
      expect((await served.post('track', { key: site.key, events: pageviews(3, 'dflt') })).status).toBe(202);
      await served.ingest.flush();
      expect((await served.post('track', { key: site.key, events: pageviews(2, 'dflt2') })).status).toBe(202);
      await served.ingest.flush();
      const places = await dataSource.query(`SELECT tableoid::regclass::text AS place, count(*)::int AS n FROM analytics.events WHERE installation_id = $1 GROUP BY 1`, [site.id]);
      expect(places).toEqual([{ place: 'analytics.events_default', n: 6 }]);
      expect(warnings.filter((w) => w.includes('default partition'))).toHaveLength(1);
    } finally {
      await served.stop();
    }
    // Cleared, so the next tests see this month's partition made.
    await dataSource.query(`DELETE FROM analytics.events_default`);
  });

  it('creates the monthly partition of the events\' month (and the next one ahead) and writes there', async () => {
    const site = await install();
    const served = await serve({ flushIntervalMs: 60_000 });
    try {
      expect((await served.post('track', { key: site.key, events: pageviews(4, 'part') })).status).toBe(202);
      await served.ingest.flush();
      const now = new Date();
      const month = `${now.getUTCFullYear()}_${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
      const places = await dataSource.query(`SELECT DISTINCT tableoid::regclass::text AS place FROM analytics.events WHERE installation_id = $1`, [site.id]);
      expect(places).toEqual([{ place: `analytics.events_${month}` }]);
      const bounds = await dataSource.query(
        `SELECT pg_get_expr(c.relpartbound, c.oid) AS bound FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'analytics' AND c.relname = $1`,
        [`events_${month}`],
      );
      expect(bounds[0].bound).toMatch(/FOR VALUES FROM \('.+'\) TO \('.+'\)/);
      // Within a week of the month's end, the next month's partition is made ahead.
      const ahead = new Date(Date.now() + 7 * 86_400_000);
      const aheadName = `events_${ahead.getUTCFullYear()}_${String(ahead.getUTCMonth() + 1).padStart(2, '0')}`;
      const [{ exists }] = await dataSource.query(`SELECT to_regclass($1) IS NOT NULL AS exists`, [`analytics.${aheadName}`]);
      expect(exists).toBe(true);
    } finally {
      await served.stop();
    }
  });

  it('writes everything accepted on close(), then refuses (503)', async () => {
    const site = await install();
    // A timer that never fires within the test: only close() writes.
    const served = await serve({ flushIntervalMs: 60_000 });
    let stopped = false;
    try {
      for (let i = 0; i < 5; i++) {
        const res = await served.post('track', { key: site.key, events: pageviews(20, `close-${i}`) });
        expect(await res.json()).toEqual({ accepted: 20, duplicates: 0, dropped: 0 });
      }
      const identify = await served.post('identify', { key: site.key, userId: 'u-close', traits: { plan: 'pro' } });
      expect(identify.status).toBe(202);
      expect(served.ingest.bufferedRows).toBe(101);
      expect(await countOf(site.id)).toBe(0);

      await served.ingest.close();
      expect(served.ingest.bufferedRows).toBe(0);
      expect(await countOf(site.id)).toBe(101);
      const [user] = await dataSource.query(`SELECT traits FROM analytics.users WHERE installation_id = $1 AND user_id = 'u-close'`, [site.id]);
      expect(user.traits).toEqual({ plan: 'pro' });

      const after = await served.post('track', { key: site.key, url: `${ORIGIN}/late` });
      expect(after.status).toBe(503);
      expect((await after.json()).error.code).toBe('UNAVAILABLE');
      await served.stop();
      stopped = true;
    } finally {
      if (!stopped) await served.stop();
    }
  });

  it('flushes on its own at flushRows or every flushIntervalMs', async () => {
    const site = await install();
    const served = await serve({ flushIntervalMs: 100, flushRows: 50 });
    try {
      await served.post('track', { key: site.key, events: pageviews(60, 'auto') });
      await eventually(async () => (await countOf(site.id)) === 60, 5000, 'the timer or the size to flush');
    } finally {
      await served.stop();
    }
  });

  it('keeps the rows of a failed flush and retries with backoff; past maxBufferedRows it answers 503', async () => {
    const site = await install();
    const served = await serve({ flushIntervalMs: 50, maxBufferedRows: 30, retryDelayMs: 50, maxRetryDelayMs: 200 });
    // The sessions upsert fails while its table is away: the whole batch rolls back.
    await dataSource.query(`ALTER TABLE analytics.sessions RENAME TO sessions_away`);
    let renamed = true;
    try {
      expect((await served.post('track', { key: site.key, events: pageviews(20, 'retry') })).status).toBe(202);
      expect((await served.post('track', { key: site.key, events: pageviews(15, 'retry2') })).status).toBe(202);
      // 35 waiting, bound 30: refused rather than grown.
      const refused = await served.post('track', { key: site.key, events: pageviews(1, 'retry3') });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await countOf(site.id)).toBe(0);
      expect(served.ingest.bufferedRows).toBe(35);

      await dataSource.query(`ALTER TABLE analytics.sessions_away RENAME TO sessions`);
      renamed = false;
      await eventually(async () => served.ingest.bufferedRows === 0, 5000, 'the retried flush');
      expect(await countOf(site.id)).toBe(35);
      // Each row once: the failed attempts left nothing behind.
      const [{ distinct }] = await dataSource.query(`SELECT count(DISTINCT event_id)::int AS distinct FROM analytics.events WHERE installation_id = $1`, [site.id]);
      expect(distinct).toBe(35);
      const [session] = await dataSource.query(`SELECT pageviews FROM analytics.sessions WHERE installation_id = $1`, [site.id]);
      expect(session.pageviews).toBe(35);
      expect((await served.post('track', { key: site.key, events: pageviews(1, 'retry4') })).status).toBe(202);
    } finally {
      if (renamed) await dataSource.query(`ALTER TABLE analytics.sessions_away RENAME TO sessions`);
      await served.stop();
    }
  });

  it('drops, when writing, the events of an installation deleted meanwhile', async () => {
    const kept = await install();
    const deleted = await install();
    const served = await serve({ flushIntervalMs: 60_000 });
    try {
      await served.post('track', { key: kept.key, events: pageviews(2, 'kept') });
      await served.post('identify', { key: deleted.key, userId: 'gone' });
      await dataSource.query(`DELETE FROM analytics.installations WHERE id = $1`, [deleted.id]);
      await served.ingest.flush();
      expect(await countOf(kept.id)).toBe(2);
      expect(await countOf(deleted.id)).toBe(0);
      expect(await dataSource.query(`SELECT 1 FROM analytics.sessions WHERE installation_id = $1`, [deleted.id])).toEqual([]);
    } finally {
      await served.stop();
    }
  });

  it('drops alone a request whose values the database refuses; the rest of its batch is written, and the writer goes on', async () => {
    const site = await install();
    const writer = createEventWriter({ dataSource, partitions: createPartitionKeeper(dataSource, logger), logger, options: resolveIngestOptions({ flushIntervalMs: 60_000 }) });
    const event = (id: string, name: string): IngestEvent => ({ kind: 'event', id, name, ts: Date.now(), url: null, referrer: null, referrerDomain: null, screenWidth: null, userId: null, props: null, traits: null });
    const visit = (sessionId: string, events: IngestEvent[]): AcceptedVisit => ({ installationId: site.id, visitorId: '-42', sessionId, userId: null, browser: 'Chrome', os: 'Windows', device: 'desktop', events });
    try {
      writer.add(visit('101', [event('ok-1', 'fine "quoted" \\ name')]));
      // A NUL slipped past validation: PostgreSQL refuses the whole statement (22021).
      writer.add(visit('102', [event('bad-1', 'nul\u0000'), event('bad-2', 'fine')]));
      writer.add(visit('103', [event('ok-2', 'fine, too')]));
      await writer.flush();
      expect(writer.bufferedRows).toBe(0);
      const rows = await dataSource.query(`SELECT event_id, name FROM analytics.events WHERE installation_id = $1 ORDER BY event_id`, [site.id]);
      expect(rows).toEqual([
        { event_id: 'ok-1', name: 'fine "quoted" \\ name' },
        { event_id: 'ok-2', name: 'fine, too' },
      ]);
      writer.add(visit('104', [event('ok-3', 'after')]));
      await writer.flush();
      expect(await countOf(site.id)).toBe(3);
    } finally {
      await writer.close();
    }
  });

  it('stores no trace of the client address (events, sessions, users, salts, Redis)', async () => {
    const site = await install();
    const served = await serve({ flushIntervalMs: 60_000 });
    try {
      await served.post('identify', { key: site.key, id: 'ip-1', userId: 'u-ip', traits: { a: 1 } });
      await served.post('track', { key: site.key, id: 'ip-2', url: `${ORIGIN}/x`, referrer: 'https://news.example.org/' });
      await served.ingest.flush();
      expect(await countOf(site.id)).toBe(2);
      for (const table of ['events', 'sessions', 'users', 'salts', 'installations']) {
        const [{ n }] = await dataSource.query(`SELECT count(*)::int AS n FROM analytics.${table} t WHERE row_to_json(t)::text LIKE $1`, [`%${CLIENT_IP}%`]);
        expect({ table, n }).toEqual({ table, n: 0 });
      }
      const keys = await keysUnder(redis, `${config.redisPrefix}:`);
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) {
        const value = (await redis.type(key)) === 'string' ? await redis.get(key) : '';
        expect(`${key} ${value}`).not.toContain(CLIENT_IP);
      }
    } finally {
      await served.stop();
    }
  });

  it('agrees on one salt per day across processes and keeps two days of them', async () => {
    const site = await install();
    await dataSource.query(`INSERT INTO analytics.salts (day, salt) VALUES ($1::date - 5, '\\x00'), ($1::date - 1, '\\x01') ON CONFLICT DO NOTHING`, [today()]);
    // Two ingests, as two processes would be: the same visitor id for the same visitor.
    const [a, b] = [await serve({ flushIntervalMs: 60_000 }), await serve({ flushIntervalMs: 60_000 })];
    try {
      await Promise.all([a.post('track', { key: site.key, id: 'salt-a', url: `${ORIGIN}/` }), b.post('track', { key: site.key, id: 'salt-b', url: `${ORIGIN}/` })]);
      await a.ingest.flush();
      await b.ingest.flush();
      const rows = await dataSource.query(`SELECT event_id, visitor_id, session_id FROM analytics.events WHERE installation_id = $1 ORDER BY event_id`, [site.id]);
      expect(rows).toHaveLength(2);
      expect(rows[0].visitor_id).toBe(rows[1].visitor_id);
      expect(rows[0].session_id).toBe(rows[1].session_id);
      const days = await dataSource.query(`SELECT ($1::date - day) AS age FROM analytics.salts ORDER BY day`, [today()]);
      expect(days.map((d: { age: number }) => d.age)).toEqual([1, 0]);
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});

/** The keys under a prefix, by SCAN: KEYS would block the Redis every test file shares. */
async function keysUnder(redis: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys;
}

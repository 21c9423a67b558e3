/**
 * bench/analytics: ingestion throughput over HTTP on loopback, and report latency on 1 million
 * events.
 *
 * 1. Ingestion: `--connections` clients send batches of `--batch` events (pageviews to POST
 *    /v1/analytics/track and custom events to /event by turns, a different visitor per request) through the platform's
 *    edge for `--duration` seconds, closed loop; beside it, a bare node http handler that parses
 *    the same bodies and answers 202 (the ceiling of HTTP + JSON on this machine). Then every
 *    accepted event must be in analytics.events (none lost).
 * 2. Reports: 1 million events (and their sessions) generated with SQL in another installation
 *    over 30 days; the stats once from the sessions alone (the baseline); the days then counted as
 *    written and rolled up by the platform's own roller; then stats, timeseries (day and hour
 *    buckets) and a 3-step funnel analysis through the REST API, each `--rounds` times (median
 *    and worst).
 *
 * The platform (identity, analytics, edge) runs in one process as `npm start` runs it; the load
 * generator and the bare handler in this one.
 *
 * Usage: npm run bench:analytics [-- --duration 10 --connections 16 --batch 50 --events 1000000 --rounds 5 --rate 25000]
 */
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { Pool } from 'undici';
import { REPO_ROOT } from '../../core/paths';
import { benchDatabase, benchPlatformEnv, cpuSeconds, pidsNamed, startService, waitForService } from '../processes';

const args = process.argv.slice(2);
const arg = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(args[i + 1]);
};
const DURATION = arg('duration', 10);
const CONNECTIONS = arg('connections', 16);
const BATCH = arg('batch', 50);
const EVENTS = arg('events', 1_000_000);
const ROUNDS = arg('rounds', 5);
/** Events/s of the open-loop run. */
const RATE = arg('rate', 25_000);
const PG_ADMIN = process.env.BENCH_DATABASE_ADMIN_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
const REDIS = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PORT = 14580;
const ORIGIN = 'https://bench.example';
const PAGES = Array.from({ length: 40 }, (_, i) => `/page/${i}`);

const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** A batch body of one visitor (the user agent below): pageviews for /track (even requests), custom events for /event (odd ones). */
function batchBody(key: string, seq: number): string {
  const events = [];
  for (let i = 0; i < BATCH; i++) {
    const id = `b${process.pid}-${seq}-${i}`;
    if (seq % 2 === 1) events.push({ id, name: i % 3 ? 'signup' : 'checkout', props: { plan: i % 2 ? 'pro' : 'free' }, url: `${ORIGIN}/signup` });
    else events.push({ id, url: `${ORIGIN}${PAGES[(seq + i) % PAGES.length]}?utm_source=bench`, referrer: 'https://news.example/item' });
  }
  return JSON.stringify({ key, events });
}

/** Event ids stay unique across phases (a repeated id is a duplicate, and dropped). */
let sequence = 0;

interface IngestResult {
  requests: number;
  failures: number;
  /** Failures by status (or `error`), with the first answer of each. */
  failed: Record<string, { count: number; sample: string }>;
  accepted: number;
  eventsPerSecond: number;
  p50: number;
  p99: number;
}

/**
 * Sends batches to `url` and tallies the answers. Closed loop (`rate` undefined): each of
 * CONNECTIONS clients sends the next batch when the last answered. Open loop (`rate` events/s):
 * a batch is due every BATCH / rate seconds whatever the answers, and its latency runs from when
 * it was due, so a stalled server cannot hide its backlog.
 */
async function ingest(url: string, key: string, seconds: number, rate?: number): Promise<IngestResult> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: rate === undefined ? CONNECTIONS : 64, pipelining: 1 });
  const latencies: number[] = [];
  let failures = 0;
  const failed: IngestResult['failed'] = {};
  const fail = (kind: string, sample: string) => {
    failures++;
    (failed[kind] ??= { count: 0, sample: sample.slice(0, 200) }).count++;
  };
  let accepted = 0;
  const send = async (since: number): Promise<void> => {
    const n = sequence++;
    try {
      const response = await pool.request({
        // Pageviews to /track, custom events to /event (the bare handler answers any path).
        path: target.pathname.replace(/\/(track|event)$/, n % 2 ? '/event' : '/track'),
        method: 'POST',
        headers: {
          'content-type': 'text/plain',
          origin: ORIGIN,
          'user-agent': `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.${n % 5000}.0 Safari/537.36`,
        },
        body: batchBody(key, n),
      });
      const text = await response.body.text();
      if (response.statusCode === 202) {
        latencies.push(performance.now() - since);
        accepted += Number((JSON.parse(text) as { accepted?: number }).accepted ?? BATCH);
      } else fail(String(response.statusCode), text);
    } catch (err) {
      fail('error', String(err));
    }
  };
  const started = performance.now();
  const deadline = started + seconds * 1000;
  if (rate === undefined) {
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (performance.now() < deadline) await send(performance.now());
      }),
    );
  } else {
    const interval = (BATCH / rate) * 1000;
    const pending: Array<Promise<void>> = [];
    for (let i = 0; ; i++) {
      const due = started + i * interval;
      if (due >= deadline) break;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      pending.push(send(due));
    }
    await Promise.all(pending);
  }
  const elapsed = Math.max(seconds, (performance.now() - started) / 1000);
  await pool.close();
  const sorted = Float64Array.from(latencies).sort();
  return { requests: latencies.length + failures, failures, failed, accepted, eventsPerSecond: accepted / elapsed, p50: sorted[Math.floor(sorted.length / 2)] ?? NaN, p99: sorted[Math.floor(sorted.length * 0.99)] ?? NaN };
}

/** The same bodies, parsed and answered 202 by a bare handler. */
function startBare(): Promise<{ url: string; close: () => void }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { events: unknown[] };
      const payload = JSON.stringify({ accepted: body.events.length, duplicates: 0, dropped: 0 });
      res.writeHead(202, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
      res.end(payload);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/event`, close: () => server.close() })));
}

/** 1M events over 30 days in one installation, with their sessions (5 events a visit, 2 visits a visitor), as ingestion would have written them. */
async function generate(pg: Client, installationId: string, events: number): Promise<{ from: Date; to: Date }> {
  const to = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
  const from = new Date(to.getTime() - 30 * 86_400_000);
  // Monthly partitions, as the writer creates them.
  for (let t = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), 1)); t <= to; t = new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth() + 1, 1))) {
    const next = new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth() + 1, 1));
    const name = `events_${t.getUTCFullYear()}_${String(t.getUTCMonth() + 1).padStart(2, '0')}`;
    await pg.query(`CREATE TABLE IF NOT EXISTS analytics.${name} PARTITION OF analytics.events FOR VALUES FROM ('${t.toISOString()}') TO ('${next.toISOString()}')`);
  }
  const sessions = Math.ceil(events / 5);
  const span = (to.getTime() - from.getTime()) / 1000;
  // Session s starts at a pseudo-random second of the month; its events are 1 minute apart; the 4th is a signup for 1 in 3 sessions, a checkout for 1 in 6, a purchase for 1 in 12.
  await pg.query(
    `INSERT INTO analytics.sessions (installation_id, session_id, visitor_id, started_at, last_seen_at, pageviews, events, entry_path, exit_path, hostname, referrer_domain, utm_source, browser, os, device)
     SELECT $1, s, s / 2, $2::timestamptz + ((s * 7919) % $3::int) * interval '1 second', $2::timestamptz + ((s * 7919) % $3::int) * interval '1 second' + interval '4 minutes',
            CASE WHEN s % 4 = 0 THEN 1 ELSE 4 END, 5, '/page/' || (s % 40), '/page/' || ((s + 3) % 40), 'bench.example',
            (ARRAY['google.com', 'news.ycombinator.com', 'twitter.com', NULL])[1 + s % 4], (ARRAY['newsletter', NULL, NULL])[1 + s % 3],
            (ARRAY['Chrome', 'Firefox', 'Safari'])[1 + s % 3], (ARRAY['Linux', 'Windows', 'macOS', 'iOS'])[1 + s % 4], (ARRAY['desktop', 'mobile', 'tablet'])[1 + s % 3]
       FROM generate_series(1, $4::int) s`,
    [installationId, from, Math.floor(span), sessions],
  );
  await pg.query(
    `INSERT INTO analytics.events (installation_id, ts, event_id, kind, name, visitor_id, session_id, hostname, path, referrer_domain, utm_source, browser, os, device)
     SELECT $1, $2::timestamptz + ((s * 7919) % $3::int) * interval '1 second' + k * interval '1 minute', 'g' || g,
            CASE WHEN k = 3 AND (s % 3 = 0 OR s % 6 = 0) THEN 'event' ELSE 'pageview' END,
            CASE WHEN k = 3 AND s % 12 = 0 THEN 'purchase' WHEN k = 3 AND s % 6 = 0 THEN 'checkout' WHEN k = 3 AND s % 3 = 0 THEN 'signup' ELSE '$pageview' END,
            s / 2, s, 'bench.example', '/page/' || ((s + k) % 40),
            (ARRAY['google.com', 'news.ycombinator.com', 'twitter.com', NULL])[1 + s % 4], (ARRAY['newsletter', NULL, NULL])[1 + s % 3],
            (ARRAY['Chrome', 'Firefox', 'Safari'])[1 + s % 3], (ARRAY['Linux', 'Windows', 'macOS', 'iOS'])[1 + s % 4], (ARRAY['desktop', 'mobile', 'tablet'])[1 + s % 3]
       FROM generate_series(0, $4::int - 1) g, LATERAL (SELECT 1 + g / 5 AS s, g % 5 AS k) x`,
    [installationId, from, Math.floor(span), events],
  );
  // The writer keeps pageviews per hour and path with the events: the same here.
  await pg.query(
    `INSERT INTO analytics.page_hours (installation_id, hour, path, pageviews)
     SELECT installation_id, date_bin('1 hour', ts, '2000-01-01T00:00:00Z'), COALESCE(path, ''), count(*)::int
       FROM analytics.events WHERE installation_id = $1 AND name = '$pageview' GROUP BY 1, 2, 3`,
    [installationId],
  );
  await pg.query('ANALYZE analytics.events');
  await pg.query('ANALYZE analytics.page_hours');
  await pg.query('ANALYZE analytics.sessions');
  return { from, to };
}

/**
 * Counts the generated days as written, an hour ago (as the writer would have), and waits for the
 * platform's own roller (every 10 s, days quiet for a minute) to roll them all up.
 */
async function rollUp(pg: Client, installationId: string, from: Date, to: Date): Promise<number> {
  const { rowCount } = await pg.query(
    `INSERT INTO analytics.session_day_writes (installation_id, day, writes, written_at)
     SELECT $1, d::date, 1, now() - interval '1 hour'
       FROM generate_series(($2::timestamptz AT TIME ZONE 'UTC')::date, ($3::timestamptz AT TIME ZONE 'UTC')::date, interval '1 day') d`,
    [installationId, from, to],
  );
  const deadline = Date.now() + 120_000;
  for (;;) {
    const { rows } = await pg.query(`SELECT count(*)::int AS n FROM analytics.session_day_writes WHERE installation_id = $1 AND rolled_writes IS DISTINCT FROM writes`, [installationId]);
    if (rows[0].n === 0) break;
    if (Date.now() > deadline) throw new Error(`${rows[0].n} days still not rolled up after 120 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
  await pg.query('ANALYZE analytics.session_days');
  return rowCount ?? 0;
}

async function main() {
  const dbName = `bench_an_${process.pid}`;
  const database = await benchDatabase(PG_ADMIN, dbName);
  const databaseUrl = database.url;
  const env = benchPlatformEnv({ databaseUrl, redisUrl: REDIS, prefix: `bench-an-${process.pid}`, services: 'identity,analytics,gateway', port: PORT });
  const platform = startService('platform', 'scripts/start.js', env);
  const bare = await startBare();
  const base = `http://127.0.0.1:${PORT}/v1`;
  const lines: string[] = [];
  let pg: Client | undefined;
  try {
    // /readyz wants every subgraph; these three are enough here.
    await waitForService(`http://127.0.0.1:${PORT}/healthz`, { timeoutMs: 90_000 });
    const login = await fetch(`${base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: env.PLATFORM_ADMIN_PASSWORD }) });
    if (!login.ok) throw new Error(`login failed: ${login.status} ${await login.text()}`);
    const { accessToken } = (await login.json()) as { accessToken: string };
    const auth = { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' };
    const api = async (method: string, route: string, body?: unknown) => {
      const response = await fetch(`${base}${route}`, { method, headers: auth, body: body === undefined ? undefined : JSON.stringify(body) });
      const json = (await response.json()) as any;
      if (!response.ok) throw new Error(`${method} ${route} answered ${response.status}: ${JSON.stringify(json)}`);
      return json;
    };
    const live = await api('POST', '/analytics/installations', { name: 'bench live', domains: ['bench.example'] });
    const seeded = await api('POST', '/analytics/installations', { name: 'bench 1M', domains: ['bench.example'] });
    pg = new Client({ connectionString: databaseUrl });
    await pg.connect();

    // 1. Ingestion.
    const eventUrl = `${base}/analytics/event`;
    await ingest(eventUrl, live.publicKey, 2); // warm-up
    await fetch(bare.url, { method: 'POST', body: batchBody('pk', 0) });
    const bareResult = await ingest(bare.url, live.publicKey, Math.max(3, DURATION / 2));
    const stores = pidsNamed(['postgres', 'redis-server']);
    const cpu0 = [cpuSeconds([platform.pid!]), cpuSeconds(stores)];
    const count = async () => Number((await pg!.query(`SELECT count(*)::int AS n FROM analytics.events WHERE installation_id = $1`, [live.id])).rows[0].n);
    /** Rows written since `before`, once they reach `expected` (the writer flushes every 200 ms) or after a minute. */
    const storedSince = async (before: number, expected: number): Promise<number> => {
      let stored = 0;
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        stored = (await count()) - before;
        if (stored >= expected) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      return stored;
    };
    const before = await count();
    const result = await ingest(eventUrl, live.publicKey, DURATION);
    // None lost: every accepted event is written.
    const stored = await storedSince(before, result.accepted);
    const cpuPer1k = [(cpuSeconds([platform.pid!]) - cpu0[0]) * 1e6 / Math.max(1, result.accepted), (cpuSeconds(stores) - cpu0[1]) * 1e6 / Math.max(1, result.accepted)];
    // Open loop at RATE events/s: what a site sending that much sees (refusals, latency).
    const pacedBefore = await count();
    const paced = await ingest(eventUrl, live.publicKey, DURATION, RATE);
    const pacedStored = await storedSince(pacedBefore, paced.accepted);

    // 2. Reports on 1M events.
    const t0 = performance.now();
    const { from, to } = await generate(pg, seeded.id, EVENTS);
    const generatedIn = (performance.now() - t0) / 1000;
    const funnel = await api('POST', '/analytics/funnels', {
      installationId: seeded.id,
      name: 'bench funnel',
      steps: [
        { type: 'event', match: 'signup' },
        { type: 'event', match: 'checkout' },
        { type: 'event', match: 'purchase' },
      ],
      windowSeconds: 7 * 86_400,
    });
    const range = `installationId=${seeded.id}&from=${from.toISOString()}&to=${to.toISOString()}`;
    const timings: Array<[string, number[], number]> = [];
    const measure = async (name: string, route: string, target: number): Promise<void> => {
      await api('GET', route); // first run: plans and caches
      const ms: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const q0 = performance.now();
        await api('GET', route);
        ms.push(performance.now() - q0);
      }
      timings.push([name, ms, target]);
    };
    // Baseline: before the days are rolled up, the stats read every session of the window.
    await measure('stats (30 days) from the sessions alone, before the daily rollup (baseline)', `/analytics/stats?${range}`, 300);
    const r0 = performance.now();
    const rolledDays = await rollUp(pg, seeded.id, from, to);
    const rolledIn = (performance.now() - r0) / 1000;
    const queries: Array<[string, string, number]> = [
      ['stats (30 days)', `/analytics/stats?${range}`, 300],
      ['timeseries, visitors by day', `/analytics/dashboard/timeseries?${range}&interval=day&metric=visitors`, 300],
      ['timeseries, pageviews by hour', `/analytics/dashboard/timeseries?${range}&interval=hour&metric=pageviews`, 300],
      ['funnel analyze (3 steps, 7-day window)', `/analytics/funnels/${funnel.id}/analyze?from=${from.toISOString()}&to=${to.toISOString()}`, 1000],
    ];
    for (const [name, route, target] of queries) await measure(name, route, target);

    const date = new Date().toISOString().slice(0, 10);
    lines.push(`\n## bench/analytics — ${date}\n`);
    lines.push(`Command: \`npm run bench:analytics -- --duration ${DURATION} --connections ${CONNECTIONS} --batch ${BATCH} --events ${EVENTS} --rounds ${ROUNDS} --rate ${RATE}\``);
    lines.push(
      `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}; the platform (identity, analytics, edge) in one process as npm start runs it; the load generator and the bare handler in another, on loopback.\n`,
    );
    lines.push('| ingestion path | requests | failures | events accepted | events/s | p50 ms | p99 ms |');
    lines.push('|---|---|---|---|---|---|---|');
    lines.push(`| bare node http handler (parse, 202) | ${bareResult.requests} | ${bareResult.failures} | ${bareResult.accepted} | ${bareResult.eventsPerSecond.toFixed(0)} | ${fmt(bareResult.p50)} | ${fmt(bareResult.p99)} |`);
    lines.push(`| POST /v1/analytics/track and /event through the edge, ${BATCH} events a request, ${CONNECTIONS} connections | ${result.requests} | ${result.failures} | ${result.accepted} | ${result.eventsPerSecond.toFixed(0)} | ${fmt(result.p50)} | ${fmt(result.p99)} |`);
    lines.push(`| the same, open loop at ${RATE.toLocaleString('en')} events/s | ${paced.requests} | ${paced.failures} | ${paced.accepted} | ${paced.eventsPerSecond.toFixed(0)} | ${fmt(paced.p50)} | ${fmt(paced.p99)} |`);
    lines.push('');
    lines.push(`- sustained for ${DURATION} s: **${result.eventsPerSecond.toFixed(0)} events/s** (target ≥ 20,000), ratio to the bare handler ${(result.eventsPerSecond / bareResult.eventsPerSecond).toFixed(2)}; stored ${stored} of ${result.accepted} accepted (**${result.accepted - stored} lost**)`);
    if (result.failures) lines.push(`- closed loop, refused requests by status (the writer's backlog past maxBufferedRows answers 503 until it drains): ${Object.entries(result.failed).map(([kind, f]) => `${kind} × ${f.count} (first: \`${f.sample.replace(/`/g, "'")}\`)`).join('; ')}`);
    lines.push(`- open loop at ${RATE.toLocaleString('en')} events/s: stored ${pacedStored} of ${paced.accepted} accepted (**${paced.accepted - pacedStored} lost**)`);
    if (paced.failures) lines.push(`- open loop, refused requests by status: ${Object.entries(paced.failed).map(([kind, f]) => `${kind} × ${f.count} (first: \`${f.sample.replace(/`/g, "'")}\`)`).join('; ')}`);
    // CPU seconds × 1e6 / events = CPU µs per event = CPU ms per 1,000 events.
    lines.push(`- CPU per 1,000 events: platform process **${cpuPer1k[0].toFixed(1)} ms**, PostgreSQL + Redis **${cpuPer1k[1].toFixed(1)} ms**`);
    lines.push('');
    lines.push(`Reports on ${EVENTS.toLocaleString('en')} generated events (${Math.ceil(EVENTS / 5).toLocaleString('en')} sessions, 30 days; generated in ${generatedIn.toFixed(1)} s; the platform's roller then rolled up ${rolledDays} days in ${rolledIn.toFixed(1)} s, its 10 s timer included), through the REST API, ${ROUNDS} runs after a first:`);
    lines.push('');
    lines.push('| query | median ms | worst ms | target ms |');
    lines.push('|---|---|---|---|');
    for (const [name, ms, target] of timings) lines.push(`| ${name} | ${fmt(median(ms))} | ${fmt(Math.max(...ms))} | ≤ ${target} |`);
    const text = lines.join('\n') + '\n';
    process.stdout.write(text);
    appendFileSync(path.join(REPO_ROOT, 'bench', 'RESULTS.md'), text);
  } finally {
    bare.close();
    await pg?.end().catch(() => undefined);
    platform.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, process.env.BENCH_CPU_PROF ? 8000 : 2000));
    if (platform.exitCode === null) platform.kill('SIGKILL');
    await database.drop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${(err as Error).stack ?? err}\n`);
    process.exit(1);
  },
);

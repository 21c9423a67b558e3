/**
 * bench/gateway: the same one-subgraph read measured five ways, side by side in one run on
 * loopback:
 *   direct   POST the query to the identity subgraph (signed envelope, as the gateway would)
 *   gateway  POST the query to our gateway (auth, depth/cost limits, planning, signing, one HTTP
 *            hop), request rate limits off (RATE_LIMITS_DISABLED=true)
 *   limited  the same through a second gateway with request rate limits on (one Redis round-trip
 *            per request, workspace limits from billing, cached), budgets too large to refuse
 *   rest     GET /v1/auth/profile (REST layer → our gateway → subgraph): the same data
 *   stock    POST the query to a stock @apollo/gateway in @apollo/server's standalone server
 *            in front of the same subgraph (the baseline the issue quotes)
 * Each is run saturated (requests/s, p50/p99) and at a fixed 200 requests/s (p50/p99), and
 * ratios are reported. Every service runs in its own process, as docker-compose runs them;
 * the load generator (bench/load.ts) runs in this process.
 *
 * Usage: npm run bench:gateway [-- --duration 10 --connections 16]
 */
import type { ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../../core/paths';
import { ENVELOPE_HEADER, signEnvelope } from '../../core/principal';
import { loadConfig } from '../../core/config';
import { MAX_LIMIT_VALUE } from '../../core/rate-limits';
import { apiSchemaOf } from '../../gateway';
import { createRestHandler } from '../../rest-compat';
import { createLogger } from '../../core/logger';
import { benchDatabase, startService, waitForService } from '../processes';
import { fixedRate, saturate, type BenchRequest, type LoadResult } from '../load';

const args = process.argv.slice(2);
const arg = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(args[i + 1]);
};
const DURATION = arg('duration', 10);
const CONNECTIONS = arg('connections', 16);
const FIXED_RATE = 200;
const PG_ADMIN = process.env.BENCH_DATABASE_ADMIN_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
const REDIS = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PORTS = { identity: 14101, billing: 14106, gateway: 14180, limited: 14181, stock: 14190 };
const QUERY = restOperation();
/** Only these lines of the services' stderr are shown. */
const SERVICE_ERRORS = /"level":"(error|warn)"|Error/;



async function measure(name: string, request: BenchRequest) {
  // Warm-up: JIT, caches, query plans, connection pools.
  await saturate(request, CONNECTIONS, 3);
  const saturated = await saturate(request, CONNECTIONS, DURATION);
  const fixed = await fixedRate(request, FIXED_RATE, DURATION);
  const ms = (v: number) => v.toFixed(2);
  console.log(`${name.padEnd(8)} saturated ${saturated.rps.toFixed(0)} req/s p50 ${ms(saturated.p50)} ms p99 ${ms(saturated.p99)} ms | @${FIXED_RATE}/s p50 ${ms(fixed.p50)} ms p99 ${ms(fixed.p99)} ms | failures ${saturated.failures + fixed.failures}`);
  if (saturated.failures + fixed.failures > 0) throw new Error(`${name}: requests failed`);
  return { saturated, fixed };
}

/** The GraphQL operation the REST layer sends for GET /auth/profile: the same data both ways. */
function restOperation(): string {
  const schema = apiSchemaOf(readFileSync(path.join(REPO_ROOT, 'gateway', 'supergraph.graphql'), 'utf8'));
  const handler = createRestHandler({ config: loadConfig({ NODE_ENV: 'test' }), logger: createLogger('silent'), schema, execute: async () => ({}) });
  return handler.operations['GET /auth/profile'];
}

async function main(): Promise<void> {
  const db = `bench_gateway_${process.pid}`;
  const database = await benchDatabase(PG_ADMIN, db);
  const databaseUrl = database.url;
  const env = {
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    DATABASE_URL: databaseUrl,
    REDIS_URL: REDIS,
    REDIS_PREFIX: db,
    INTERNAL_SIGNING_SECRET: 'bench-internal-signing-secret-0123456789',
    JWT_SECRET: 'bench-jwt-secret-0123456789-0123456789',
    SECRETS_ENCRYPTION_KEY: Buffer.alloc(32, 3).toString('base64'),
    PLATFORM_ADMIN_PASSWORD: 'bench-admin-password',
    IDENTITY_SUBGRAPH_PORT: String(PORTS.identity),
    IDENTITY_SUBGRAPH_URL: `http://127.0.0.1:${PORTS.identity}/graphql`,
    BILLING_SUBGRAPH_PORT: String(PORTS.billing),
    BILLING_SUBGRAPH_URL: `http://127.0.0.1:${PORTS.billing}/graphql`,
    // Request rate limits (config.rateLimitsEnabled) are off for every path but `limited`, which
    // measures what they cost.
    RATE_LIMITS_DISABLED: 'true',
    // For `limited`: counted and judged like any request, never refused (the largest budgets
    // there are). Billing computes a workspace's limits, so it needs the overrides too.
    RATE_LIMIT_OVERRIDES: JSON.stringify({ '*': { readRequestsPerMinute: MAX_LIMIT_VALUE, writeRequestsPerMinute: MAX_LIMIT_VALUE } }),
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: '10000000',
  };
  const limitedEnv = { ...env, PLATFORM_SERVICES: 'gateway', PORT: String(PORTS.limited), RATE_LIMITS_DISABLED: 'false' };
  const children: ChildProcess[] = [];
  try {
    children.push(startService('identity', 'scripts/start.js', { ...env, PLATFORM_SERVICES: 'identity' }, SERVICE_ERRORS));
    await waitForService(`http://127.0.0.1:${PORTS.identity}/healthz`);
    children.push(startService('billing', 'scripts/start.js', { ...env, PLATFORM_SERVICES: 'billing' }, SERVICE_ERRORS));
    await waitForService(`http://127.0.0.1:${PORTS.billing}/healthz`);
    children.push(startService('gateway', 'scripts/start.js', { ...env, PLATFORM_SERVICES: 'gateway', PORT: String(PORTS.gateway) }, SERVICE_ERRORS));
    children.push(startService('limited', 'scripts/start.js', limitedEnv, SERVICE_ERRORS));
    children.push(startService('stock', 'bench/gateway/stock-gateway.js', { ...env, STOCK_PORT: String(PORTS.stock) }, SERVICE_ERRORS));
    await waitForService(`http://127.0.0.1:${PORTS.gateway}/healthz`);
    await waitForService(`http://127.0.0.1:${PORTS.limited}/healthz`);
    await waitForService(`http://127.0.0.1:${PORTS.stock}/`, { anyAnswer: true });

    const login = await fetch(`http://127.0.0.1:${PORTS.gateway}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: env.PLATFORM_ADMIN_PASSWORD }),
    });
    if (!login.ok) throw new Error(`login failed: ${login.status} ${await login.text()}`);
    const { accessToken } = (await login.json()) as { accessToken: string };
    const bearer = { authorization: `Bearer ${accessToken}` };

    // The direct caller signs the envelope the gateway would send.
    const config = loadConfig(env);
    const principalResponse = await fetch(`http://127.0.0.1:${PORTS.identity}/internal/principal`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [ENVELOPE_HEADER]: signEnvelope(config.internalSigningSecret, { principal: null, requestId: 'bench', clientIp: '', iat: Math.floor(Date.now() / 1000) }) },
      body: JSON.stringify({ userId: JSON.parse(Buffer.from(accessToken.split('.')[1], 'base64url').toString()).sub }),
    });
    const principal = ((await principalResponse.json()) as { data: unknown }).data;
    const envelopeHeader = () => signEnvelope(config.internalSigningSecret, { principal: principal as never, requestId: 'bench', clientIp: '127.0.0.1', iat: Math.floor(Date.now() / 1000) });

    const body = JSON.stringify({ query: QUERY });
    const json = { 'content-type': 'application/json' };
    const direct = await measure('direct', { url: `http://127.0.0.1:${PORTS.identity}/graphql`, method: 'POST', headers: { ...json, [ENVELOPE_HEADER]: envelopeHeader() }, body });
    const gateway = await measure('gateway', { url: `http://127.0.0.1:${PORTS.gateway}/graphql`, method: 'POST', headers: { ...json, ...bearer }, body });
    const limited = await measure('limited', { url: `http://127.0.0.1:${PORTS.limited}/graphql`, method: 'POST', headers: { ...json, ...bearer }, body });
    const rest = await measure('rest', { url: `http://127.0.0.1:${PORTS.gateway}/v1/auth/profile`, method: 'GET', headers: bearer });
    const stock = await measure('stock', { url: `http://127.0.0.1:${PORTS.stock}/`, method: 'POST', headers: { ...json, [ENVELOPE_HEADER]: envelopeHeader() }, body });

    const ratio = (a: number, b: number) => (a / b).toFixed(2);
    const lines = [
      `## bench/gateway — ${new Date().toISOString().slice(0, 10)}`,
      '',
      `Command: \`npm run bench:gateway -- --duration ${DURATION} --connections ${CONNECTIONS}\``,
      `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}; each service in its own process, the load generator (bench/load.ts, undici, open loop at the fixed rate) in another, all on loopback.`,
      `Query: \`${QUERY.replace(/\s+/g, " ")}\` (identity subgraph; the operation the REST route sends, so both fetch the same data); REST: \`GET /v1/auth/profile\`.`,
      '',
      '| path | saturated req/s | p50 ms | p99 ms | @200 req/s p50 ms | @200 req/s p99 ms |',
      '|---|---|---|---|---|---|',
      ...Object.entries({ direct, gateway, 'gateway + rate limits': limited, rest, 'stock gateway': stock }).map(
        ([name, m]) => `| ${name} | ${m.saturated.rps.toFixed(0)} | ${m.saturated.p50.toFixed(2)} | ${m.saturated.p99.toFixed(2)} | ${m.fixed.p50.toFixed(2)} | ${m.fixed.p99.toFixed(2)} |`,
      ),
      '',
      `- gateway / direct throughput: **${ratio(gateway.saturated.rps, direct.saturated.rps)}** (target ≥ 0.5; stock gateway here: ${ratio(stock.saturated.rps, direct.saturated.rps)})`,
      `- p50 added by the gateway at 200 req/s: **${(gateway.fixed.p50 - direct.fixed.p50).toFixed(2)} ms** (target ≤ 1 ms; stock: ${(stock.fixed.p50 - direct.fixed.p50).toFixed(2)} ms)`,
      `- REST / GraphQL-through-gateway throughput: **${ratio(rest.saturated.rps, gateway.saturated.rps)}** (target ≥ 0.85)`,
      `- request rate limits: throughput with / without **${ratio(limited.saturated.rps, gateway.saturated.rps)}**, p50 added at 200 req/s **${(limited.fixed.p50 - gateway.fixed.p50).toFixed(2)} ms**`,
      '',
    ];
    console.log(lines.join('\n'));
    const resultsPath = path.join(REPO_ROOT, 'bench', 'RESULTS.md');
    if (!existsSync(resultsPath)) writeFileSync(resultsPath, '# Benchmark results\n\nEntries are appended, newest last; every entry says how it was run. Ratios are what the\nissues target: absolute numbers move with the machine (this one is a shared 2-core VM).\n\n');
    const previous = readFileSync(resultsPath, 'utf8');
    if (!args.includes('--no-write')) appendFileSync(resultsPath, `${previous.endsWith('\n') ? '' : '\n'}${lines.join('\n')}\n`);
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1000));
    await database.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

/**
 * bench/ai-gateway: the same chat completion sent straight to a stand-in upstream (OpenAI
 * protocol, `subgraphs/ai/testing/stand-ins.ts`) and through the platform's edge with a gateway
 * key (edge → ai subgraph → upstream), side by side in one run on loopback, each at a fixed rate
 * (open loop, bench/load.ts): non-streaming latency p50/p99, and for streaming requests the time
 * to the first byte of the response body (the first token's chunk; the stand-in writes it at
 * once). Every process is separate, as docker-compose runs them: stand-in, ai subgraph, edge,
 * and the load generator (this one).
 *
 * Usage: npm run bench:ai-gateway [-- --rate 500 --duration 10]
 */
import type { ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { Pool } from 'undici';
import { REPO_ROOT } from '../../core/paths';
import { sealCredential } from '../../subgraphs/ai/model/shared';
import { fixedRate, type BenchRequest, type LoadResult } from '../load';
import { benchDatabase, startService, waitForService } from '../processes';

const args = process.argv.slice(2);
const arg = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(args[i + 1]);
};
const RATE = arg('rate', 500);
const DURATION = arg('duration', 10);
/** 1: the ai subgraph and the edge in separate processes (a loopback hop between them); 0: one process, as `npm start` runs them. */
const SPLIT = arg('split', 0) === 1;
/** Rounds of the four phases, alternating; the report gives each round and the median of the added figures. */
const ROUNDS = arg('rounds', 3);
const PG_ADMIN = process.env.BENCH_DATABASE_ADMIN_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
const REDIS = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PORTS = { standIn: 14301, ai: 14305, gateway: 14380 };
const SECRETS_KEY = Buffer.alloc(32, 9);
const UPSTREAM_KEY = 'sk-bench';
const WORKSPACE = 'ws_bench000000000000000';



/** Open loop at `rate`: time from the due moment to the first body byte (streams) — no coordinated omission. */
async function firstByteAtRate(request: BenchRequest, rate: number, seconds: number): Promise<LoadResult> {
  const url = new URL(request.url);
  const pool = new Pool(url.origin, { connections: 64 });
  const latencies: number[] = [];
  let failures = 0;
  const total = Math.round(rate * seconds);
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait - 0.5));
    while (performance.now() < due) {
      /* spin the last half millisecond */
    }
    inFlight.push(
      (async () => {
        const response = await pool.request({ path: url.pathname + url.search, method: request.method, headers: request.headers, body: request.body });
        let first = true;
        for await (const chunk of response.body) {
          if (first && (chunk as Buffer).length) {
            latencies.push(performance.now() - due);
            first = false;
          }
        }
        if (response.statusCode !== 200 || first) failures++;
      })().catch(() => void failures++),
    );
  }
  await Promise.race([Promise.all(inFlight), new Promise((r) => setTimeout(r, 30_000))]);
  await pool.close();
  const sorted = Float64Array.from(latencies).sort();
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
  return { requests: latencies.length, failures, rps: latencies.length / seconds, p50: at(50), p99: at(99) };
}

async function main() {
  const db = `bench_ai_${process.pid}`;
  const database = await benchDatabase(PG_ADMIN, db);
  const databaseUrl = database.url;
  const env = {
    NODE_ENV: 'production',
    LOG_LEVEL: 'error',
    DATABASE_URL: databaseUrl,
    REDIS_URL: REDIS,
    REDIS_PREFIX: `bench-ai-${process.pid}`,
    JWT_SECRET: 'j'.repeat(48),
    INTERNAL_SIGNING_SECRET: 'i'.repeat(48),
    SECRETS_ENCRYPTION_KEY: SECRETS_KEY.toString('base64'),
    PLATFORM_ADMIN_PASSWORD: 'bench-admin-password',
    AI_SUBGRAPH_PORT: String(PORTS.ai),
    RATE_LIMITS_DISABLED: 'true',
  };
  const children: ChildProcess[] = [];
  try {
    children.push(startService('stand-in', 'bench/ai-gateway/stand-in.js', { STAND_IN_PORT: String(PORTS.standIn), STAND_IN_KEY: UPSTREAM_KEY }));
    if (SPLIT) {
      children.push(startService('ai', 'scripts/start.js', { ...env, PLATFORM_SERVICES: 'ai' }));
      await waitForService(`http://127.0.0.1:${PORTS.ai}/healthz`, { anyAnswer: true });
      children.push(startService('gateway', 'scripts/start.js', { ...env, PLATFORM_SERVICES: 'gateway', PORT: String(PORTS.gateway) }));
    } else {
      children.push(startService('platform', 'scripts/start.js', { ...env, PLATFORM_SERVICES: 'ai,gateway', PORT: String(PORTS.gateway) }));
    }
    await waitForService(`http://127.0.0.1:${PORTS.gateway}/healthz`, { anyAnswer: true });
    await waitForService(`http://127.0.0.1:${PORTS.standIn}/v1/models`, { anyAnswer: true });

    const gatewayKey = await seed(databaseUrl);
    const body = (stream: boolean) => JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello to the benchmark' }], stream, ...(stream ? { stream_options: { include_usage: true } } : {}) });
    const direct = (stream: boolean): BenchRequest => ({ url: `http://127.0.0.1:${PORTS.standIn}/v1/chat/completions`, method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${UPSTREAM_KEY}` }, body: body(stream) });
    const through = (stream: boolean): BenchRequest => ({ url: `http://127.0.0.1:${PORTS.gateway}/v1/ai-gateway/vendor-a/v1/chat/completions`, method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${gatewayKey}` }, body: body(stream) });

    // Warm-up: connections, JIT, caches (the key's route, the upstream agent).
    await fixedRate(through(false), 100, 2);
    await fixedRate(direct(false), 100, 2);
    await firstByteAtRate(through(true), 100, 2);

    const rounds: Results[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      rounds.push({
        directPlain: await fixedRate(direct(false), RATE, DURATION),
        throughPlain: await fixedRate(through(false), RATE, DURATION),
        directStream: await firstByteAtRate(direct(true), RATE, DURATION),
        throughStream: await firstByteAtRate(through(true), RATE, DURATION),
      });
    }
    const usageRows = await countUsage(databaseUrl);
    report(rounds, usageRows);
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1500));
    await database.drop();
  }
}

/** One upstream (the stand-in), one pool, one key without limits: straight rows, as the management API would write them. */
async function seed(databaseUrl: string): Promise<string> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const upstreamId = 'ups_bench0000000000000000';
    const poolId = 'pool_bench000000000000000';
    const key = `wcp_ai_${randomBytes(32).toString('base64url')}`;
    await client.query(
      `INSERT INTO ai.upstreams (id, workspace_id, name, api, base_url, credential_ciphertext, models, created_at, updated_at) VALUES ($1, $2, 'stand-in', 'openai', $3, $4, '[]', now(), now())`,
      [upstreamId, WORKSPACE, `http://127.0.0.1:${PORTS.standIn}/v1`, sealCredential(SECRETS_KEY, upstreamId, UPSTREAM_KEY)],
    );
    await client.query(`INSERT INTO ai.pools (id, workspace_id, name, strategy, created_at, updated_at) VALUES ($1, $2, 'bench', 'weighted', now(), now())`, [poolId, WORKSPACE]);
    await client.query(`INSERT INTO ai.pool_members (pool_id, upstream_id, created_at) VALUES ($1, $2, now())`, [poolId, upstreamId]);
    await client.query(`INSERT INTO ai.gateway_keys (id, workspace_id, name, pool_id, key_hash, key_prefix, created_at) VALUES ('gk_bench00000000000000000', $1, 'bench', $2, $3, $4, now())`, [
      WORKSPACE,
      poolId,
      createHash('sha256').update(key).digest('hex'),
      key.slice(0, 12),
    ]);
    return key;
  } finally {
    await client.end();
  }
}

async function countUsage(databaseUrl: string): Promise<number> {
  await new Promise((r) => setTimeout(r, 1500));
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return Number((await client.query('SELECT count(*) AS n FROM ai.usage')).rows[0].n);
  } finally {
    await client.end();
  }
}

type Results = Record<'directPlain' | 'throughPlain' | 'directStream' | 'throughStream', LoadResult>;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function report(rounds: Results[], usageRows: number) {
  const row = (round: number, name: string, x: LoadResult) => `| ${round} | ${name} | ${x.requests} | ${x.failures} | ${x.p50.toFixed(2)} | ${x.p99.toFixed(2)} |`;
  const added = {
    p50: rounds.map((r) => r.throughPlain.p50 - r.directPlain.p50),
    p99: rounds.map((r) => r.throughPlain.p99 - r.directPlain.p99),
    ttft50: rounds.map((r) => r.throughStream.p50 - r.directStream.p50),
    ttft99: rounds.map((r) => r.throughStream.p99 - r.directStream.p99),
  };
  const list = (values: number[]) => values.map((v) => v.toFixed(2)).join(', ');
  const lines = [
    `## bench/ai-gateway — ${new Date().toISOString().slice(0, 10)}`,
    '',
    `Command: \`npm run bench:ai-gateway -- --rate ${RATE} --duration ${DURATION} --rounds ${ROUNDS} --split ${SPLIT ? 1 : 0}\``,
    `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}; stand-in upstream, ${SPLIT ? 'ai subgraph, edge' : 'the platform (edge and ai subgraph in one process, as npm start runs them)'} and load generator each in its own process, on loopback. Body: one user message, model gpt-4o-mini; open loop at ${RATE} requests/s for ${DURATION} s per phase; ${ROUNDS} rounds of the four phases, alternating.`,
    '',
    '| round | path | requests | failures | p50 ms | p99 ms |',
    '|---|---|---|---|---|---|',
    ...rounds.flatMap((r, i) => [
      row(i + 1, 'non-streaming, straight to the stand-in', r.directPlain),
      row(i + 1, 'non-streaming, through the gateway', r.throughPlain),
      row(i + 1, 'streaming, first byte, straight', r.directStream),
      row(i + 1, 'streaming, first byte, through the gateway', r.throughStream),
    ]),
    '',
    `- added latency, median of the rounds: p50 **${median(added.p50).toFixed(2)} ms** (target ≤ 1), p99 **${median(added.p99).toFixed(2)} ms** (target ≤ 5); per round p50 ${list(added.p50)}, p99 ${list(added.p99)}`,
    `- time to first token added, median of the rounds: p50 **${median(added.ttft50).toFixed(2)} ms** (target ≤ 1), p99 ${median(added.ttft99).toFixed(2)} ms; per round p50 ${list(added.ttft50)}, p99 ${list(added.ttft99)}`,
    `- usage rows recorded: ${usageRows} (every request through the gateway, warm-up included)`,
    '',
  ];
  const text = lines.join('\n');
  process.stdout.write(`${text}\n`);
  appendFileSync(path.join(REPO_ROOT, 'bench', 'RESULTS.md'), `\n${text}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

/**
 * bench/workflows: a deployed webhook workflow (webhook → set → if → set → respond-to-webhook)
 * under a fixed request rate through the platform's edge, beside a bare node http handler doing
 * the same work (parse JSON, set fields, branch, set, respond); then trivial executions through
 * the queue (N started without waiting, time until all succeeded). The platform runs in one
 * process as `npm start` runs it (workflows subgraph, edge and ONE worker), the load generator
 * and the bare handler in this one, on loopback.
 *
 * Usage: npm run bench:workflows [-- --rate 300 --duration 10 --executions 2000]
 */
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { REPO_ROOT } from '../../core/paths';
import { createQueue } from '../../core/queues';
import { createRedis } from '../../core/redis';
import { openSubgraphDatabase } from '../../core/database';
import { ExecutionStarter } from '../../subgraphs/workflows/executions/execution-starter';
import { WORKFLOW_ENTITIES } from '../../subgraphs/workflows/schema';
import { fixedRate, saturate, type BenchRequest, type LoadResult } from '../load';
import { benchDatabase, benchPlatformEnv, cpuSeconds, pidsNamed, startService, waitForService } from '../processes';

const args = process.argv.slice(2);
const arg = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(args[i + 1]);
};
const RATE = arg('rate', 300);
const DURATION = arg('duration', 10);
const EXECUTIONS = arg('executions', 2000);
const PG_ADMIN = process.env.BENCH_DATABASE_ADMIN_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
const REDIS = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PORTS = { gateway: 14480, workflows: 14404, workerHealth: 14410 };
const WORKSPACE = 'ws_bench000000000000000';

const WEBHOOK_GRAPH = {
  nodes: [
    { id: 'hook', type: 'webhook', name: 'Hook', parameters: { method: 'POST', respond: 'respondNode' } },
    { id: 'enrich', type: 'set', name: 'Enrich', parameters: { values: { amount: '{{ $json.body.amount }}', customer: '{{ $json.body.customer }}', source: 'bench' } } },
    { id: 'big', type: 'if', name: 'Big', parameters: { conditions: [{ left: '{{ $json.amount }}', operator: 'gt', right: 100 }] } },
    { id: 'tag', type: 'set', name: 'Tag', parameters: { values: { tier: 'large' } } },
    { id: 'answer', type: 'respond-to-webhook', name: 'Answer', parameters: { status: 200, body: { customer: '{{ $json.customer }}', tier: '{{ $json.tier }}', amount: '{{ $json.amount }}' } } },
  ],
  connections: [
    { from: 'hook', to: 'enrich' },
    { from: 'enrich', to: 'big' },
    { from: 'big', fromOutput: 0, to: 'tag' },
    { from: 'tag', to: 'answer' },
  ],
  settings: {},
};
const TRIVIAL_GRAPH = {
  nodes: [
    { id: 'trigger', type: 'manual-trigger', name: 'Trigger', parameters: {} },
    { id: 'set', type: 'set', name: 'Set', parameters: { values: { done: true } } },
  ],
  connections: [{ from: 'trigger', to: 'set' }],
  settings: {},
};



/** The same work as the workflow, by hand: parse, set, branch, set, respond. */
function startBare(): Promise<{ url: string; close: () => void }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { amount: number; customer: string };
      const item: Record<string, unknown> = { body, amount: body.amount, customer: body.customer, source: 'bench' };
      if ((item.amount as number) > 100) item.tier = 'large';
      const payload = JSON.stringify({ customer: item.customer, tier: item.tier, amount: item.amount });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
      res.end(payload);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() })));
}

const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');

async function main() {
  const dbName = `bench_wf_${process.pid}`;
  const database = await benchDatabase(PG_ADMIN, dbName);
  const databaseUrl = database.url;
  const prefix = `bench-wf-${process.pid}`;
  const env = benchPlatformEnv({
    databaseUrl,
    redisUrl: REDIS,
    prefix,
    services: 'workflows,gateway,worker',
    port: PORTS.gateway,
    extra: { WORKFLOWS_SUBGRAPH_PORT: String(PORTS.workflows), WORKER_HEALTH_PORT: String(PORTS.workerHealth) },
  });
  const platform = startService('platform', 'scripts/start.js', env);
  const bare = await startBare();
  const redis = createRedis(REDIS);
  const queue = createQueue('workflows', redis, prefix);
  let dataSource: Awaited<ReturnType<typeof openSubgraphDatabase>> | undefined;
  const lines: string[] = [];
  try {
    await waitForService(`http://127.0.0.1:${PORTS.gateway}/healthz`, { timeoutMs: 90_000 });
    await waitForService(`http://127.0.0.1:${PORTS.workerHealth}/readyz`, { timeoutMs: 90_000 });
    const pg = new Client({ connectionString: databaseUrl });
    await pg.connect();
    const workflowId = 'wf_bench_webhook';
    await pg.query(`INSERT INTO workflows.workflows (id, workspace_id, name, nodes, connections, settings, deployed, deployed_at) VALUES ($1, $2, 'bench', $3, $4, '{}', true, now())`, [
      workflowId,
      WORKSPACE,
      JSON.stringify(WEBHOOK_GRAPH.nodes),
      JSON.stringify(WEBHOOK_GRAPH.connections),
    ]);
    await pg.query(`INSERT INTO workflows.webhook_registrations (workflow_id, node_id, workspace_id, method) VALUES ($1, 'hook', $2, 'POST')`, [workflowId, WORKSPACE]);

    const body = JSON.stringify({ amount: 250, customer: 'cus_123', note: 'x'.repeat(200) });
    const through: BenchRequest = { url: `http://127.0.0.1:${PORTS.gateway}/v1/webhooks/v1/${workflowId}/hook`, method: 'POST', headers: { 'content-type': 'application/json' }, body };
    const straight: BenchRequest = { ...through, url: `${bare.url}/hook` };
    const check = await fetch(through.url, { method: 'POST', headers: through.headers, body });
    const answer = await check.text();
    if (check.status !== 200 || !answer.includes('"tier":"large"')) throw new Error(`the webhook answered ${check.status}: ${answer}`);

    // Warm-up, then the measured phases.
    // The generator sleeps between sends (fixedRate spin: false): on 2 cores its spin would take CPU from the platform.
    const open = { spin: false };
    // Warm-up at the measured rate: the JIT, and the pools' connections (each a PostgreSQL backend preparing its statements once).
    await fixedRate(through, RATE, 3, open);
    await fixedRate(straight, RATE, 1, open);
    const results: Array<[string, LoadResult, string]> = [];
    // CPU time per request: steadier than throughput on a shared VM. Platform = the platform process; stores = PostgreSQL and Redis.
    const stores = pidsNamed(['postgres', 'redis-server']);
    const measured = async (name: string, run: () => Promise<LoadResult>, platformToo = true) => {
      const before = [cpuSeconds([platform.pid!]), cpuSeconds(stores)];
      const result = await run();
      const per = (i: number, now: number) => (((now - before[i]) * 1000) / Math.max(1, result.requests + result.failures)).toFixed(2);
      results.push([name, result, platformToo ? `${per(0, cpuSeconds([platform.pid!]))} / ${per(1, cpuSeconds(stores))}` : 'n/a']);
    };
    await measured('bare node http handler, fixed rate', () => fixedRate(straight, RATE, DURATION, open), false);
    await measured('webhook workflow through the edge, fixed rate', () => fixedRate(through, RATE, DURATION, open));
    await measured('webhook workflow through the edge, saturated (32 connections)', () => saturate(through, 32, Math.max(3, Math.round(DURATION / 2))));

    // Trivial executions through the queue.
    dataSource = await openSubgraphDatabase({ url: databaseUrl, schema: 'workflows', entities: WORKFLOW_ENTITIES, migrations: [] });
    const starter = new ExecutionStarter(dataSource, queue);
    const t0 = performance.now();
    const ids: string[] = [];
    for (let i = 0; i < EXECUTIONS; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(50, EXECUTIONS - i) }, () =>
          starter.start({ workspaceId: WORKSPACE, workflowId: null, workflowVersion: null, definition: TRIVIAL_GRAPH, mode: 'in_memory', triggerNodeId: 'trigger', input: {}, userId: null }),
        ),
      );
      ids.push(...batch.map((e) => e.id));
    }
    const queuedMs = performance.now() - t0;
    let succeeded = 0;
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const { rows } = await pg.query(`SELECT count(*)::int AS n FROM workflows.executions WHERE mode = 'in_memory' AND status = 'succeeded'`);
      succeeded = rows[0].n;
      if (succeeded >= EXECUTIONS) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const allMs = performance.now() - t0;
    await pg.end();

    const date = new Date().toISOString().slice(0, 10);
    lines.push(`\n## bench/workflows — ${date}\n`);
    lines.push(`Command: \`npm run bench:workflows -- --rate ${RATE} --duration ${DURATION} --executions ${EXECUTIONS}\``);
    lines.push(
      `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}; the platform (workflows subgraph, edge and ONE worker, WORKFLOW_WORKER_CONCURRENCY default) in one process as npm start runs it, the load generator and the bare handler in another, on loopback. Workflow: webhook → set → if → set → respond-to-webhook (every step persisted); the bare handler parses, sets, branches, sets and answers the same JSON.\n`,
    );
    lines.push('| path | requests | failures | rps | p50 ms | p99 ms | CPU ms per request: platform / PostgreSQL+Redis |');
    lines.push('|---|---|---|---|---|---|---|');
    for (const [name, r, cpu] of results) lines.push(`| ${name} | ${r.requests} | ${r.failures} | ${r.rps.toFixed(0)} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${cpu} |`);
    const hook = results[1][1];
    lines.push('');
    lines.push(`- webhook at ${RATE}/s: p50 **${fmt(hook.p50)} ms** (target < 15), ${hook.failures} failures; saturated: **${results[2][1].rps.toFixed(0)} requests/s** (target ≥ 300)`);
    lines.push(`- trivial executions (manual-trigger → set) through the queue: ${succeeded}/${EXECUTIONS} succeeded in ${(allMs / 1000).toFixed(2)} s = **${((succeeded / allMs) * 1000).toFixed(0)} executions/s** (queued in ${(queuedMs / 1000).toFixed(2)} s)`);
    const text = lines.join('\n') + '\n';
    process.stdout.write(text);
    appendFileSync(path.join(REPO_ROOT, 'bench', 'RESULTS.md'), text);
  } finally {
    bare.close();
    platform.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, process.env.BENCH_CPU_PROF ? 8000 : 1500));
    if (platform.exitCode === null) platform.kill('SIGKILL');
    await dataSource?.destroy().catch(() => undefined);
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close().catch(() => undefined);
    await redis.quit().catch(() => undefined);
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

/**
 * bench/compute: sandboxes through the platform against the raw engine, side by side in one
 * run on this machine, with the same image (platform/busybox:latest) and command:
 *
 *   create   POST /v1/sandboxes, then GET /v1/sandboxes/{id} every 5 ms until status running,
 *            against `docker run -d <image> sleep 3600` (the CLI, as the issue quotes it) and
 *            against the engine API's create + start (dockerode; the floor).
 *   exec     POST /v1/sandboxes/{id}/exec ["true"] against `docker exec <container> true` and
 *            the engine API's exec create + start + inspect.
 *   burst    50 POST /v1/sandboxes at once, each until running; then all deleted, and the
 *            engine is checked for containers of this deployment left behind (must be 0), as
 *            it is after every phase.
 *
 * Rounds alternate platform and raw, so drift on the machine touches both. The platform runs in
 * this process (every service, worker included, as `npm start` runs them by default).
 *
 * Usage: npm run bench:compute [-- --rounds 20 --burst 50]
 */
import { execFile } from 'node:child_process';
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { loadConfig } from '../../core/config';
import { REPO_ROOT } from '../../core/paths';
import { startPlatform } from '../../scripts/platform';
import { benchDatabase } from '../processes';

const run = promisify(execFile);
const args = process.argv.slice(2);
const arg = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(args[i + 1]);
};
const ROUNDS = arg('rounds', 20);
const EXEC_ROUNDS = arg('exec-rounds', 50);
const BURST = arg('burst', 50);
const IMAGE = 'platform/busybox:latest';
const PG_ADMIN = process.env.BENCH_DATABASE_ADMIN_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
const REDIS = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const DEPLOYMENT = `bench-compute-${process.pid}`;
const docker = new Docker();

interface Stats {
  n: number;
  p50: number;
  p90: number;
  mean: number;
  min: number;
}

function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { n: sorted.length, p50: at(0.5), p90: at(0.9), mean: sorted.reduce((a, b) => a + b, 0) / sorted.length, min: sorted[0] };
}

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
const sleep = (n: number) => new Promise((r) => setTimeout(r, n));

async function main() {
  const db = `bench_compute_${process.pid}`;
  const database = await benchDatabase(PG_ADMIN, db);
  const databaseUrl = database.url;
  const config = loadConfig({
    NODE_ENV: 'production',
    LOG_LEVEL: 'error',
    PORT: '0',
    WORKER_HEALTH_PORT: '0',
    REDIS_PREFIX: DEPLOYMENT,
    COMPUTE_DEPLOYMENT_ID: DEPLOYMENT,
    RATE_LIMITS_DISABLED: 'true',
    RATE_LIMIT_OVERRIDES: JSON.stringify({ '*': { concurrentSandboxes: 10_000 } }),
    PLATFORM_ADMIN_PASSWORD: 'bench-admin-password',
    JWT_SECRET: 'x'.repeat(48),
    INTERNAL_SIGNING_SECRET: 'y'.repeat(48),
    SECRETS_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
    ...Object.fromEntries(['IDENTITY', 'COMPUTE', 'SESSIONS', 'WORKFLOWS', 'AI', 'BILLING', 'ANALYTICS'].map((n) => [`${n}_SUBGRAPH_PORT`, '0'])),
  });
  const platform = await startPlatform({ config, databaseUrl, redisUrl: REDIS });
  const base = `${platform.gateway!.url}/v1`;
  const rawIds: string[] = [];
  try {
    const login = await post(`${base}/auth/login`, { username: config.adminUsername, password: 'bench-admin-password' });
    const auth = { authorization: `Bearer ${login.accessToken}` };
    const workspaceId = login.user.defaultWorkspaceId;
    const createBody = { name: 'bench', workspaceId, image: IMAGE, args: ['sleep', '3600'] };

    // Warm both paths (image cache, connections, JIT).
    const warm = await createUntilRunning(base, auth, createBody);
    rawIds.push((await run('docker', ['run', '-d', IMAGE, 'sleep', '3600'])).stdout.trim());

    const create = { platform: [] as number[], cli: [] as number[], api: [] as number[] };
    const platformIds: string[] = [warm.id];
    for (let i = 0; i < ROUNDS; i++) {
      let t = process.hrtime.bigint();
      rawIds.push((await run('docker', ['run', '-d', IMAGE, 'sleep', '3600'])).stdout.trim());
      create.cli.push(ms(t));
      t = process.hrtime.bigint();
      const container = await docker.createContainer({ Image: IMAGE, Cmd: ['sleep', '3600'], HostConfig: { Init: true } });
      await container.start();
      create.api.push(ms(t));
      rawIds.push(container.id);
      t = process.hrtime.bigint();
      const sandbox = await createUntilRunning(base, auth, createBody);
      create.platform.push(ms(t));
      platformIds.push(sandbox.id);
    }

    const target = warm;
    const rawTarget = rawIds[0];
    const exec = { platform: [] as number[], cli: [] as number[], api: [] as number[] };
    for (let i = 0; i < EXEC_ROUNDS; i++) {
      let t = process.hrtime.bigint();
      await run('docker', ['exec', rawTarget, 'true']);
      exec.cli.push(ms(t));
      t = process.hrtime.bigint();
      const e = await docker.getContainer(rawTarget).exec({ Cmd: ['true'], AttachStdout: true, AttachStderr: true });
      const stream = await e.start({ hijack: true, stdin: false });
      await new Promise((resolve) => {
        stream.on('end', resolve);
        stream.resume();
      });
      await e.inspect();
      exec.api.push(ms(t));
      t = process.hrtime.bigint();
      const result = await post(`${base}/sandboxes/${target.id}/exec`, { command: ['true'] }, auth);
      if (result.exitCode !== 0) throw new Error(`exec answered ${JSON.stringify(result)}`);
      exec.platform.push(ms(t));
    }

    await deleteAll(base, auth, platformIds);
    const leakedAfterRounds = await leaked();

    // Burst: BURST creates at once.
    const burstStart = process.hrtime.bigint();
    const burst = await Promise.all(
      Array.from({ length: BURST }, async (_, i) => {
        const t = process.hrtime.bigint();
        const sandbox = await createUntilRunning(base, auth, { ...createBody, name: `burst-${i}` }, 120_000);
        return { id: sandbox.id, ms: ms(t) };
      }),
    );
    const burstTotal = ms(burstStart);
    const running = (await deploymentContainers()).length;
    await deleteAll(base, auth, burst.map((b) => b.id));
    const leakedAfterBurst = await leaked();

    report({ create, exec, burst: { each: stats(burst.map((b) => b.ms)), totalMs: burstTotal, containersWhileRunning: running }, leakedAfterRounds, leakedAfterBurst });
  } finally {
    if (rawIds.length) await run('docker', ['rm', '-f', ...rawIds]).catch(() => undefined);
    const left = await deploymentContainers();
    if (left.length) await run('docker', ['rm', '-f', ...left]).catch(() => undefined);
    await platform.stop();
    await database.drop();
  }
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<any> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const json = await response.json();
  if (!response.ok) throw new Error(`${url} answered ${response.status}: ${JSON.stringify(json)}`);
  return json;
}

async function createUntilRunning(base: string, auth: Record<string, string>, body: unknown, timeoutMs = 30_000): Promise<any> {
  const created = await post(`${base}/sandboxes`, body, auth);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const sandbox = await (await fetch(`${base}/sandboxes/${created.id}`, { headers: auth })).json();
    if (sandbox.status === 'running') return sandbox;
    if (sandbox.status === 'failed') throw new Error(`sandbox failed: ${sandbox.statusReason}`);
    if (Date.now() > deadline) throw new Error(`sandbox ${created.id} still ${sandbox.status}`);
    await sleep(5);
  }
}

async function deleteAll(base: string, auth: Record<string, string>, ids: string[]): Promise<void> {
  await Promise.all(ids.map((id) => fetch(`${base}/sandboxes/${id}`, { method: 'DELETE', headers: auth })));
  const deadline = Date.now() + 120_000;
  for (const id of ids) {
    for (;;) {
      const sandbox = await (await fetch(`${base}/sandboxes/${id}`, { headers: auth })).json();
      if (sandbox.status === 'deleted') break;
      if (Date.now() > deadline) throw new Error(`sandbox ${id} not deleted`);
      await sleep(20);
    }
  }
}

async function deploymentContainers(): Promise<string[]> {
  const { stdout } = await run('docker', ['ps', '-aq', '--filter', `label=platform.deployment=${DEPLOYMENT}`]);
  return stdout.split('\n').filter(Boolean);
}

async function leaked(): Promise<number> {
  return (await deploymentContainers()).length;
}

function report(r: { create: Record<string, number[]>; exec: Record<string, number[]>; burst: { each: Stats; totalMs: number; containersWhileRunning: number }; leakedAfterRounds: number; leakedAfterBurst: number }) {
  const row = (name: string, s: Stats) => `| ${name} | ${s.n} | ${s.p50.toFixed(1)} | ${s.p90.toFixed(1)} | ${s.mean.toFixed(1)} | ${s.min.toFixed(1)} |`;
  const c = { platform: stats(r.create.platform), cli: stats(r.create.cli), api: stats(r.create.api) };
  const e = { platform: stats(r.exec.platform), cli: stats(r.exec.cli), api: stats(r.exec.api) };
  const lines = [
    `## bench/compute — ${new Date().toISOString().slice(0, 10)}`,
    '',
    `Command: \`npm run bench:compute -- --rounds ${ROUNDS} --exec-rounds ${EXEC_ROUNDS} --burst ${BURST}\``,
    `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, Docker engine on the same host (local socket); the platform (all services and the worker) in the bench process. Image \`${IMAGE}\`, command \`sleep 3600\`. Rounds alternate raw and platform.`,
    '',
    '| operation (ms) | n | p50 | p90 | mean | min |',
    '|---|---|---|---|---|---|',
    row('create: POST /v1/sandboxes until running', c.platform),
    row('create: `docker run -d`', c.cli),
    row('create: engine API create + start', c.api),
    row('exec: POST /v1/sandboxes/{id}/exec `true`', e.platform),
    row('exec: `docker exec <c> true`', e.cli),
    row('exec: engine API exec', e.api),
    row(`burst: each of ${BURST} concurrent creates until running`, r.burst.each),
    '',
    `- create, platform / \`docker run -d\` (p50): **${(c.platform.p50 / c.cli.p50).toFixed(2)}** (target ≤ 1.5); against the API floor: ${(c.platform.p50 / c.api.p50).toFixed(2)}`,
    `- exec, platform / \`docker exec\` (p50): **${(e.platform.p50 / e.cli.p50).toFixed(2)}** (target ≤ 1.3); against the API floor: ${(e.platform.p50 / e.api.p50).toFixed(2)}`,
    `- burst: ${BURST} sandboxes running after ${(r.burst.totalMs / 1000).toFixed(1)} s; ${r.burst.containersWhileRunning} containers of the deployment while they ran; leaked after deleting: **${r.leakedAfterBurst}** (after the rounds: ${r.leakedAfterRounds})`,
    '',
  ];
  const text = lines.join('\n');
  process.stdout.write(`${text}\n`);
  const resultsPath = path.join(REPO_ROOT, 'bench', 'RESULTS.md');
  if (!existsSync(resultsPath)) writeFileSync(resultsPath, '# Benchmark results\n\n');
  appendFileSync(resultsPath, `\n${text}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

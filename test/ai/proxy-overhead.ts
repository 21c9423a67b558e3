/**
 * Added latency of the AI proxy, measured on loopback (not a jest test: run it with
 * `npx tsx test/ai/proxy-overhead.ts [rate=500] [seconds=10] [mode=handler|platform] [stream]`).
 *
 * Three processes: the openai stand-in, the proxy (mode handler: the proxy's routes on a plain
 * server, as test/ai/proxy-fixture.ts does; mode platform: the whole platform, through the gateway
 * edge), and this load generator. Open loop at a fixed rate (requests are sent on schedule whether
 * or not earlier ones finished), alternating phases of direct-to-stand-in and through-the-proxy
 * traffic; per request the time to the first body byte (TTFB; a stream's first event) and to its end. Reports p50/p90/p99 of
 * both and their differences (the proxy's added latency).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { startStandIn } from '../../subgraphs/ai/testing/stand-ins';
import { startProxyBench } from './proxy-fixture';

const role = process.argv[2];

if (role === '--standin') void runStandIn();
else if (role === '--proxy') void runProxy(process.argv[3], process.argv[4] as 'handler' | 'platform');
else void main();

async function runStandIn(): Promise<void> {
  const standIn = await startStandIn('openai', { recordLimit: 1 });
  process.send!({ baseUrl: standIn.baseUrl, apiKey: standIn.apiKey, port: standIn.port });
  process.on('message', (message) => {
    if (message === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send!({ cpuMs: (user + system) / 1000 });
    }
  });
}

async function runProxy(standInJson: string, mode: 'handler' | 'platform'): Promise<void> {
  const standIn = JSON.parse(standInJson) as { baseUrl: string; apiKey: string; port: number };
  const bench = await startProxyBench({ platform: mode === 'platform', usageFlushIntervalMs: 100, env: { LOG_LEVEL: 'error', RATE_LIMIT_ANONYMOUS_PER_MINUTE: '10000000' } });
  const ws = bench.workspace();
  const fake = { api: 'openai', baseUrl: standIn.baseUrl, apiKey: standIn.apiKey } as never;
  const { key } = await bench.key(ws, await bench.pool(ws, 'fallback', [{ upstreamId: await bench.upstream(ws, fake) }]));
  process.send!({ base: bench.urls.openai, key });
  process.once('SIGTERM', () => void bench.stop().finally(() => process.exit(0)));
  const loop = monitorEventLoopDelay({ resolution: 1 });
  process.on('message', async (message) => {
    if (message === 'cpu') {
      const { user, system } = process.cpuUsage();
      const gc = (globalThis as { gc?: () => void }).gc;
      gc?.();
      process.send!({ cpuMs: (user + system) / 1000, loopP99: loop.percentile(99) / 1e6, loopMax: loop.max / 1e6, heapMb: process.memoryUsage().heapUsed / 1e6 });
      loop.reset();
      loop.enable();
    }
    if (message === 'rows') {
      const rows = await bench.dataSource.query(`SELECT count(*)::int AS n, percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms) AS p50 FROM "ai"."usage"`);
      process.send!({ rows: rows[0] });
    }
  });
}

function start(args: string[]): Promise<{ child: ChildProcess; info: any }> {
  return new Promise((resolve, reject) => {
    const profile = args[0] !== '--proxy' ? [] : process.env.PROFILE_PROXY ? ['--cpu-prof', '--cpu-prof-dir=/tmp/proxy-prof'] : process.env.TRACE_GC ? ['--trace-gc', '--expose-gc'] : [];
    const child = fork(__filename, args, { execArgv: ['--import', 'tsx', ...profile], stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, LOG_LEVEL: 'error' } });
    child.once('message', (info) => resolve({ child, info }));
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${args[0]} exited with ${code}`)));
  });
}

interface Sample {
  ttfb: number;
  total: number;
}

async function phase(url: string, headers: Record<string, string>, body: string, rate: number, seconds: number): Promise<{ samples: Sample[]; errors: number }> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: 256, pipelining: 1, keepAliveTimeout: 30_000 });
  const path = `${target.pathname}/chat/completions`;
  const samples: Sample[] = [];
  let errors = 0;
  const count = Math.round(rate * seconds);
  const interval = 1000 / rate;
  const began = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const due = began + i * interval;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const sent = performance.now();
    pending.push(
      pool
        .request({ path, method: 'POST', headers, body })
        .then(async (answer) => {
          // Time to the first body byte (for a stream: the first token's event).
          let ttfb = -1;
          for await (const chunk of answer.body) if (ttfb < 0 && (chunk as Buffer).length > 0) ttfb = performance.now() - sent;
          if (answer.statusCode !== 200) errors++;
          else samples.push({ ttfb, total: performance.now() - sent });
        })
        .catch(() => {
          errors++;
        }),
    );
  }
  await Promise.all(pending);
  await pool.close();
  return { samples, errors };
}

function pct(values: number[], p: number): number {
  const sorted = values.slice().sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function main(): Promise<void> {
  const rate = Number(process.argv[2] ?? 500);
  const seconds = Number(process.argv[3] ?? 10);
  const mode = (process.argv[4] ?? 'handler') as 'handler' | 'platform';
  const stream = process.argv[5] === 'stream';
  const standIn = await start(['--standin']);
  const proxy = await start(['--proxy', JSON.stringify(standIn.info), mode]);
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello there, how are you' }], ...(stream ? { stream: true } : {}) });
  const direct = { url: standIn.info.baseUrl as string, headers: { authorization: `Bearer ${standIn.info.apiKey}`, 'content-type': 'application/json' } };
  const proxied = { url: proxy.info.base as string, headers: { authorization: `Bearer ${proxy.info.key}`, 'content-type': 'application/json' } };

  // Warm-up (JIT, connection pools, the proxy's route cache), then alternating measured phases.
  await phase(direct.url, direct.headers, body, rate, 2);
  await phase(proxied.url, proxied.headers, body, rate, 2);
  const results = { direct: [] as Sample[], proxied: [] as Sample[] };
  let errors = 0;
  const cpu = () => {
    proxy.child.send('cpu');
    return new Promise<{ cpuMs: number; loopP99: number; loopMax: number; heapMb: number }>((resolve) => proxy.child.once('message', resolve));
  };
  const standInCpu = () => {
    standIn.child.send('cpu');
    return new Promise<number>((resolve) => standIn.child.once('message', (m: any) => resolve(m.cpuMs)));
  };
  const standInBefore = await standInCpu();
  const before = await cpu();
  const cpuBefore = before.cpuMs;
  for (let round = 0; round < 2; round++) {
    for (const [name, target] of [['direct', direct], ['proxied', proxied]] as const) {
      const { samples, errors: e } = await phase(target.url, target.headers, body, rate, seconds / 2);
      results[name].push(...samples);
      errors += e;
    }
  }
  const after = await cpu();
  const cpuMs = after.cpuMs - cpuBefore;
  const standInMs = (await standInCpu()) - standInBefore;
  const row = (name: string, samples: Sample[]) => {
    const ttfb = samples.map((s) => s.ttfb);
    const total = samples.map((s) => s.total);
    return { name, n: samples.length, ttfb_p50: pct(ttfb, 50), ttfb_p90: pct(ttfb, 90), ttfb_p99: pct(ttfb, 99), total_p50: pct(total, 50), total_p90: pct(total, 90), total_p99: pct(total, 99) };
  };
  const d = row('direct', results.direct);
  const p = row(`via proxy (${mode})`, results.proxied);
  const fmt = (n: number) => n.toFixed(3).padStart(8);
  console.log(`rate ${rate}/s, ${seconds} s per side, ${stream ? 'streamed' : 'non-streamed'} chat completions, ${errors} errors (ttfb = first body byte)`);
  console.log('                     n   ttfb p50  ttfb p90  ttfb p99 | total p50 total p90 total p99 (ms)');
  for (const r of [d, p]) console.log(`${r.name.padEnd(20)}${String(r.n).padStart(5)} ${fmt(r.ttfb_p50)}  ${fmt(r.ttfb_p90)}  ${fmt(r.ttfb_p99)} | ${fmt(r.total_p50)}  ${fmt(r.total_p90)}  ${fmt(r.total_p99)}`);
  console.log(`${'added'.padEnd(25)} ${fmt(p.ttfb_p50 - d.ttfb_p50)}  ${fmt(p.ttfb_p90 - d.ttfb_p90)}  ${fmt(p.ttfb_p99 - d.ttfb_p99)} | ${fmt(p.total_p50 - d.total_p50)}  ${fmt(p.total_p90 - d.total_p90)}  ${fmt(p.total_p99 - d.total_p99)}`);
  console.log(`proxy process CPU: ${((cpuMs * 1000) / results.proxied.length).toFixed(0)} µs per proxied request (edge + proxy + usage recording; idle during direct phases)`);
  console.log(`for scale, the stand-in's CPU: ${((standInMs * 1000) / (results.proxied.length + results.direct.length)).toFixed(0)} µs per request it answered`);
  console.log(`proxy process event-loop delay during the run: p99 ${after.loopP99.toFixed(2)} ms, max ${after.loopMax.toFixed(2)} ms`);
  if (process.env.TRACE_GC) console.log(`proxy heap after a full GC: ${before.heapMb.toFixed(1)} MB before the measured phases, ${after.heapMb.toFixed(1)} MB after`);
  proxy.child.send('rows');
  const rows = await new Promise<any>((resolve) => proxy.child.once('message', resolve));
  console.log(`usage rows written: ${rows.rows.n} (warm-up included), median recorded latency ${rows.rows.p50} ms`);
  proxy.child.kill('SIGTERM');
  standIn.child.kill('SIGTERM');
  process.exit(0);
}

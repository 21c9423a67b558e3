import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dropDatabase, ensureDatabase } from '../core/database';
import path from 'node:path';
import { REPO_ROOT } from '../core/paths';

/**
 * Runs a built script (`dist/<script>`) in its own process, as docker-compose would run a
 * service; its stderr is passed on prefixed with `name` (only lines matching `only`, when given).
 */
export function startService(name: string, script: string, env: Record<string, string>, only?: RegExp): ChildProcess {
  // BENCH_CPU_PROF=<dir>: each service writes a V8 CPU profile there when it exits (open it in Chrome's DevTools).
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`, `--cpu-prof-name=${name}-${Date.now()}.cpuprofile`] : [];
  const child = spawn(process.execPath, [...profile, path.join(REPO_ROOT, 'dist', script)], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr!.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    if (!only || only.test(text)) process.stderr.write(`[${name}] ${text}`);
  });
  return child;
}

/** Polls `url` until it answers 2xx (or anything at all, with `anyAnswer`), bounded by `timeoutMs`. */
export async function waitForService(url: string, options: { timeoutMs?: number; anyAnswer?: boolean } = {}): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (response.ok || options.anyAnswer) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not come up`);
}

/** CPU seconds (user + system) the processes have used so far, from /proc (Linux); processes that exited count nothing. */
export function cpuSeconds(pids: number[]): number {
  const ticks = 100; // USER_HZ on Linux
  let total = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += (Number(fields[11]) + Number(fields[12])) / ticks;
    } catch {
      /* exited meanwhile (a PostgreSQL backend): its time is not counted */
    }
  }
  return total;
}

/** Pids of the running processes whose command name is one of `names` (e.g. postgres, redis-server). */
export function pidsNamed(names: string[]): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (names.includes(readFileSync(`/proc/${entry}/comm`, 'utf8').trim())) pids.push(Number(entry));
    } catch {
      /* gone */
    }
  }
  return pids;
}

/** A database of a benchmark's own, on the server of `adminUrl`; `drop()` removes it (never throws). */
export interface BenchDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function benchDatabase(adminUrl: string, name: string): Promise<BenchDatabase> {
  await ensureDatabase(adminUrl, name);
  return { url: adminUrl.replace(/\/[^/]*$/, `/${name}`), drop: () => dropDatabase(adminUrl, name).catch(() => undefined) };
}

/**
 * The environment of a platform process a benchmark starts (`startService('platform',
 * 'scripts/start.js', env)`): production mode, quiet logs, fixed test secrets, rate limits off,
 * the given services on the given port; `extra` adds or overrides.
 */
export function benchPlatformEnv(options: { databaseUrl: string; redisUrl: string; prefix: string; services: string; port: number; extra?: Record<string, string> }): Record<string, string> {
  return {
    NODE_ENV: 'production',
    LOG_LEVEL: 'error',
    DATABASE_URL: options.databaseUrl,
    REDIS_URL: options.redisUrl,
    REDIS_PREFIX: options.prefix,
    JWT_SECRET: 'j'.repeat(48),
    INTERNAL_SIGNING_SECRET: 'i'.repeat(48),
    SECRETS_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'),
    PLATFORM_ADMIN_PASSWORD: 'bench-admin-password',
    PLATFORM_SERVICES: options.services,
    PORT: String(options.port),
    RATE_LIMITS_DISABLED: 'true',
    ...options.extra,
  };
}

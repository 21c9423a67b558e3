import { randomBytes } from 'node:crypto';
import { SUBGRAPH_NAMES, loadConfig, type PlatformConfig, type SubgraphName } from '../core/config';
import { dropDatabase, ensureDatabase } from '../core/database';
import { createLogger, type LogLevel } from '../core/logger';
import { createPlatformPubSub } from '../core/pubsub';
import type { PlatformRuntime } from '../core/subgraph';

/** PostgreSQL and Redis of the test machine (services on loopback; see .ci/run). */
export const TEST_PG_ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface TestDatabase {
  /** Database name, unique per call; also a good Redis prefix. */
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** A fresh database of its own on the test server, so test files running in parallel never meet. */
export async function createTestDatabase(label: string): Promise<TestDatabase> {
  const name = `${label}_${process.pid}_${randomBytes(4).toString('hex')}`;
  await ensureDatabase(TEST_PG_ADMIN_URL, name);
  return {
    name,
    url: TEST_PG_ADMIN_URL.replace(/\/[^/]*$/, `/${name}`),
    drop: () => dropDatabase(TEST_PG_ADMIN_URL, name).catch(() => undefined),
  };
}

export interface TestConfigOptions {
  databaseUrl: string;
  /** Redis prefix of this runtime's keys, queues and channels. */
  prefix: string;
  /** Extra environment, read through loadConfig like production. */
  env?: Record<string, string>;
  overrides?: Partial<PlatformConfig>;
}

/** The configuration of a test: read like production, on the test services, every port free. */
export function createTestConfig(options: TestConfigOptions): PlatformConfig {
  const subgraphPorts = Object.fromEntries(SUBGRAPH_NAMES.map((name) => [name, 0])) as Record<SubgraphName, number>;
  return loadConfig(
    // Generous rate limits, so tests making many requests never trip them; rate-limit tests set their own.
    // Containers are labelled with the test's own prefix, so parallel tests never reconcile each other's.
    {
      NODE_ENV: 'test',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
      DEFAULT_PLAN: 'enterprise',
      RATE_LIMIT_ANONYMOUS_PER_MINUTE: '100000',
      COMPUTE_DEPLOYMENT_ID: options.prefix,
      COMPUTE_DEFAULT_IMAGE: 'platform/busybox:latest',
      ...options.env,
    },
    { port: 0, subgraphPorts, workerHealthPort: 0, databaseUrl: options.databaseUrl, redisUrl: TEST_REDIS_URL, redisPrefix: options.prefix, ...options.overrides },
  );
}

export interface TestRuntimeOptions extends TestConfigOptions {  /** Level of the runtime's logger. @defaultValue the config's */
  logLevel?: LogLevel;
  onQuery?: PlatformRuntime['onQuery'];
}

/**
 * A runtime as scripts/platform.ts builds one, from createTestConfig. Close its
 * pub/sub (`runtime.pubsub.close()`) when done.
 */
export function createTestRuntime(options: TestRuntimeOptions): PlatformRuntime {
  const config = createTestConfig(options);
  return {
    config,
    databaseUrl: options.databaseUrl,
    redisUrl: TEST_REDIS_URL,
    pubsub: createPlatformPubSub(TEST_REDIS_URL, options.prefix),
    logger: createLogger(options.logLevel ?? config.logLevel),
    onQuery: options.onQuery,
  };
}

/**
 * Polls `check` until it returns something other than undefined or false, and returns that;
 * fails after `timeoutMs`. Every wait in the tests is bounded by this.
 */
export async function eventually<T>(check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

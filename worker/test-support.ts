import { randomBytes } from 'node:crypto';
import type { Queue } from 'bullmq';
import { loadConfig, type PlatformConfig } from '../core/config';
import { createLogger } from '../core/logger';
import { createPlatformPubSub } from '../core/pubsub';
import { QUEUE_NAMES, createQueue, type QueueName } from '../core/queues';
import { createRedis, type Redis } from '../core/redis';
import type { PlatformRuntime } from '../core/subgraph';

/** Redis and PostgreSQL of the test machine, as test/harness.ts has them. */
export const WORKER_TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const WORKER_TEST_PG_ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://root@127.0.0.1:5432/postgres';

export interface WorkerTestRuntime {
  runtime: PlatformRuntime;
  /** Redis prefix of this test only (`test-<pid>-<random>`). */
  prefix: string;
  /** A producer's view of a queue under the test prefix (same options as the platform's). */
  queue(name: QueueName): Queue;
  /** Obliterates every queue under the prefix and closes the connections. */
  cleanup(): Promise<void>;
}

/**
 * A runtime for worker tests: real Redis under a prefix of its own, so test files running in
 * parallel never see each other's jobs. Not used by the platform itself.
 */
export function createWorkerTestRuntime(options: { databaseUrl?: string; overrides?: Partial<PlatformConfig> } = {}): WorkerTestRuntime {
  const prefix = `test-${process.pid}-${randomBytes(4).toString('hex')}`;
  const databaseUrl = options.databaseUrl ?? WORKER_TEST_PG_ADMIN_URL;
  const config = loadConfig(
    { NODE_ENV: 'test', LOG_LEVEL: process.env.LOG_LEVEL ?? 'error' },
    { redisPrefix: prefix, databaseUrl, redisUrl: WORKER_TEST_REDIS_URL, workerHealthPort: 0, ...options.overrides },
  );
  const pubsub = createPlatformPubSub(WORKER_TEST_REDIS_URL, prefix);
  const runtime: PlatformRuntime = { config, databaseUrl, redisUrl: WORKER_TEST_REDIS_URL, pubsub, logger: createLogger(config.logLevel) };
  let connection: Redis | undefined;
  const queues = new Map<QueueName, Queue>();
  return {
    runtime,
    prefix,
    queue(name) {
      connection ??= createRedis(WORKER_TEST_REDIS_URL);
      let queue = queues.get(name);
      if (!queue) {
        queue = createQueue(name, connection, prefix);
        queues.set(name, queue);
      }
      return queue;
    },
    async cleanup() {
      connection ??= createRedis(WORKER_TEST_REDIS_URL);
      for (const name of QUEUE_NAMES) {
        const queue = queues.get(name) ?? createQueue(name, connection, prefix);
        await queue.obliterate({ force: true }).catch(() => undefined);
        await queue.close().catch(() => undefined);
      }
      await connection.quit().catch(() => undefined);
      await pubsub.close();
    },
  };
}

/** Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

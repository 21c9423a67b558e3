import { randomBytes } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { PlatformConfig } from '../core/config';
import { QUEUE_NAMES, createQueue, type QueueName } from '../core/queues';
import { createRedis, type Redis } from '../core/redis';
import type { PlatformRuntime } from '../core/subgraph';

import { TEST_PG_ADMIN_URL, TEST_REDIS_URL, createTestRuntime } from '../test/services';

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
  const runtime = createTestRuntime({ databaseUrl: options.databaseUrl ?? TEST_PG_ADMIN_URL, prefix, overrides: options.overrides });
  const { pubsub } = runtime;
  let connection: Redis | undefined;
  const queues = new Map<QueueName, Queue>();
  return {
    runtime,
    prefix,
    queue(name) {
      connection ??= createRedis(TEST_REDIS_URL);
      let queue = queues.get(name);
      if (!queue) {
        queue = createQueue(name, connection, prefix);
        queues.set(name, queue);
      }
      return queue;
    },
    async cleanup() {
      connection ??= createRedis(TEST_REDIS_URL);
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

export { eventually } from '../test/services';

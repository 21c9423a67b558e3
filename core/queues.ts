import { Queue, type JobsOptions, type ConnectionOptions } from 'bullmq';

/** Every queue of the worker tier. Producers and processors import the names from here. */
export const QUEUE_NAMES = ['compute', 'gpu', 'images', 'browser', 'notebooks', 'agents', 'workflows', 'metering', 'maintenance'] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

/** Jobs of the maintenance queue. */
export const MAINTENANCE_JOBS = {
  purgeExpiredRefreshTokens: 'purge-expired-refresh-tokens',
} as const;

/** Retries with exponential backoff (1 s, 2 s, 4 s …); finished jobs are kept briefly for inspection. */
export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: { age: 7 * 86400 },
};

export function createQueue(name: QueueName, connection: ConnectionOptions, prefix: string): Queue {
  return new Queue(name, { connection, prefix: `${prefix}:bull`, defaultJobOptions: DEFAULT_JOB_OPTIONS });
}

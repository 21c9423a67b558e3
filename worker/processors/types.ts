import type { Job, RepeatOptions, WorkerOptions } from 'bullmq';
import type { PlatformConfig } from '../../core/config';
import type { Logger } from '../../core/logger';
import type { PlatformPubSub } from '../../core/pubsub';
import type { QueueName } from '../../core/queues';
import type { PlatformRuntime } from '../../core/subgraph';
import type { SubgraphDatabases } from '../subgraph-databases';

/** What every processor is given besides its job; built once per worker process. */
export interface ProcessorContext {
  runtime: PlatformRuntime;
  config: PlatformConfig;
  logger: Logger;
  /**
   * Live events (Redis pub/sub): processors publish progress here (container logs, agent
   * streams, status changes) and the owning subgraph's Subscription resolvers relay them.
   */
  pubsub: PlatformPubSub;
  /** Subgraph DataSources, each opened on first use and reused by every later job. */
  databases: SubgraphDatabases;
  /**
   * Registers a close step for a resource processors built for this process (an engine client,
   * a Redis connection): run when the worker stops, after the last job and before the databases close.
   */
  onStop?(close: () => Promise<unknown>): void;
}

/**
 * Handles one kind of job. A thrown error fails the attempt and BullMQ retries it with the
 * backoff of DEFAULT_JOB_OPTIONS; throw `UnrecoverableError` (bullmq) when a retry cannot help.
 * `signal` aborts when the worker gives up waiting for the job at shutdown. `token` is the job's
 * lock token, for `job.moveToDelayed(at, token)` followed by `throw new DelayedError()`.
 */
export type JobProcessor<Data = any, Result = unknown> = (job: Job<Data, Result>, ctx: ProcessorContext, signal?: AbortSignal, token?: string) => Promise<Result>;

/** Processors of one queue, by job name. */
export type QueueProcessors = Record<string, JobProcessor<any, any>>;

/** Processors of every queue that has any; a worker runs only the queues listed here. */
export type ProcessorRegistry = Partial<Record<QueueName, QueueProcessors>>;

/** BullMQ Worker options of one queue (concurrency, locks), over the defaults of consumeQueue. */
export type QueueWorkerOptions = Partial<Record<QueueName, (config: PlatformConfig) => Pick<WorkerOptions, 'concurrency' | 'lockDuration' | 'stalledInterval' | 'maxStalledCount'>>>;

/** A job the worker tier schedules itself (BullMQ job scheduler, upserted at start). */
export interface JobSchedule {
  /** Scheduler id; upserting the same id again updates it instead of adding a second one. */
  id: string;
  queue: QueueName;
  /** Name of the job it adds; it must have a processor, else the schedule is skipped. */
  jobName: string;
  repeat(config: PlatformConfig): Omit<RepeatOptions, 'key'>;
}

import 'reflect-metadata';
import { hostname } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { UnrecoverableError, Worker, type Queue } from 'bullmq';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendJson } from '../core/http';
import { closeOnce, closeServer } from '../core/lifecycle';
import { QUEUE_NAMES, createQueue, type QueueName } from '../core/queues';
import { createRedis, type Redis } from '../core/redis';
import type { PlatformRuntime } from '../core/subgraph';
import { PROCESSORS, QUEUE_WORKER_OPTIONS, SCHEDULES, type JobSchedule, type ProcessorContext, type ProcessorRegistry, type QueueProcessors, type QueueWorkerOptions } from './processors';
import { createSubgraphDatabases } from './subgraph-databases';

export interface WorkerOptions {
  /**
   * Processors by queue and job name; a queue without any gets no BullMQ Worker. Tests register
   * their own processors here.
   * @defaultValue PROCESSORS
   */
  processors?: ProcessorRegistry;
  /** Job schedulers upserted at start; one whose job has no processor is skipped. @defaultValue SCHEDULES */
  schedules?: JobSchedule[];
  /** How long stop() waits for active jobs before aborting them and closing anyway. @defaultValue 30000 */
  shutdownTimeoutMs?: number;
  /** BullMQ Worker options by queue (concurrency, lock duration); others get the defaults. @defaultValue QUEUE_WORKER_OPTIONS */
  queueOptions?: QueueWorkerOptions;
}

export interface RunningWorker {
  /** Queues this process consumes, in QUEUE_NAMES order. */
  queues: QueueName[];
  /** Ids of the job schedulers upserted at start. */
  schedulers: string[];
  /** http://host:port of the worker's /healthz and /readyz. */
  healthUrl: string;
  /** Stops taking jobs, waits for active ones (bounded), then closes queues and connections. Idempotent. */
  stop(): Promise<void>;
}

interface ConsumedQueue {
  name: QueueName;
  worker: Worker;
  /** Jobs whose processor is running now. */
  active: () => number;
}

/**
 * Starts the worker tier in this process: one BullMQ Worker per queue that has processors,
 * all sharing one Redis connection (each Worker adds its own blocking one), and the job
 * schedulers. Any number of such processes, on any hosts, share the queues.
 */
export async function startWorker(runtime: PlatformRuntime, options: WorkerOptions = {}): Promise<RunningWorker> {
  const { config } = runtime;
  const registry = options.processors ?? PROCESSORS;
  const schedules = options.schedules ?? SCHEDULES;
  const shutdownTimeoutMs = options.shutdownTimeoutMs ?? 30_000;
  const logger = runtime.logger.child({ service: 'worker' });
  const connection = createRedis(runtime.redisUrl);
  const databases = createSubgraphDatabases(runtime);
  const stopHooks: Array<() => Promise<unknown>> = [];
  const ctx: ProcessorContext = { runtime, config, logger, pubsub: runtime.pubsub, databases, onStop: (close) => void stopHooks.push(close) };

  const consumed: ConsumedQueue[] = [];
  const queues = new Map<QueueName, Queue>();
  const schedulerIds: string[] = [];
  const health = createServer((req, res) => void answerHealth(req.url ?? '/', res, connection, consumed));

  const stop = closeOnce(
    () => [
      // Queue workers close side by side: each waits for its own active jobs.
      async () => {
        const results = await Promise.allSettled(consumed.map((queue) => closeGracefully(queue, shutdownTimeoutMs, logger)));
        for (const result of results) {
          if (result.status === 'rejected') logger.warn('error while stopping a queue worker', { err: result.reason });
        }
      },
      ...[...queues.values()].map((queue) => () => queue.close()),
      () => Promise.allSettled(stopHooks.map((close) => close())),
      () => closeServer(health),
      () => databases.close(),
      () => connection.quit(),
    ],
    logger,
    'the worker',
  );

  try {
    for (const name of QUEUE_NAMES) {
      const processors = registry[name];
      if (!processors || Object.keys(processors).length === 0) continue;
      consumed.push(consumeQueue(name, processors, ctx, connection, (options.queueOptions ?? QUEUE_WORKER_OPTIONS)[name]?.(config)));
    }
    await Promise.all(consumed.map(({ worker }) => worker.waitUntilReady()));

    for (const schedule of schedules) {
      if (!registry[schedule.queue]?.[schedule.jobName]) {
        logger.warn('schedule skipped: no processor for its job', { scheduler: schedule.id, queue: schedule.queue, job: schedule.jobName });
        continue;
      }
      let queue = queues.get(schedule.queue);
      if (!queue) {
        queue = createQueue(schedule.queue, connection, config.redisPrefix);
        queues.set(schedule.queue, queue);
      }
      await queue.upsertJobScheduler(schedule.id, schedule.repeat(config), { name: schedule.jobName });
      schedulerIds.push(schedule.id);
    }
    await new Promise<void>((resolve, reject) => {
      health.once('error', reject);
      health.listen(config.workerHealthPort, config.bindHost, () => resolve());
    });
  } catch (err) {
    await stop();
    throw err;
  }

  const host = config.bindHost === '0.0.0.0' ? '127.0.0.1' : config.bindHost;
  const healthUrl = `http://${host}:${(health.address() as AddressInfo).port}`;
  logger.info('worker started', { queues: consumed.map((q) => q.name), schedulers: schedulerIds, concurrency: config.workerConcurrency, health: healthUrl });
  return { queues: consumed.map((q) => q.name), schedulers: schedulerIds, healthUrl, stop };
}

/** /healthz: the process answers. /readyz: Redis answers and every queue worker is running. */
async function answerHealth(url: string, res: ServerResponse, connection: Redis, consumed: ConsumedQueue[]): Promise<void> {
  const pathname = url.split('?')[0];
  if (pathname === '/healthz') return sendJson(res, 200, { status: 'ok', service: 'worker' });
  if (pathname === '/readyz') {
    const redisOk = await connection.ping().then(
      () => true,
      () => false,
    );
    const queues = Object.fromEntries(consumed.map((q) => [q.name, q.worker.isRunning() ? 'running' : 'stopped']));
    const ready = redisOk && consumed.every((q) => q.worker.isRunning());
    return sendJson(res, ready ? 200 : 503, { status: ready ? 'ready' : 'unavailable', service: 'worker', redis: redisOk ? 'ok' : 'unreachable', queues });
  }
  sendJson(res, 404, { error: { code: 'ROUTE_NOT_FOUND', message: `No route ${pathname}`, requestId: 'none' } });
}

function consumeQueue(name: QueueName, processors: QueueProcessors, ctx: ProcessorContext, connection: Redis, overrides: ReturnType<NonNullable<QueueWorkerOptions[QueueName]>> = {}): ConsumedQueue {
  const logger = ctx.logger.child({ queue: name });
  let active = 0;
  const worker = new Worker(
    name,
    async (job, token, signal) => {
      const processor = processors[job.name];
      // Retrying cannot make a processor appear; fail the job for good.
      if (!processor) throw new UnrecoverableError(`No processor for job "${job.name}" on queue "${name}"`);
      active += 1;
      try {
        return await processor(job, ctx, signal, token);
      } finally {
        active -= 1;
      }
    },
    {
      connection,
      prefix: `${ctx.config.redisPrefix}:bull`,
      concurrency: ctx.config.workerConcurrency,
      name: `${hostname()}:${process.pid}`,
      ...overrides,
    },
  );
  worker.on('failed', (job, err) => {
    const attempts = job?.opts.attempts ?? 1;
    const final = !job || err instanceof UnrecoverableError || err.name === 'UnrecoverableError' || job.attemptsMade >= attempts;
    logger.warn(final ? 'job failed' : 'job attempt failed, will retry', { job: job?.name, jobId: job?.id, attemptsMade: job?.attemptsMade, attempts, err });
  });
  // BullMQ reports connection and lock problems here; without a listener they would crash the process.
  worker.on('error', (err) => logger.error('queue worker error', { err }));
  return { name, worker, active: () => active };
}

/**
 * Stops taking new jobs, waits up to `timeoutMs` for the active ones, then closes. Jobs still
 * running then are aborted (their processors get the abort signal) and the worker is closed
 * without waiting; their locks lapse and another worker retries them.
 */
async function closeGracefully(queue: ConsumedQueue, timeoutMs: number, logger: ProcessorContext['logger']): Promise<void> {
  let idle = false;
  try {
    await queue.worker.pause(true);
    const deadline = Date.now() + timeoutMs;
    while (queue.active() > 0 && Date.now() < deadline) await delay(25);
    idle = queue.active() === 0;
    if (!idle) {
      logger.warn('jobs still active at shutdown, aborting them', { queue: queue.name, active: queue.active(), timeoutMs });
      queue.worker.cancelAllJobs('worker shutting down');
    }
  } finally {
    await queue.worker.close(!idle);
  }
}

import type { Queue } from 'bullmq';
import type { ComputeConfig } from '../../../core/config';
import type { Logger } from '../../../core/logger';
import { createQueue } from '../../../core/queues';
import { createRedis, type Redis } from '../../../core/redis';
import { billingSubgraph } from '../../../subgraphs/billing';
import { SecretRepository } from '../../../subgraphs/billing/secrets/secret.repository';
import { SecretService } from '../../../subgraphs/billing/secrets/secret.service';
import { computeSubgraph } from '../../../subgraphs/compute';
import { ComputeJobs } from '../../../subgraphs/compute/compute-jobs';
import { SandboxRepository } from '../../../subgraphs/compute/sandboxes/sandbox.repository';
import { SnapshotRepository } from '../../../subgraphs/compute/snapshots/snapshot.repository';
import type { DataSource } from 'typeorm';
import { createEngine } from '../../runtime';
import type { ContainerRuntime } from '../../runtime/types';
import type { ProcessorContext } from '../types';

/** Everything the compute processors share within one worker process (built once, on first use). */
export interface ComputeContext {
  ctx: ProcessorContext;
  config: ComputeConfig;
  logger: Logger;
  engine: ContainerRuntime;
  dataSource: DataSource;
  sandboxes: SandboxRepository;
  snapshots: SnapshotRepository;
  jobs: ComputeJobs;
  queues: { compute: Queue; gpu: Queue };
  /** Billing's SecretService on the billing DataSource, opened on the first sandbox with secretRefs. */
  secrets(): Promise<SecretService>;
}

const contexts = new WeakMap<ProcessorContext, Promise<ComputeContext>>();


/**
 * The compute context of this worker process: cached per ProcessorContext, so every job after
 * the first pays no setup. A failed build (database down) is forgotten and tried again.
 */
export function computeContext(ctx: ProcessorContext): Promise<ComputeContext> {
  let context = contexts.get(ctx);
  if (!context) {
    context = build(ctx);
    contexts.set(ctx, context);
    context.catch(() => contexts.delete(ctx));
  }
  return context;
}

async function build(ctx: ProcessorContext): Promise<ComputeContext> {
  const { config } = ctx;
  const dataSource = await ctx.databases.get(computeSubgraph);
  const redis: Redis = createRedis(ctx.runtime.redisUrl);
  const queues = { compute: createQueue('compute', redis, config.redisPrefix), gpu: createQueue('gpu', redis, config.redisPrefix) };
  ctx.onStop?.(async () => {
    await Promise.allSettled([queues.compute.close(), queues.gpu.close()]);
    await redis.quit().catch(() => undefined);
  });
  const logger = ctx.logger.child({ domain: 'compute' });
  let secrets: Promise<SecretService> | undefined;
  return {
    ctx,
    config: config.compute,
    logger,
    engine: createEngine(config.compute),
    dataSource,
    sandboxes: new SandboxRepository(dataSource, { pubsub: ctx.pubsub, redis, redisPrefix: config.redisPrefix }),
    snapshots: new SnapshotRepository(dataSource),
    jobs: new ComputeJobs(queues),
    queues,
    secrets() {
      secrets ??= ctx.databases.get(billingSubgraph).then(
        (billing) => new SecretService({ repository: new SecretRepository(billing), encryptionKey: config.secretsEncryptionKey, logger: ctx.logger.child({ domain: 'secrets' }) }),
      );
      secrets.catch(() => (secrets = undefined));
      return secrets;
    },
  };
}

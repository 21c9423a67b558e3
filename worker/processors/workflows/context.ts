import type { Queue } from 'bullmq';
import type { DataSource } from 'typeorm';
import type { Logger } from '../../../core/logger';
import { createQueue } from '../../../core/queues';
import { createRedis, type Redis } from '../../../core/redis';
import { workflowsSubgraph } from '../../../subgraphs/workflows';
import { SecretParameters } from '../../../subgraphs/workflows/api/secret-parameters';
import { WatchedExecutions } from '../../../subgraphs/workflows/engine/events';
import { ExecutionStarter } from '../../../subgraphs/workflows/executions/execution-starter';
import { createNodeRegistry } from '../../../subgraphs/workflows/nodes';
import type { NodeRegistry, NodeServices } from '../../../subgraphs/workflows/nodes/types';
import type { ProcessorContext } from '../types';
import { internalNodeServices } from './node-services';

/** What the workflow processors share within one worker process (built once, on first use). */
export interface WorkflowsContext {
  ctx: ProcessorContext;
  logger: Logger;
  dataSource: DataSource;
  registry: NodeRegistry;
  /** Opens the sealed secret parameters of saved workflows' nodes. */
  secrets: SecretParameters;
  starter: ExecutionStarter;
  services: NodeServices;
  /** The worker's Redis connection for workflows (the queue's; concurrency slots). */
  redis: Redis;
  /** Executions someone follows: the engine publishes only their events. */
  watched: WatchedExecutions;
}

const contexts = new WeakMap<ProcessorContext, Promise<WorkflowsContext>>();

/** The workflows context of this worker process; a failed build (database down) is tried again by the next job. */
export function workflowsContext(ctx: ProcessorContext): Promise<WorkflowsContext> {
  let context = contexts.get(ctx);
  if (!context) {
    context = build(ctx);
    contexts.set(ctx, context);
    context.catch(() => contexts.delete(ctx));
  }
  return context;
}

async function build(ctx: ProcessorContext): Promise<WorkflowsContext> {
  const dataSource = await ctx.databases.get(workflowsSubgraph);
  const redis = createRedis(ctx.runtime.redisUrl);
  const queue: Queue = createQueue('workflows', redis, ctx.config.redisPrefix);
  const watched = new WatchedExecutions(ctx.pubsub);
  ctx.onStop?.(async () => {
    watched.close();
    await queue.close().catch(() => undefined);
    await redis.quit().catch(() => undefined);
  });
  // Schedules start executions through the same starter as the API.
  const starter = new ExecutionStarter(dataSource, queue);
  const logger = ctx.logger.child({ domain: 'workflows' });
  const registry = createNodeRegistry({ trustedPlugins: ctx.config.workflows.trustedPlugins });
  return {
    ctx,
    logger,
    dataSource,
    registry,
    secrets: new SecretParameters(registry, ctx.config.secretsEncryptionKey),
    starter,
    // sandbox-exec and ai-chat reach compute and ai through their internal routes.
    services: internalNodeServices(ctx, logger),
    redis,
    watched,
  };
}

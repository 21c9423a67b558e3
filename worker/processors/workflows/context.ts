import type { Queue } from 'bullmq';
import type { DataSource } from 'typeorm';
import { UnavailableError } from '../../../core/errors';
import type { Logger } from '../../../core/logger';
import { createQueue } from '../../../core/queues';
import { createRedis } from '../../../core/redis';
import { workflowsSubgraph } from '../../../subgraphs/workflows';
import { ExecutionStarter } from '../../../subgraphs/workflows/executions/execution-starter';
import { createNodeRegistry } from '../../../subgraphs/workflows/nodes';
import type { NodeRegistry, NodeServices } from '../../../subgraphs/workflows/nodes/types';
import type { ProcessorContext } from '../types';

/** What the workflow processors share within one worker process (built once, on first use). */
export interface WorkflowsContext {
  ctx: ProcessorContext;
  logger: Logger;
  dataSource: DataSource;
  registry: NodeRegistry;
  starter: ExecutionStarter;
  services: NodeServices;
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
  ctx.onStop?.(async () => {
    await queue.close().catch(() => undefined);
    await redis.quit().catch(() => undefined);
  });
  // Schedules start executions through the same starter as the API.
  const starter = new ExecutionStarter(dataSource, queue);
  return {
    ctx,
    logger: ctx.logger.child({ domain: 'workflows' }),
    dataSource,
    registry: createNodeRegistry({ trustedPlugins: ctx.config.workflows.trustedPlugins }),
    starter,
    services: unavailableServices(),
  };
}

/**
 * Services nodes use to reach other domains. Not wired yet: the compute and ai subgraphs have
 * no internal routes for workflows, so the nodes that need them fail with this error.
 */
export function unavailableServices(): NodeServices {
  return {
    sandboxExec: () => Promise.reject(new UnavailableError('Sandbox commands are not available from workflows yet')),
    aiChat: () => Promise.reject(new UnavailableError('AI chat is not available from workflows yet')),
  };
}

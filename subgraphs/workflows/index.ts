import type { Queue } from 'bullmq';
import type { DataSource } from 'typeorm';
import type { PlatformConfig } from '../../core/config';
import type { Logger } from '../../core/logger';
import type { PlatformPubSub } from '../../core/pubsub';
import { createQueue } from '../../core/queues';
import type { Redis } from '../../core/redis';
import { TOPICS } from '../../core/pubsub';
import { defineSubgraph, startSubgraph, type PlatformRuntime, type SubgraphDeps } from '../../core/subgraph';
import { serviceInfoResolver } from '../../core/subgraph/service-info';
import { CatalogService } from './api/catalog.service';
import { ExecutionService } from './api/execution.service';
import { MetricsService } from './api/metrics.service';
import { TriggerRegistrar } from './api/triggers';
import { WorkflowResolver } from './api/workflow.resolver';
import { WorkflowService } from './api/workflow.service';
import { ReplyWaiter } from './engine/replies';
import { ExecutionStarter } from './executions/execution-starter';
import { createNodeRegistry } from './nodes';
import type { NodeRegistry } from './nodes/types';
import { WORKFLOW_ENTITIES, WORKFLOW_MIGRATIONS } from './schema';
import type { WorkflowsLoaders } from './workflows.loaders';
import { SecretParameters } from './api/secret-parameters';
import { createWebhookRoutes, type WebhookRoutes } from './webhooks';

const WorkflowsServiceInfoResolver = serviceInfoResolver('workflows');

/**
 * Everything the workflows domain runs on, built once per process. Extensible: the webhook
 * routes are built from this object (`createWebhookRoutes(services)`) and added as `webhooks`.
 */
export interface WorkflowServices {
  config: PlatformConfig;
  dataSource: DataSource;
  redis: Redis;
  pubsub: PlatformPubSub;
  logger: Logger;
  /** Node types of this process: built-ins plus WORKFLOW_TRUSTED_PLUGINS. */
  registry: NodeRegistry;
  /** The workflows queue (executions, schedule triggers). */
  queue: Queue;
  /** Creates and queues executions: every way of starting one goes through it. */
  starter: ExecutionStarter;
  triggers: TriggerRegistrar;
  workflows: WorkflowService;
  executions: ExecutionService;
  metrics: MetricsService;
  catalog: CatalogService;
  /** This process's reply channel: webhook routes and execute with wait hear their executions' answers on it. */
  replies: ReplyWaiter;
  /** The webhook trigger routes (/webhooks/v1/{workflowId}/{nodeId}[/*]), served as the subgraph's raw routes. */
  webhooks: WebhookRoutes;
  close(): Promise<void>;
}

export function createWorkflowServices(deps: SubgraphDeps): WorkflowServices {
  const { config, dataSource, redis, pubsub } = deps;
  const logger = deps.logger.child({ domain: 'workflows' });
  const registry = createNodeRegistry({ trustedPlugins: config.workflows.trustedPlugins });
  const queue = createQueue('workflows', redis, config.redisPrefix);
  const starter = new ExecutionStarter(dataSource, queue);
  const triggers = new TriggerRegistrar(queue, registry);
  const secrets = new SecretParameters(registry, config.secretsEncryptionKey);
  const workflows = new WorkflowService({
    dataSource,
    registry,
    triggers,
    secrets,
    publicUrl: config.publicUrl,
    // Settled before the answer: the caller's next webhook call finds no stale registration.
    onTriggersChanged: (workflowId) => pubsub.publishSettled(TOPICS.workflowTriggersChanged, { workflowId }),
  });
  const replies = new ReplyWaiter(pubsub);
  const executions = new ExecutionService({ dataSource, registry, starter, queue, pubsub, workflows, logger, replies });
  const metrics = new MetricsService(dataSource, workflows);
  const catalog = new CatalogService(registry, config.workflows.trustedPlugins);
  const webhooks = createWebhookRoutes({ dataSource, replies, starter, secrets, config, logger: logger.child({ component: 'webhooks' }) });
  // Every process's webhook routes drop a workflow's cached registration when its triggers change.
  const stopListening = pubsub.on<{ workflowId: string }>(TOPICS.workflowTriggersChanged, (event) => webhooks.invalidate(event.workflowId));
  return {
    replies,
    webhooks,
    config,
    dataSource,
    redis,
    pubsub,
    logger,
    registry,
    queue,
    starter,
    triggers,
    workflows,
    executions,
    metrics,
    catalog,
    async close() {
      stopListening();
      replies.close();
      await queue.close().catch(() => undefined);
    },
  };
}

/** The workflows domain: workflow graphs, their triggers and executions (the engine runs on the worker tier). */
export const workflowsSubgraph = defineSubgraph<WorkflowServices, WorkflowsLoaders>({
  name: 'workflows',
  resolvers: [WorkflowsServiceInfoResolver, WorkflowResolver],
  entities: WORKFLOW_ENTITIES,
  migrations: WORKFLOW_MIGRATIONS,
  createServices: createWorkflowServices,
  createResolvers: (services) => [new WorkflowsServiceInfoResolver(), new WorkflowResolver(services.workflows, services.executions, services.metrics, services.catalog)],
  createLoaders: (services) => ({ services }),
  // The webhook trigger routes (/webhooks/v1/{workflowId}/{nodeId}[/*]), forwarded unauthenticated by the edge.
  rawHttp: (services) => services.webhooks,
  onStop: (services) => services.close(),
});

export function start(runtime: PlatformRuntime, port?: number) {
  return startSubgraph(workflowsSubgraph, runtime, port);
}

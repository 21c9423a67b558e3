import { requestContextOf, type RequestContext } from '../../core/context';
import { InternalClient } from '../../core/internal-client';
import type { Envelope } from '../../core/principal';
import { TOPICS, type SandboxStatusEvent } from '../../core/pubsub';
import { createQueue } from '../../core/queues';
import { defineSubgraph, serviceBaseUrl, startSubgraph, type PlatformRuntime, type SubgraphDeps } from '../../core/subgraph';
import { serviceInfoResolver } from '../../core/subgraph/service-info';
import { createEngine } from '../../worker/runtime';
import type { ContainerRuntime } from '../../worker/runtime/types';
import { ComputeJobs } from './compute-jobs';
import { createPortProxy } from './ports/port-proxy';
import type { Logger } from '../../core/logger';
import type { ComputeLoaders } from './compute.loaders';
import { ConcurrencyLimits } from './limits';
import { SandboxIoService } from './sandboxes/sandbox-io.service';
import { SandboxRepository } from './sandboxes/sandbox.repository';
import { SandboxResolver } from './sandboxes/sandbox.resolver';
import { SandboxService } from './sandboxes/sandbox.service';
import type { SandboxStatusChange } from './sandboxes/sandbox.types';
import { COMPUTE_ENTITIES, COMPUTE_MIGRATIONS } from './schema';
import { SnapshotRepository } from './snapshots/snapshot.repository';
import { SnapshotResolver } from './snapshots/snapshot.resolver';
import { SnapshotService } from './snapshots/snapshot.service';

const ComputeServiceInfoResolver = serviceInfoResolver('compute');

export interface ComputeServices {
  sandboxes: SandboxService;
  io: SandboxIoService;
  snapshots: SnapshotService;
  runtime: ContainerRuntime;
  logger: Logger;
  /** Status changes of one sandbox the caller may read (checked at subscribe time). */
  statusStream(ctx: RequestContext, sandboxId: string): Promise<AsyncIterable<SandboxStatusChange>>;
  close(): Promise<void>;
}

export function createComputeServices(deps: SubgraphDeps): ComputeServices {
  const { config, dataSource, redis, pubsub } = deps;
  const logger = deps.logger.child({ domain: 'compute' });
  const runtime = createEngine(config.compute);
  const sandboxRepository = new SandboxRepository(dataSource, { pubsub, redis, redisPrefix: config.redisPrefix });
  const snapshotRepository = new SnapshotRepository(dataSource);
  const queues = { compute: createQueue('compute', redis, config.redisPrefix), gpu: createQueue('gpu', redis, config.redisPrefix) };
  const jobs = new ComputeJobs(queues);
  let billing: InternalClient | undefined;
  const limits = new ConcurrencyLimits(
    () => (billing ??= new InternalClient({ baseUrl: serviceBaseUrl(deps.runtime, 'billing'), internalSigningSecret: config.internalSigningSecret, timeoutMs: 5000 })),
    logger,
  );
  const sandboxes = new SandboxService({ sandboxes: sandboxRepository, snapshots: snapshotRepository, jobs, runtime, limits, config: config.compute, logger });
  const io = new SandboxIoService({ sandboxes: sandboxRepository, lifecycle: sandboxes, runtime, config: config.compute, maxBodyBytes: config.maxBodyBytes, publicUrl: config.publicUrl });
  const snapshots = new SnapshotService({ snapshots: snapshotRepository, sandboxes: sandboxRepository, lifecycle: sandboxes, jobs, runtime });
  return {
    sandboxes,
    io,
    snapshots,
    runtime,
    logger,
    async statusStream(ctx, sandboxId) {
      const sandbox = await sandboxes.load(ctx, sandboxId, 'viewer');
      const source = pubsub.graphql.subscribe(TOPICS.sandboxStatus, sandbox.id) as AsyncIterable<SandboxStatusEvent>;
      return (async function* () {
        for await (const event of source) yield { sandboxId: event.sandboxId, fromStatus: event.fromStatus, toStatus: event.toStatus, reason: event.reason, at: event.at };
      })();
    },
    async close() {
      await Promise.allSettled([queues.compute.close(), queues.gpu.close()]);
    },
  };
}

/** The compute domain: sandboxes and snapshots on a container engine (README.md in this folder). */
export const computeSubgraph = defineSubgraph<ComputeServices, ComputeLoaders>({
  name: 'compute',
  resolvers: [ComputeServiceInfoResolver, SandboxResolver, SnapshotResolver],
  entities: COMPUTE_ENTITIES,
  migrations: COMPUTE_MIGRATIONS,
  createServices: createComputeServices,
  createResolvers: (services) => [new ComputeServiceInfoResolver(), new SandboxResolver(services.sandboxes, services.io), new SnapshotResolver(services.snapshots)],
  createLoaders: (services) => ({ services }),
  internalRoutes: (services) => ({
    /**
     * `{ workspaceId, sandboxId, command, timeoutSeconds? }` → `{ exitCode, stdout, stderr, timedOut }`:
     * a workflow's sandbox-exec step (the worker, no principal), run as POST /sandboxes/{id}/exec runs it.
     */
    'workflows/sandbox-exec': async ({ body, envelope, signal }) => services.io.execForWorkflow(requestContextOf(envelope), body, signal),
  }),
  // Ports added to sandboxes, proxied here from the gateway's /v1/sandboxes/{id}/ports/{port}/proxy/.
  rawHttp: (services) =>
    createPortProxy({
      runtime: services.runtime,
      resolveTarget: (envelope, sandboxId, port) => services.io.portTarget(requestContextOf(envelope), sandboxId, port),
      logger: services.logger.child({ component: 'port-proxy' }),
    }),
  onStop: (services) => services.close(),
});

export function start(runtime: PlatformRuntime, port?: number) {
  return startSubgraph(computeSubgraph, runtime, port);
}


import type { DataSource } from 'typeorm';
import type { PlatformConfig } from '../../core/config';
import type { Logger } from '../../core/logger';
import { TOPICS, type PlatformPubSub } from '../../core/pubsub';
import type { Redis } from '../../core/redis';
import { defineSubgraph, startSubgraph, type PlatformRuntime, type SubgraphDeps } from '../../core/subgraph';
import { serviceInfoResolver } from '../../core/subgraph/service-info';
import { ANALYTICS_RESOLVERS, createAnalyticsApi, type AnalyticsApi } from './api';
import { createIngest, type AnalyticsIngest } from './ingest';
import { createSessionDayRoller, type SessionDayRoller } from './rollup/session-days';
import { ANALYTICS_ENTITIES, ANALYTICS_MIGRATIONS } from './schema';

const AnalyticsServiceInfoResolver = serviceInfoResolver('analytics');

/** What the analytics domain runs on, built once per process. */
export interface AnalyticsServices {
  config: PlatformConfig;
  dataSource: DataSource;
  redis: Redis;
  pubsub: PlatformPubSub;
  logger: Logger;
  /** The public ingestion routes (track.js, track, event, identify) and their batch writer. */
  ingest: AnalyticsIngest;
  /** Installations, funnels and reports (GraphQL, hence REST). */
  api: AnalyticsApi;
  /** Keeps the daily sessions rollup the stats read (rollup/session-days.ts). */
  rollup: SessionDayRoller;
  close(): Promise<void>;
}

/** The deps both halves are built from. */
export interface AnalyticsDeps {
  config: PlatformConfig;
  dataSource: DataSource;
  redis: Redis;
  pubsub: PlatformPubSub;
  logger: Logger;
  /** Tells every process's ingestion that an installation changed (domains, deleted): cached keys are dropped. */
  installationChanged(installationId: string): Promise<void>;
}

export function createAnalyticsServices(deps: SubgraphDeps): AnalyticsServices {
  const { config, dataSource, redis, pubsub } = deps;
  const logger = deps.logger.child({ domain: 'analytics' });
  const shared: AnalyticsDeps = {
    config,
    dataSource,
    redis,
    pubsub,
    logger,
    // Settled before the answer (a removed domain is refused from the next event on); a Redis failure leaves it to the cache's 5 s TTL.
    installationChanged: (installationId) => pubsub.publishSettled(TOPICS.analyticsInstallationChanged, { installationId }).catch(() => undefined),
  };
  const ingest = createIngest(shared);
  const api = createAnalyticsApi(shared);
  const rollup = createSessionDayRoller({ dataSource, logger: logger.child({ component: 'rollup' }) });
  const stopListening = pubsub.on<{ installationId?: string }>(TOPICS.analyticsInstallationChanged, (event) => ingest.invalidate(event?.installationId));
  return {
    config,
    dataSource,
    redis,
    pubsub,
    logger,
    ingest,
    api,
    rollup,
    async close() {
      stopListening();
      // Whatever was accepted is written before the process goes.
      await Promise.all([ingest.close(), rollup.close()]);
    },
  };
}

/** The analytics domain: installations, ingestion, dashboards, reports and funnels. */
export const analyticsSubgraph = defineSubgraph<AnalyticsServices>({
  name: 'analytics',
  resolvers: [AnalyticsServiceInfoResolver, ...ANALYTICS_RESOLVERS],
  entities: ANALYTICS_ENTITIES,
  migrations: ANALYTICS_MIGRATIONS,
  createServices: createAnalyticsServices,
  createResolvers: (services) => [new AnalyticsServiceInfoResolver(), ...services.api.resolvers],
  // The public ingestion routes (/analytics-public/…), forwarded unauthenticated by the edge from /v1/analytics/{track.js,track,event,identify}.
  rawHttp: (services) => services.ingest.routes,
  onStop: (services) => services.close(),
});

export function start(runtime: PlatformRuntime, port?: number) {
  return startSubgraph(analyticsSubgraph, runtime, port);
}

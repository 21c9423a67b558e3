import { defineSubgraph, startSubgraph, type PlatformRuntime } from '../../core/subgraph';
import { serviceInfoResolver } from '../../core/subgraph/service-info';

const AnalyticsServiceInfoResolver = serviceInfoResolver('analytics');

/** The analytics domain. It has no records yet; it starts, composes and reports its status. */
export const analyticsSubgraph = defineSubgraph({
  name: 'analytics',
  resolvers: [AnalyticsServiceInfoResolver],
  entities: [],
  migrations: [],
  createServices: () => ({}),
  createResolvers: () => [new AnalyticsServiceInfoResolver()],
});

export function start(runtime: PlatformRuntime, port?: number) {
  return startSubgraph(analyticsSubgraph, runtime, port);
}

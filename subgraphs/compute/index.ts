import { defineSubgraph, startSubgraph, type PlatformRuntime } from '../../core/subgraph';
import { serviceInfoResolver } from '../../core/subgraph/service-info';

const ComputeServiceInfoResolver = serviceInfoResolver('compute');

/** The compute domain. It has no records yet; it starts, composes and reports its status. */
export const computeSubgraph = defineSubgraph({
  name: 'compute',
  resolvers: [ComputeServiceInfoResolver],
  entities: [],
  migrations: [],
  createServices: () => ({}),
  createResolvers: () => [new ComputeServiceInfoResolver()],
});

export function start(runtime: PlatformRuntime, port?: number) {
  return startSubgraph(computeSubgraph, runtime, port);
}

import { defineSubgraph, startSubgraph, type PlatformRuntime } from '../../core/subgraph';
import { serviceInfoResolver } from '../../core/subgraph/service-info';

const AiServiceInfoResolver = serviceInfoResolver('ai');

/** The ai domain. It has no records yet; it starts, composes and reports its status. */
export const aiSubgraph = defineSubgraph({
  name: 'ai',
  resolvers: [AiServiceInfoResolver],
  entities: [],
  migrations: [],
  createServices: () => ({}),
  createResolvers: () => [new AiServiceInfoResolver()],
});

export function start(runtime: PlatformRuntime, port?: number) {
  return startSubgraph(aiSubgraph, runtime, port);
}

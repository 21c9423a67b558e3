import { defineSubgraph, startSubgraph, type PlatformRuntime } from '../../core/subgraph';
import { serviceInfoResolver } from '../../core/subgraph/service-info';

const SessionsServiceInfoResolver = serviceInfoResolver('sessions');

/** The sessions domain. It has no records yet; it starts, composes and reports its status. */
export const sessionsSubgraph = defineSubgraph({
  name: 'sessions',
  resolvers: [SessionsServiceInfoResolver],
  entities: [],
  migrations: [],
  createServices: () => ({}),
  createResolvers: () => [new SessionsServiceInfoResolver()],
});

export function start(runtime: PlatformRuntime, port?: number) {
  return startSubgraph(sessionsSubgraph, runtime, port);
}

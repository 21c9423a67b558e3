import { defineSubgraph, startSubgraph, type PlatformRuntime } from '../../core/subgraph';
import { serviceInfoResolver } from '../../core/subgraph/service-info';

const WorkflowsServiceInfoResolver = serviceInfoResolver('workflows');

/** The workflows domain. It has no records yet; it starts, composes and reports its status. */
export const workflowsSubgraph = defineSubgraph({
  name: 'workflows',
  resolvers: [WorkflowsServiceInfoResolver],
  entities: [],
  migrations: [],
  createServices: () => ({}),
  createResolvers: () => [new WorkflowsServiceInfoResolver()],
});

export function start(runtime: PlatformRuntime, port?: number) {
  return startSubgraph(workflowsSubgraph, runtime, port);
}

import { startSubgraph, type PlatformRuntime } from '../../core/subgraph';
import { placeholderSubgraph } from '../../core/subgraph/service-info';

/** The workflows domain: no records yet; it starts, composes and reports its status. */
export const workflowsSubgraph = placeholderSubgraph('workflows');

export function start(runtime: PlatformRuntime, port?: number) {
  return startSubgraph(workflowsSubgraph, runtime, port);
}

import { startSubgraph, type PlatformRuntime } from '../../core/subgraph';
import { placeholderSubgraph } from '../../core/subgraph/service-info';

/** The compute domain: no records yet; it starts, composes and reports its status. */
export const computeSubgraph = placeholderSubgraph('compute');

export function start(runtime: PlatformRuntime, port?: number) {
  return startSubgraph(computeSubgraph, runtime, port);
}

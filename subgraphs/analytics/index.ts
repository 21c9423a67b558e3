import { startSubgraph, type PlatformRuntime } from '../../core/subgraph';
import { placeholderSubgraph } from '../../core/subgraph/service-info';

/** The analytics domain: no records yet; it starts, composes and reports its status. */
export const analyticsSubgraph = placeholderSubgraph('analytics');

export function start(runtime: PlatformRuntime, port?: number) {
  return startSubgraph(analyticsSubgraph, runtime, port);
}

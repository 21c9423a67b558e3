import { startSubgraph, type PlatformRuntime } from '../../core/subgraph';
import { placeholderSubgraph } from '../../core/subgraph/service-info';

/** The ai domain: no records yet; it starts, composes and reports its status. */
export const aiSubgraph = placeholderSubgraph('ai');

export function start(runtime: PlatformRuntime, port?: number) {
  return startSubgraph(aiSubgraph, runtime, port);
}

import { startSubgraph, type PlatformRuntime } from '../../core/subgraph';
import { placeholderSubgraph } from '../../core/subgraph/service-info';

/** The sessions domain: no records yet; it starts, composes and reports its status. */
export const sessionsSubgraph = placeholderSubgraph('sessions');

export function start(runtime: PlatformRuntime, port?: number) {
  return startSubgraph(sessionsSubgraph, runtime, port);
}

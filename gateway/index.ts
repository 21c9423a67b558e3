import type { SubgraphName } from '../core/config';
import type { PlatformRuntime } from '../core/subgraph';

export interface GatewayOptions {
  /** Where each subgraph's HTTP GraphQL endpoint is (ws:// is derived from it). */
  subgraphUrls: Record<SubgraphName, string>;
  /** Port of the edge; defaults to config.port. */
  port?: number;
}

export interface RunningGateway {
  /** http://host:port of the edge (REST under /v1, GraphQL under /graphql). */
  url: string;
  stop(): Promise<void>;
}

export async function startGateway(_runtime: PlatformRuntime, _options: GatewayOptions): Promise<RunningGateway> {
  throw new Error('gateway: being written');
}

import type { Principal } from './principal';

/** The context every resolver and service method receives (`(ctx, input)`). */
export interface RequestContext {
  principal: Principal | null;
  requestId: string;
  clientIp: string;
  workspaceHeader?: string;
}

/** A subgraph's context: the request plus that subgraph's per-request DataLoaders. */
export interface SubgraphContext<L = Record<string, unknown>> extends RequestContext {
  loaders: L;
}

import type { Envelope, Principal } from './principal';

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

/**
 * The request a signed envelope stands for (a subgraph's GraphQL, internal and raw routes alike);
 * without one, an anonymous request of unknown origin.
 */
export function requestContextOf(envelope: Envelope | null): RequestContext {
  return envelope
    ? { principal: envelope.principal, requestId: envelope.requestId, clientIp: envelope.clientIp, workspaceHeader: envelope.workspaceHeader }
    : { principal: null, requestId: 'none', clientIp: 'unknown' };
}

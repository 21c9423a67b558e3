import { RemoteGraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { ENVELOPE_HEADER, signEnvelope } from '../core/principal';
import type { GatewayContext } from './context';

/**
 * Calls a subgraph with the caller's principal in a signed envelope. The envelope is signed
 * once per request, however many subgraphs the query plan touches.
 */
export class SignedDataSource extends RemoteGraphQLDataSource<GatewayContext> {
  constructor(url: string, private readonly signingSecret: string) {
    super({ url });
  }

  override willSendRequest({ request, context }: GraphQLDataSourceProcessOptions<GatewayContext>): void {
    const ctx = context as Partial<GatewayContext>;
    if (!ctx.requestId) {
      // Apollo's own calls (none with a static supergraph) go out anonymous.
      request.http?.headers.set(ENVELOPE_HEADER, signEnvelope(this.signingSecret, { principal: null, requestId: 'gateway', clientIp: '', iat: Math.floor(Date.now() / 1000) }));
      return;
    }
    ctx.envelopeHeader ??= signEnvelope(this.signingSecret, {
      principal: ctx.principal ?? null,
      requestId: ctx.requestId,
      clientIp: ctx.clientIp ?? '',
      workspaceHeader: ctx.workspaceHeader,
      iat: Math.floor(Date.now() / 1000),
    });
    request.http?.headers.set(ENVELOPE_HEADER, ctx.envelopeHeader);
    request.http?.headers.set('x-request-id', ctx.requestId);
  }
}

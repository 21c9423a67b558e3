import type { GraphQLDataSource, GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import type { GatewayGraphQLResponse } from '@apollo/server-gateway-interface';
import { GraphQLError } from 'graphql';
import { Pool } from 'undici';
import { ENVELOPE_HEADER, signEnvelope } from '../core/principal';
import type { GatewayContext } from './context';

/** Keep-alive connections per subgraph; enough for a saturated 2-core gateway. */
const CONNECTIONS_PER_SUBGRAPH = 64;
/** A subgraph that has not answered by then is reported UNAVAILABLE. */
const SUBGRAPH_TIMEOUT_MS = 30_000;

/**
 * How the gateway calls a subgraph: POST the fetch of the query plan as JSON with the caller's
 * principal in a signed envelope (signed once per request, however many fetches the plan has).
 *
 * This implements @apollo/gateway's `GraphQLDataSource` interface directly instead of extending
 * `RemoteGraphQLDataSource`: the stock one sends through make-fetch-happen (an HTTP cache and
 * retry layer we do not use) and builds node-fetch Headers and Request objects per fetch, which
 * profiling showed to be a large share of the gateway's own CPU. Here one undici keep-alive pool
 * per subgraph does the POST. There are no APQ or HTTP caching features to lose: we use neither.
 */
export class SignedDataSource implements GraphQLDataSource<GatewayContext> {
  private readonly pool: Pool;
  private readonly path: string;

  constructor(readonly url: string, private readonly signingSecret: string) {
    const parsed = new URL(url);
    this.path = `${parsed.pathname}${parsed.search}`;
    this.pool = new Pool(parsed.origin, { connections: CONNECTIONS_PER_SUBGRAPH, pipelining: 1, keepAliveTimeout: 60_000 });
  }

  async process(options: GraphQLDataSourceProcessOptions<GatewayContext>): Promise<GatewayGraphQLResponse> {
    const { request } = options;
    if (!request.query) throw new Error('Missing query');
    const headers: Record<string, string> = { 'content-type': 'application/json', [ENVELOPE_HEADER]: this.envelopeOf(options.context) };
    const requestId = (options.context as Partial<GatewayContext>).requestId;
    if (requestId) headers['x-request-id'] = requestId;
    const body = JSON.stringify({ query: request.query, variables: request.variables, operationName: request.operationName, extensions: request.extensions });

    let statusCode: number;
    let text: string;
    let responseHeaders: Record<string, string | string[] | undefined>;
    try {
      const response = await this.pool.request({ path: this.path, method: 'POST', headers, body, headersTimeout: SUBGRAPH_TIMEOUT_MS, bodyTimeout: SUBGRAPH_TIMEOUT_MS });
      statusCode = response.statusCode;
      responseHeaders = response.headers;
      text = await response.body.text();
    } catch (err) {
      throw new GraphQLError('A service this operation needs is unavailable', { extensions: { code: 'UNAVAILABLE' }, originalError: err as Error });
    }
    let parsed: GatewayGraphQLResponse;
    try {
      parsed = JSON.parse(text) as GatewayGraphQLResponse;
    } catch {
      throw new GraphQLError(`A service answered ${statusCode} without JSON`, { extensions: { code: 'UNAVAILABLE' } });
    }
    // A subgraph's own GraphQL errors (401 included) travel on with their codes; anything else is a fault.
    if (statusCode >= 300 && !(parsed && typeof parsed === 'object' && Array.isArray(parsed.errors))) {
      throw new GraphQLError(`A service answered ${statusCode}`, { extensions: { code: 'UNAVAILABLE' } });
    }
    const get = (name: string) => {
      const value = responseHeaders[name.toLowerCase()];
      return Array.isArray(value) ? value.join(', ') : (value ?? null);
    };
    return { ...parsed, http: { headers: { get }, status: statusCode, url: this.url } as never };
  }

  /** Closes the pool's sockets. */
  close(): Promise<void> {
    return this.pool.close();
  }

  private envelopeOf(context: GatewayContext | Record<string, unknown>): string {
    const ctx = context as Partial<GatewayContext>;
    if (!ctx.requestId) {
      // Apollo's own calls (none with a static supergraph) go out anonymous.
      return signEnvelope(this.signingSecret, { principal: null, requestId: 'gateway', clientIp: '', iat: Math.floor(Date.now() / 1000) });
    }
    ctx.envelopeHeader ??= signEnvelope(this.signingSecret, {
      principal: ctx.principal ?? null,
      requestId: ctx.requestId,
      clientIp: ctx.clientIp ?? '',
      workspaceHeader: ctx.workspaceHeader,
      iat: Math.floor(Date.now() / 1000),
    });
    return ctx.envelopeHeader;
  }
}

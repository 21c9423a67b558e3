import { ApolloGateway } from '@apollo/gateway';
import { Supergraph } from '@apollo/federation-internals';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginUsageReporting } from '@apollo/server/plugin/usageReporting';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginUsageReportingDisabled } from '@apollo/server/plugin/disabled';
import { ApolloServerPluginLandingPageLocalDefault, ApolloServerPluginLandingPageProductionDefault } from '@apollo/server/plugin/landingPage/default';
import { parse, print, type DocumentNode, type GraphQLSchema, type ExecutionResult, type GraphQLFormattedError } from 'graphql';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SubgraphName } from '../core/config';
import { serveApolloRequest } from '../core/apollo-http';
import { DomainError } from '../core/errors';
import { maskError } from '../core/errors/mask';
import { answerClientError, readBody, sendError, sendJson } from '../core/http';
import { newId } from '../core/ids';
import { closeOnce, closeServer } from '../core/lifecycle';
import type { PlatformRuntime, RawHttpRoutes } from '../core/subgraph';
import { createRestHandler, type RawRouteHandler, type RestExecutor } from '../rest-compat';
import { Authenticator } from './auth';
import { createIdpLogin } from './idp-login';
import { createAiOAuthHandler } from './ai-oauth';
import { createAiVendorForwarder, createAnalyticsForwarder, createWebhookForwarder } from './ai-vendor-forward';
import { createGatewayPortProxy } from './port-proxy';
import { createSandboxFileContent } from './sandbox-files';
import { InternalClient } from '../core/internal-client';
import { SUPERGRAPH_PATH } from './compose';
import { buildContext, newRequestId, requestIdOf, type GatewayContext } from './context';
import { SignedDataSource } from './data-source';
import { costLimitRule, depthLimitRule } from './limits';
import { createGatewayRateLimits, limitRawRoute } from './rate-limit';
import { createSubscriptionServer } from './subscriptions';

export interface GatewayOptions {
  /** Where each subgraph's HTTP GraphQL endpoint is (ws:// is derived from it). */
  subgraphUrls: Record<SubgraphName, string>;
  /** Port of the edge; defaults to config.port. */
  port?: number;
  /** Supergraph SDL; defaults to the committed gateway/supergraph.graphql. */
  supergraphSdl?: string;
  /** Serve the REST layer under /v1 (its route table must fit the schema). @defaultValue true */
  rest?: boolean;
  /** Raw routes of subgraphs running in this process, called directly instead of over loopback HTTP. */
  inProcess?: Partial<Record<SubgraphName, RawHttpRoutes>>;
}

export interface RunningGateway {
  /** http://host:port of the edge (REST under /v1, GraphQL under /graphql). */
  url: string;
  /** Upstream graphql-ws sockets open now (a test checks that none leak). */
  upstreamSockets(): number;
  stop(): Promise<void>;
}

/**
 * The edge of the platform: @apollo/gateway over the committed supergraph at /graphql (HTTP and
 * graphql-ws), the REST layer at /v1, and /healthz, /readyz. Authentication happens here, once
 * per request, for both; subgraphs receive the principal in a signed envelope.
 */
export async function startGateway(runtime: PlatformRuntime, options: GatewayOptions): Promise<RunningGateway> {
  const { config } = runtime;
  const logger = runtime.logger.child({ service: 'gateway' });
  const supergraphSdl = options.supergraphSdl ?? readFileSync(SUPERGRAPH_PATH, 'utf8');
  const authenticator = new Authenticator({
    jwtSecret: config.jwtSecret,
    internalSigningSecret: config.internalSigningSecret,
    identityUrl: options.subgraphUrls.identity.replace(/\/graphql$/, ''),
    pubsub: runtime.pubsub,
    logger,
  });
  // Undefined when RATE_LIMITS_DISABLED=true.
  const rateLimits = createGatewayRateLimits(runtime, options.subgraphUrls.billing.replace(/\/graphql$/, ''), logger);

  const dataSources: SignedDataSource[] = [];
  const gateway = new ApolloGateway({
    supergraphSdl,
    buildService: ({ name }) => {
      const dataSource = new SignedDataSource(options.subgraphUrls[name as SubgraphName], config.internalSigningSecret);
      dataSources.push(dataSource);
      return dataSource;
    },
    logger: { debug: () => undefined, info: () => undefined, warn: (m) => logger.warn(String(m)), error: (m) => logger.error(String(m)) },
  });
  const validationRules = [depthLimitRule(config.graphqlMaxDepth), costLimitRule(config.graphqlMaxCost)];
  const development = config.env === 'development';
  const apollo = new ApolloServer<GatewayContext>({
    gateway,
    csrfPrevention: true,
    // The launcher owns SIGINT/SIGTERM and stops services in order; Apollo must not race it.
    stopOnTerminationSignals: false,
    introspection: config.env !== 'production',
    includeStacktraceInErrorResponses: false,
    validationRules,
    // Explicit, so Apollo does not also read APOLLO_KEY from the environment behind config's back.
    apollo: config.apolloKey ? { key: config.apolloKey, graphRef: config.apolloGraphRef } : {},
    formatError: (formatted, error) => maskError(formatted, error, { exposeInternals: false, onInternal: (err) => logger.error('unexpected gateway error', { err }) }),
    plugins: [
      // No HTTP caching of GraphQL responses: the per-field cache-policy bookkeeping is pure cost.
      ApolloServerPluginCacheControlDisabled(),
      // Request rate limits per workspace and route class (headers, 429 RATE_LIMITED).
      ...(rateLimits ? [rateLimits.plugin] : []),
      // Usage reporting to Apollo Studio, only when a key is configured (federated traces included).
      ...(config.apolloKey
        ? [ApolloServerPluginUsageReporting({ endpointUrl: config.apolloUsageReportingUrl, sendReportsImmediately: config.env === 'test' })]
        : [ApolloServerPluginUsageReportingDisabled()]),
      development ? ApolloServerPluginLandingPageLocalDefault({ embed: true, includeCookies: false }) : ApolloServerPluginLandingPageProductionDefault({ footer: false }),
    ],
  });
  await apollo.start();
  const schema = apiSchemaOf(supergraphSdl);

  /** Operations over the socket and from the REST layer run through the same Apollo pipeline. */
  const printed = new WeakMap<DocumentNode, string>();
  const runOperationWithHeaders = async (
    document: DocumentNode | string,
    variables: Record<string, unknown> | undefined,
    operationName: string | undefined,
    contextValue: GatewayContext,
  ): Promise<{ result: { data?: Record<string, unknown> | null; errors?: ReadonlyArray<GraphQLFormattedError> }; headers?: Record<string, string> }> => {
    let query: string;
    if (typeof document === 'string') query = document;
    else {
      query = printed.get(document) ?? print(document);
      printed.set(document, query);
    }
    const response = await apollo.executeOperation({ query, variables, operationName }, { contextValue });
    if (response.body.kind !== 'single') throw new Error('Incremental delivery is not supported here');
    // Headers plugins set (rate limits), for the REST layer to send.
    const headers = response.http.headers.size ? Object.fromEntries(response.http.headers) : undefined;
    return { result: response.body.singleResult, headers };
  };
  const runOperation = async (...args: Parameters<typeof runOperationWithHeaders>) => (await runOperationWithHeaders(...args)).result;

  const executeRest: RestExecutor = async ({ document, variables, operationName, req, requestId }) => {
    let ctx: GatewayContext;
    try {
      ctx = await buildContext(authenticator, req, requestId);
    } catch (err) {
      return { errors: [errorOf(err)] };
    }
    const { result, headers } = await runOperationWithHeaders(document, variables, operationName, ctx);
    return { ...result, headers };
  };
  // Browser sign-in through identity providers (raw routes; identity does the work over its internal API).
  let listeningUrl = '';
  const idpLogin = createIdpLogin({
    config,
    identity: new InternalClient({
      baseUrl: options.subgraphUrls.identity.replace(/\/graphql$/, ''),
      internalSigningSecret: config.internalSigningSecret,
      logger,
      // A callback makes several provider calls (token, userinfo, keys), each bounded to 5 s.
      timeoutMs: 30_000,
    }),
    edgeUrl: () => config.publicUrl ?? listeningUrl,
  });
  const limitRaw = (handler: RawRouteHandler): RawRouteHandler => (rateLimits ? limitRawRoute(rateLimits.limiter, handler) : handler);
  // Vendor-compatible AI routes, forwarded byte for byte to the ai subgraph (which knows gateway keys).
  const aiVendor = createAiVendorForwarder({ aiUrl: options.subgraphUrls.ai.replace(/\/graphql$/, ''), signingSecret: config.internalSigningSecret, logger, inProcess: options.inProcess?.ai });
  // Workflow webhooks: public, forwarded byte for byte to the workflows subgraph (it checks each trigger's own auth).
  const webhooks = createWebhookForwarder({ workflowsUrl: options.subgraphUrls.workflows.replace(/\/graphql$/, ''), signingSecret: config.internalSigningSecret, logger, inProcess: options.inProcess?.workflows });
  // Analytics ingestion and its script: public, forwarded byte for byte (the subgraph checks the installation key and origin).
  const analytics = createAnalyticsForwarder({ analyticsUrl: options.subgraphUrls.analytics.replace(/\/graphql$/, ''), signingSecret: config.internalSigningSecret, logger, inProcess: options.inProcess?.analytics });

  const rest =
    options.rest === false
      ? undefined
      : createRestHandler({
          config,
          logger,
          schema,
          execute: executeRest,
          rawHandlers: {
            idpLogin: limitRaw(idpLogin.rawHandlers.idpLogin),
            // A GraphQL operation: counted by the pipeline's rate limits, not limitRaw.
            sandboxFileContent: createSandboxFileContent({ execute: executeRest, logger }),
            // Matched before the REST layer (below); named here so the route table lists them as served.
            aiVendor: async (req, res, ctx) => aiVendor.handle(req, res, ctx.requestId),
            workflowWebhook: async (req, res, ctx) => webhooks.handle(req, res, ctx.requestId),
            analyticsIngest: async (req, res, ctx) => analytics.handle(req, res, ctx.requestId),
            // GraphQL mutations underneath: counted by the pipeline's rate limits.
            aiOAuth: createAiOAuthHandler({ execute: executeRest, maxBodyBytes: config.maxBodyBytes }),
          },
          extraRawRoutes: idpLogin.extraRawRoutes.map((route) => ({ ...route, handler: limitRaw(route.handler) })),
        });

  // Sandbox ports (HTTP and WebSocket), proxied to compute; matched before the REST layer.
  const portProxy = createGatewayPortProxy({
    computeUrl: options.subgraphUrls.compute.replace(/\/graphql$/, ''),
    signingSecret: config.internalSigningSecret,
    authenticate: (req, requestId) => buildContext(authenticator, req, requestId),
    limit: limitRaw,
    logger,
  });

  const subgraphWsUrls = Object.fromEntries(Object.entries(options.subgraphUrls).map(([name, url]) => [name, url.replace(/^http/, 'ws')]));
  const subscriptions = createSubscriptionServer({
    apiSchema: schema,
    supergraph: parse(supergraphSdl),
    subgraphWsUrls,
    authenticator,
    signingSecret: config.internalSigningSecret,
    validationRules,
    admitSubscription: rateLimits?.admitSubscription,
    maxPayload: config.maxBodyBytes,
    logger,
    execute: (document, variables, operationName, ctx) =>
      // A fresh copy per operation: the envelope is signed per operation, never reused stale.
      runOperation(document, variables, operationName, { ...ctx, envelopeHeader: undefined }) as Promise<ExecutionResult>,
  });

  const handleGraphQL = async (req: IncomingMessage, res: ServerResponse, requestId: string, search: string) => {
    let body: unknown;
    if (req.method === 'POST') {
      const raw = await readBody(req, config.maxBodyBytes);
      try {
        body = raw.length ? JSON.parse(raw.toString('utf8')) : undefined;
      } catch {
        return sendGraphQLError(res, 400, 'BAD_REQUEST', 'Body is not valid JSON');
      }
    }
    let ctx: GatewayContext;
    try {
      ctx = await buildContext(authenticator, req, requestId);
    } catch (err) {
      const e = errorOf(err);
      const code = String(e.extensions?.code);
      return sendGraphQLError(res, code === 'UNAUTHENTICATED' ? 401 : 503, code, e.message);
    }
    await serveApolloRequest(apollo, req, res, { body, search, context: ctx });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const requestId = requestIdOf(req);
    res.setHeader('x-request-id', requestId);
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q === -1 ? url : url.slice(0, q);
    try {
      if (pathname === '/graphql') return await handleGraphQL(req, res, requestId, q === -1 ? '' : url.slice(q + 1));
      if (aiVendor.matches(pathname)) {
        const ownId = newRequestId();
        res.setHeader('x-request-id', ownId);
        return aiVendor.handle(req, res, ownId);
      }
      if (webhooks.matches(pathname)) return webhooks.handle(req, res, requestId);
      if (analytics.matches(pathname)) return analytics.handle(req, res, requestId);
      if (portProxy.matches(pathname)) return await portProxy.handle(req, res, requestId);
      if (rest && (pathname === '/v1' || pathname.startsWith('/v1/'))) return await rest.handle(req, res, requestId);
      if (pathname === '/healthz') return sendJson(res, 200, { status: 'ok', service: 'gateway' });
      if (pathname === '/readyz') return sendJson(res, ...(await readiness()));
      return sendError(res, 'ROUTE_NOT_FOUND', `No route ${req.method} ${pathname}; the REST API is under /v1 and GraphQL at /graphql`, requestId);
    } catch (err) {
      if (res.headersSent) return void res.destroy();
      if (err instanceof DomainError) return sendError(res, err.code, err.message, requestId, err.details);
      logger.error('request failed', { err, requestId });
      sendError(res, 'INTERNAL', 'Internal server error', requestId);
    }
  };

  const readiness = async (): Promise<[number, unknown]> => {
    const checks = await Promise.all(
      Object.entries(options.subgraphUrls).map(async ([name, url]) => {
        try {
          const response = await fetch(url.replace(/\/graphql$/, '/healthz'), { signal: AbortSignal.timeout(2000) });
          return [name, response.ok ? 'ok' : `status ${response.status}`] as const;
        } catch {
          return [name, 'unreachable'] as const;
        }
      }),
    );
    const ready = checks.every(([, state]) => state === 'ok');
    return [ready ? 200 : 503, { status: ready ? 'ready' : 'unavailable', service: 'gateway', subgraphs: Object.fromEntries(checks) }];
  };

  const server = createServer((req, res) => void handle(req, res));
  server.keepAliveTimeout = 65_000;
  server.on('clientError', (err, socket) => answerClientError(err, socket, () => newId('req')));
  server.on('upgrade', (req, socket, head) => {
    const pathname = (req.url ?? '/').split('?')[0];
    if (portProxy.matches(pathname)) return portProxy.upgrade(req, socket, head);
    if (pathname !== '/graphql') return socket.destroy();
    subscriptions.wss.handleUpgrade(req, socket, head, (ws) => subscriptions.wss.emit('connection', ws, req));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? config.port, config.bindHost, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = config.bindHost === '0.0.0.0' ? '127.0.0.1' : config.bindHost;
  const url = `http://${host}:${address.port}`;
  listeningUrl = url;
  logger.info('gateway listening', { rest: `${url}/v1`, graphql: `${url}/graphql` });

  return {
    url,
    upstreamSockets: () => subscriptions.upstreamSockets(),
    stop: closeOnce(
      [
        () => subscriptions.close(),
        () => portProxy.close(),
        () => aiVendor.close(),
        () => webhooks.close(),
        () => analytics.close(),
        () => closeServer(server),
        () => apollo.stop(),
        () => authenticator.close(),
        () => rateLimits?.close(),
        () => Promise.all(dataSources.map((d) => d.close())),
      ],
      logger,
      'the gateway',
    ),
  };
}

function errorOf(err: unknown): GraphQLFormattedError {
  if (err instanceof DomainError) return { message: err.message, extensions: { code: err.code, ...(err.details ? { details: err.details } : {}) } };
  return { message: 'Internal server error', extensions: { code: 'INTERNAL' } };
}

function sendGraphQLError(res: ServerResponse, status: number, code: string, message: string): void {
  sendJson(res, status, { errors: [{ message, extensions: { code } }] }, status === 401 ? { 'www-authenticate': 'Bearer' } : {});
}

/** The schema clients see: the supergraph without federation's join machinery. */
export function apiSchemaOf(supergraphSdl: string): GraphQLSchema {
  return Supergraph.build(supergraphSdl).apiSchema().toGraphQLJSSchema();
}

import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginInlineTrace } from '@apollo/server/plugin/inlineTrace';
import { ApolloServerPluginCacheControlDisabled } from '@apollo/server/plugin/disabled';
import type { GraphQLSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { DataSource } from 'typeorm';
import { requestContextOf, type SubgraphContext } from '../context';
import { serveApolloRequest } from '../apollo-http';
import { openSubgraphDatabase } from '../database';
import { closeOnce, closeServer } from '../lifecycle';
import { DomainError } from '../errors';
import { maskError } from '../errors/mask';
import { newId } from '../ids';
import { answerClientError, callerGoneSignal, errorBody, readBody, sendError, sendJson } from '../http';
import { ENVELOPE_HEADER, verifyEnvelope, type Envelope } from '../principal';
import { createRedis } from '../redis';
import { buildFederatedSchema } from './build-schema';
import type { PlatformRuntime, RawHttpRoutes, SubgraphDefinition, SubgraphDeps } from './define';

export interface RunningSubgraph {
  name: string;
  /** HTTP GraphQL endpoint; the graphql-ws endpoint is the same path over ws://. */
  url: string;
  wsUrl: string;
  schema: GraphQLSchema;
  dataSource: DataSource;
  /** Open graphql-ws connections (tests check that none leak). */
  openSockets(): number;
  /** The raw HTTP routes, for an edge in this same process to call without the loopback hop. */
  rawHttp?: RawHttpRoutes;
  stop(): Promise<void>;
}

/** The subgraph's schema alone, for composition: no database, no server. */
export function buildSubgraphSchemaOnly(definition: SubgraphDefinition<any, any>, pubSub?: PlatformRuntime['pubsub']): Promise<GraphQLSchema> {
  return buildFederatedSchema(
    {
      resolvers: definition.resolvers,
      orphanedTypes: definition.orphanedTypes,
      // Composition never executes anything; subscriptions only need a PubSub to exist.
      pubSub: pubSub?.graphql ?? { publish: () => undefined, subscribe: () => (async function* () {})() },
      validate: false,
    },
    definition.referenceResolvers as never,
  );
}

/**
 * Starts a subgraph: migrates its schema, builds its services and GraphQL schema, and serves
 * HTTP GraphQL, graphql-ws, /healthz, /readyz and its internal API on `port`. Every GraphQL
 * and internal request must carry an envelope signed by the gateway, else 401.
 */
export async function startSubgraph<S, L extends Record<string, unknown>>(
  definition: SubgraphDefinition<S, L>,
  runtime: PlatformRuntime,
  port = runtime.config.subgraphPorts[definition.name],
): Promise<RunningSubgraph> {
  const { config } = runtime;
  const logger = runtime.logger.child({ service: definition.name });
  const dataSource = await openSubgraphDatabase({
    url: runtime.databaseUrl,
    schema: definition.name,
    entities: definition.entities,
    migrations: definition.migrations,
    onQuery: runtime.onQuery ? (sql) => runtime.onQuery!(definition.name, sql) : undefined,
  });
  const redis = createRedis(runtime.redisUrl);
  const deps: SubgraphDeps = { runtime, config, dataSource, redis, pubsub: runtime.pubsub, logger };
  const services = definition.createServices(deps);
  const instances = new Map<unknown, object>(definition.createResolvers(services).map((instance) => [instance.constructor, instance]));

  const schema = await buildFederatedSchema(
    {
      resolvers: definition.resolvers,
      orphanedTypes: definition.orphanedTypes,
      pubSub: runtime.pubsub.graphql,
      validate: false,
      container: {
        get: (someClass: unknown) => {
          const instance = instances.get(someClass);
          if (!instance) throw new Error(`No instance registered for resolver ${(someClass as { name?: string }).name}`);
          return instance;
        },
      },
    },
    definition.referenceResolvers as never,
  );
  await definition.onStart?.(services, deps);

  const exposeInternals = config.env === 'development';
  const maskOptions = { exposeInternals, onInternal: (err: unknown) => logger.error('unexpected error', { err }) };
  const apollo = new ApolloServer<SubgraphContext<L>>({
    schema,
    csrfPrevention: false, // only the gateway calls subgraphs, with a signed envelope
    // The launcher owns SIGINT/SIGTERM and stops services in order; Apollo must not race it.
    stopOnTerminationSignals: false,
    introspection: true,
    includeStacktraceInErrorResponses: false,
    // Federated traces for Apollo Studio, sent only when the gateway asks (usage reporting on).
    plugins: [ApolloServerPluginInlineTrace({ includeErrors: { masked: true } }), ApolloServerPluginCacheControlDisabled()],
    formatError: (formatted, error) => maskError(formatted, error, maskOptions),
  });
  await apollo.start();

  const contextOf = (envelope: Envelope): SubgraphContext<L> => ({
    ...requestContextOf(envelope),
    loaders: definition.createLoaders ? definition.createLoaders(services) : ({} as L),
  });

  const internalRoutes = definition.internalRoutes?.(services) ?? {};
  const rawHttp = definition.rawHttp?.(services);
  if (rawHttp && !/^\/[^/]+(\/[^/]+)*\/$/.test(rawHttp.prefix)) throw new Error(`rawHttp prefix of ${definition.name} must look like /name/, not ${rawHttp.prefix}`);
  if (rawHttp && ['/graphql/', '/internal/', '/healthz/', '/readyz/'].some((taken) => rawHttp.prefix.startsWith(taken))) {
    throw new Error(`rawHttp prefix of ${definition.name} (${rawHttp.prefix}) overlaps a route of the subgraph server`);
  }
  const envelopeOf = (req: IncomingMessage) => verifyEnvelope(config.internalSigningSecret, req.headers[ENVELOPE_HEADER] as string | undefined);

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '/';
    const qIndex = url.indexOf('?');
    const pathname = qIndex === -1 ? url : url.slice(0, qIndex);
    if (pathname === '/healthz') return sendJson(res, 200, { status: 'ok', service: definition.name });
    if (pathname === '/readyz') {
      try {
        await dataSource.query('SELECT 1');
        return sendJson(res, 200, { status: 'ready', service: definition.name });
      } catch {
        return sendJson(res, 503, { status: 'unavailable', service: definition.name });
      }
    }
    const envelope = envelopeOf(req);
    const requestId = envelope?.requestId ?? 'none';
    // Raw routes judge the (possibly missing) envelope themselves.
    if (rawHttp && pathname.startsWith(rawHttp.prefix)) return rawHttp.handle(req, res, envelope);
    if (pathname === '/graphql') {
      if (!envelope) {
        return sendJson(res, 401, { errors: [{ message: 'Missing or invalid gateway signature', extensions: { code: 'UNAUTHENTICATED' } }] });
      }
      const raw = req.method === 'POST' ? await readBody(req, config.maxBodyBytes) : undefined;
      let body: unknown;
      if (raw) {
        try {
          body = JSON.parse(raw.toString('utf8'));
        } catch {
          return sendJson(res, 400, { errors: [{ message: 'Body is not valid JSON', extensions: { code: 'BAD_REQUEST' } }] });
        }
      }
      await serveApolloRequest(apollo, req, res, { body, search: qIndex === -1 ? '' : url.slice(qIndex + 1), context: contextOf(envelope) });
      return;
    }
    if (pathname.startsWith('/internal/') && req.method === 'POST') {
      const route = internalRoutes[pathname.slice('/internal/'.length)];
      if (!route) return sendError(res, 'ROUTE_NOT_FOUND', `No internal route ${pathname}`, requestId);
      if (!envelope) return sendError(res, 'UNAUTHENTICATED', 'Missing or invalid gateway signature', requestId);
      const raw = await readBody(req, config.maxBodyBytes);
      let body: unknown = {};
      if (raw.length) {
        try {
          body = JSON.parse(raw.toString('utf8'));
        } catch {
          return sendError(res, 'BAD_REQUEST', 'Body is not valid JSON', requestId);
        }
      }
      return sendJson(res, 200, { data: await route({ body, envelope, req, signal: callerGoneSignal(res) }) });
    }
    return sendError(res, 'ROUTE_NOT_FOUND', `No route ${req.method} ${pathname}`, requestId);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) return res.destroy();
      if (err instanceof DomainError) return sendJson(res, err.status, errorBody(err.code, err.message, 'none', err.details));
      logger.error('subgraph request failed', { err });
      sendJson(res, 500, errorBody('INTERNAL', 'Internal server error', 'none'));
    });
  });
  server.keepAliveTimeout = 65_000;
  server.on('clientError', (err, socket) => answerClientError(err, socket, () => newId('req')));

  // Upgrades are routed by path: graphql-ws on /graphql, the raw routes' prefix to them, nothing else.
  const wss = new WebSocketServer({ noServer: true, maxPayload: config.maxBodyBytes });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = req.url ?? '/';
    const qIndex = url.indexOf('?');
    const pathname = qIndex === -1 ? url : url.slice(0, qIndex);
    if (pathname === '/graphql') return wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
    if (rawHttp?.upgrade && pathname.startsWith(rawHttp.prefix)) {
      try {
        return rawHttp.upgrade(req, socket, head, envelopeOf(req));
      } catch (err) {
        logger.error('raw upgrade failed', { err });
      }
    }
    socket.destroy();
  });
  const wsCleanup = useServer<{ envelope?: string }, { envelope?: Envelope }>(
    {
      schema,
      onConnect: (ctx) => {
        const envelope = verifyEnvelope(config.internalSigningSecret, ctx.connectionParams?.envelope);
        if (!envelope) return false;
        ctx.extra.envelope = envelope;
        return true;
      },
      context: (ctx) => contextOf(ctx.extra.envelope!),
      // Subscription errors are masked like HTTP ones: domain errors keep their code.
      onNext: (_ctx, _id, _payload, _args, result) =>
        result.errors ? ({ ...result, errors: result.errors.map((e) => maskError(e.toJSON(), e, maskOptions)) } as never) : undefined,
      onError: (_ctx, _id, _payload, errors) => errors.map((e) => maskError(e.toJSON(), e, maskOptions)) as never,
    },
    wss,
  );

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, config.bindHost, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = config.bindHost === '0.0.0.0' ? '127.0.0.1' : config.bindHost;
  const url = `http://${host}:${address.port}/graphql`;
  logger.info('subgraph listening', { url });

  return {
    name: definition.name,
    url,
    wsUrl: url.replace(/^http/, 'ws'),
    schema,
    dataSource,
    openSockets: () => wss.clients.size,
    rawHttp,
    stop: closeOnce(
      [
        () => wsCleanup.dispose(),
        async () => {
          for (const client of wss.clients) client.terminate();
          await new Promise((resolve) => wss.close(() => resolve(undefined)));
        },
        () => rawHttp?.close?.(),
        () => closeServer(server),
        () => apollo.stop(),
        () => definition.onStop?.(services),
        () => redis.quit(),
        () => dataSource.destroy(),
      ],
      logger,
      `subgraph ${definition.name}`,
    ),
  };
}

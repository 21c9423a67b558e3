import {
  GraphQLError,
  Kind,
  parse,
  print,
  validate,
  specifiedRules,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type ValidationRule,
} from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import type { IncomingMessage } from 'node:http';
import { WebSocket, WebSocketServer } from 'ws';
import type { Logger } from '../core/logger';
import { signEnvelope } from '../core/principal';
import type { Authenticator } from './auth';
import { buildContext, requestIdOf, type GatewayContext } from './context';

/**
 * Reads which subgraph owns each Subscription root field from the supergraph's join
 * directives: `@join__field(graph: X)` on the field, else the type's only `@join__type`.
 */
export function subscriptionOwners(supergraph: DocumentNode): Map<string, string> {
  const graphNames = new Map<string, string>();
  const owners = new Map<string, string>();
  for (const def of supergraph.definitions) {
    if (def.kind === Kind.ENUM_TYPE_DEFINITION && def.name.value === 'join__Graph') {
      for (const value of def.values ?? []) {
        const directive = value.directives?.find((d) => d.name.value === 'join__graph');
        const name = directive?.arguments?.find((a) => a.name.value === 'name')?.value;
        if (name?.kind === Kind.STRING) graphNames.set(value.name.value, name.value);
      }
    }
  }
  const graphOf = (directives: readonly { name: { value: string }; arguments?: readonly { name: { value: string }; value: { kind: string; value?: string } }[] }[] | undefined, directiveName: string) =>
    (directives ?? [])
      .filter((d) => d.name.value === directiveName)
      .map((d) => d.arguments?.find((a) => a.name.value === 'graph')?.value.value)
      .filter((g): g is string => typeof g === 'string');
  for (const def of supergraph.definitions) {
    if ((def.kind === Kind.OBJECT_TYPE_DEFINITION || def.kind === Kind.OBJECT_TYPE_EXTENSION) && def.name.value === 'Subscription') {
      const typeGraphs = graphOf(def.directives as never, 'join__type');
      for (const field of def.fields ?? []) {
        const fieldGraphs = graphOf(field.directives as never, 'join__field');
        const graph = fieldGraphs[0] ?? (typeGraphs.length === 1 ? typeGraphs[0] : undefined);
        if (graph && graphNames.has(graph)) owners.set(field.name.value, graphNames.get(graph)!);
      }
    }
  }
  return owners;
}

export interface SubscriptionServerOptions {
  apiSchema: GraphQLSchema;
  supergraph: DocumentNode;
  /** ws:// URL of each subgraph's graphql-ws endpoint. */
  subgraphWsUrls: Record<string, string>;
  authenticator: Authenticator;
  signingSecret: string;
  validationRules: ValidationRule[];
  /** Counts a subscription at subscribe time (rate limits); an error it resolves to refuses it. */
  admitSubscription?(ctx: GatewayContext, operation: OperationDefinitionNode, variables: Record<string, unknown> | undefined): Promise<GraphQLError | undefined>;
  /** Runs queries and mutations sent over the socket through the gateway. */
  execute(document: DocumentNode, variables: Record<string, unknown> | undefined, operationName: string | undefined, ctx: GatewayContext): Promise<ExecutionResult>;
  maxPayload: number;
  logger: Logger;
}

interface ConnectionExtra extends Record<PropertyKey, unknown> {
  request: IncomingMessage;
  gatewayContext?: GatewayContext;
  upstreams?: Map<string, Client>;
}

/**
 * graphql-ws on the gateway. @apollo/gateway cannot execute subscriptions, so each
 * subscription is forwarded over graphql-ws to the subgraph owning its root field, with the
 * caller's principal signed into the upstream connection, and every event is relayed. One
 * upstream socket per (client connection, subgraph), opened lazily and closed when the
 * client's last subscription there ends or the client goes away.
 */
export function createSubscriptionServer(options: SubscriptionServerOptions) {
  const owners = subscriptionOwners(options.supergraph);
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxPayload });
  let upstreamSockets = 0;
  const extraByContext = new WeakMap<GatewayContext, ConnectionExtra>();

  const upstreamFor = (extra: ConnectionExtra, subgraph: string): Client => {
    extra.upstreams ??= new Map();
    let client = extra.upstreams.get(subgraph);
    if (!client) {
      const ctx = extra.gatewayContext!;
      client = createClient({
        url: options.subgraphWsUrls[subgraph],
        webSocketImpl: WebSocket,
        lazy: true,
        retryAttempts: 0,
        // Signed at (re)connect time, so a long-lived socket's envelope is always fresh.
        connectionParams: () => ({
          envelope: signEnvelope(options.signingSecret, {
            principal: ctx.principal,
            requestId: ctx.requestId,
            clientIp: ctx.clientIp,
            workspaceHeader: ctx.workspaceHeader,
            iat: Math.floor(Date.now() / 1000),
          }),
        }),
        on: {
          opened: () => void upstreamSockets++,
          closed: () => void (upstreamSockets = Math.max(0, upstreamSockets - 1)),
        },
      });
      extra.upstreams.set(subgraph, client);
    }
    return client;
  };

  const cleanup = useServer<Record<string, unknown> | undefined, ConnectionExtra>(
    {
      schema: options.apiSchema,
      onConnect: async (ctx) => {
        const params = ctx.connectionParams ?? {};
        // Credentials may come in connection params (browsers cannot set socket headers) or headers.
        const headers: Record<string, unknown> = { ...ctx.extra.request.headers };
        for (const [key, value] of Object.entries(params)) {
          const lower = key.toLowerCase();
          if (['authorization', 'x-api-key', 'x-workspace-id'].includes(lower) && typeof value === 'string') headers[lower] = value;
        }
        try {
          const fakeReq = { headers, socket: ctx.extra.request.socket } as unknown as IncomingMessage;
          ctx.extra.gatewayContext = await buildContext(options.authenticator, fakeReq, requestIdOf(ctx.extra.request));
          return true;
        } catch (err) {
          options.logger.debug('websocket authentication failed', { message: (err as Error).message });
          return false;
        }
      },
      onSubscribe: (ctx, _id, payload) => {
        let document: DocumentNode;
        try {
          document = parse(payload.query);
        } catch (err) {
          return [withCode(err as GraphQLError, 'BAD_REQUEST')];
        }
        const errors = validate(options.apiSchema, document, [...specifiedRules, ...options.validationRules]);
        if (errors.length) return errors.map((e) => withCode(e, 'VALIDATION_FAILED'));
        const args: ExecutionArgs = {
          schema: options.apiSchema,
          document,
          variableValues: payload.variables ?? undefined,
          operationName: payload.operationName ?? undefined,
          contextValue: ctx.extra.gatewayContext,
        };
        extraByContext.set(ctx.extra.gatewayContext!, ctx.extra);
        return args;
      },
      execute: (args) =>
        options.execute(args.document, args.variableValues as Record<string, unknown> | undefined, args.operationName ?? undefined, args.contextValue as GatewayContext),
      subscribe: async (args) => {
        const operation = operationOf(args.document, args.operationName ?? undefined);
        const refused = await options.admitSubscription?.(args.contextValue as GatewayContext, operation, args.variableValues as Record<string, unknown> | undefined);
        if (refused) return { errors: [refused] };
        const fields = operation.selectionSet.selections.filter((s) => s.kind === Kind.FIELD).map((s) => (s as { name: { value: string } }).name.value);
        const subgraphs = new Set(fields.filter((f) => f !== '__typename').map((f) => owners.get(f)));
        if (subgraphs.size !== 1 || subgraphs.has(undefined)) {
          return { errors: [new GraphQLError('A subscription must select root fields of exactly one subgraph', { extensions: { code: 'BAD_REQUEST' } })] };
        }
        const [subgraph] = [...subgraphs] as string[];
        // ExecutionArgs carry only the context value; the connection's state is found through it.
        const extra = extraByContext.get(args.contextValue as GatewayContext)!;
        const upstream = upstreamFor(extra, subgraph).iterate({
          query: print(args.document),
          variables: args.variableValues as Record<string, unknown> | undefined,
          operationName: args.operationName ?? undefined,
        });
        return relay(upstream as AsyncIterableIterator<ExecutionResult>);
      },
      // Results relayed from upstream and from the Apollo pipeline are already formatted (plain
      // JSON with masked codes), so they are sent as they are.
      onNext: (_ctx, _id, _payload, _args, result) => result as never,
      onClose: (ctx) => {
        for (const client of ctx.extra.upstreams?.values() ?? []) void client.dispose();
        ctx.extra.upstreams?.clear();
      },
    },
    wss,
  );

  return {
    wss,
    /** Upstream sockets open right now (tests check that none leak). */
    upstreamSockets: () => upstreamSockets,
    async close(): Promise<void> {
      await cleanup.dispose();
      for (const client of wss.clients) client.terminate();
      await new Promise((resolve) => wss.close(() => resolve(undefined)));
    },
  };
}

/**
 * Relays an upstream subscription. Errors the upstream ends with (GraphQL errors, or its socket
 * closing) become one final result carrying them, so the client sees codes, not a broken pipe.
 * `return()` reaches the upstream at once (an async generator would wait for the pending next).
 */
function relay(upstream: AsyncIterableIterator<ExecutionResult>): AsyncGenerator<ExecutionResult> {
  let finished = false;
  const iterator = {
    async next(): Promise<IteratorResult<ExecutionResult>> {
      if (finished) return { done: true, value: undefined };
      try {
        return await upstream.next();
      } catch (err) {
        finished = true;
        const errors = Array.isArray(err)
          ? (err as GraphQLError[])
          : [{ message: 'The subscription ended upstream', extensions: { code: 'UNAVAILABLE' } }];
        return { done: false, value: { errors: errors as unknown as GraphQLError[] } };
      }
    },
    async return(): Promise<IteratorResult<ExecutionResult>> {
      finished = true;
      await upstream.return?.();
      return { done: true, value: undefined };
    },
    async throw(err: unknown): Promise<IteratorResult<ExecutionResult>> {
      finished = true;
      await upstream.return?.();
      throw err;
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator as unknown as AsyncGenerator<ExecutionResult>;
}

function operationOf(document: DocumentNode, operationName?: string): OperationDefinitionNode {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  return (operationName ? operations.find((o) => o.name?.value === operationName) : operations[0]) ?? operations[0];
}

function withCode(error: GraphQLError, code: string): GraphQLError {
  const own = error.extensions?.code;
  const details = error.extensions?.details;
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    extensions: { code: typeof own === 'string' && own !== 'GRAPHQL_VALIDATION_FAILED' ? own : code, ...(details ? { details } : {}) },
  });
}

import type { IncomingMessage } from 'node:http';
import { buildOperationNodeForField, MapperKind, mapSchema, pruneSchema } from '@graphql-tools/utils';
import { GraphQLSchema, Kind, OperationTypeNode, validate, type DocumentNode, type ExecutionArgs, type ExecutionResult, type GraphQLFormattedError } from 'graphql';
import { createSofa, createSofaRouter } from 'sofa-api';
import { RouteTableError, type ServedRoute } from './served-routes';
import type { RestExecutor } from './types';

/** What one request carries through sofa into the executor and back. */
export interface SofaRequestState {
  req: IncomingMessage;
  requestId: string;
  /** Extra response headers the executor returned (rate limits…). */
  headers?: Record<string, string>;
}

/** The parts of a fetch Request that sofa's route handler reads. */
export interface SofaRequest {
  /** Absolute URL; sofa reads the query string from it. */
  url: string;
  /** Decoded path parameters. */
  params: Record<string, string>;
  /** The raw JSON body, when the route reads one. */
  body?: string;
}

/** What sofa's handler answers: a fetch Response, or the errors it handed to `errorHandler`. */
export type SofaOutcome = { ok: true; status: number; json: string } | { ok: false; errors: ReadonlyArray<unknown> };

export interface SofaRoutes {
  /** Runs sofa's handler of a served route (by sofa key, `Query.secrets`). */
  run(sofaKey: string, request: SofaRequest, state: SofaRequestState): Promise<SofaOutcome>;
  /** The schema sofa builds operations from (the API schema cut down to the served fields). */
  schema: GraphQLSchema;
  /** The operation of each served route, by sofa key, as sofa sends it. */
  documents: Map<string, DocumentNode>;
}

export interface SofaRoutesOptions {
  schema: GraphQLSchema;
  routes: readonly ServedRoute[];
  execute: RestExecutor;
  /** sofa's `depthLimit`: how often one type may repeat along a selection path. */
  depthLimit: number;
}

/** sofa's configuration (its `SofaConfig` is not exported by name). */
type SofaConfig = Parameters<typeof createSofa>[0];

type SofaHandler = (request: unknown, serverContext: object) => Promise<{ status: number; text(): Promise<string> }>;

/**
 * Builds the served routes with sofa-api: sofa generates one operation per field (selection sets
 * from the schema), maps path parameters, query parameters and body keys onto the field's
 * arguments, executes through `execute` and shapes the response. The adaptations, none a fork:
 *
 * - sofa turns every root field of its schema into a route (plus `/webhook` routes), so it gets
 *   the API schema cut down to the served fields; nested fields lose their arguments (optional
 *   ones are left out, fields with required ones are dropped) so that sofa's documents take only
 *   the route's own arguments.
 * - sofa's `execute` has graphql-js' signature; the adapter turns its ExecutionArgs into a
 *   RestOperation for the gateway and keeps the executor's extra headers on the request state.
 * - sofa's `errorHandler` has no access to the request, so it records the errors against the
 *   Response it returns and the caller renders the platform's error body from them.
 * - Requests go to sofa's route handlers directly, not through `router.fetch`. The feTS router
 *   around them (a WHATWG Request per call, URLPattern matching, its server adapter) measured
 *   about 100-150 µs per request against about 15 µs for the handler itself; the table's own trie
 *   has matched the route already. The handlers are read from the router's `__routes` (feTS
 *   internals, checked at startup: a change there fails fast here, not at request time).
 */
export function createSofaRoutes(options: SofaRoutesOptions): SofaRoutes {
  const schema = servedSchema(options.schema, options.routes);
  const failed = new WeakMap<object, ReadonlyArray<unknown>>();

  const execute = async (args: ExecutionArgs): Promise<ExecutionResult> => {
    const state = (args.contextValue as { state: SofaRequestState }).state;
    const result = await options.execute({
      document: args.document,
      variables: (args.variableValues ?? {}) as Record<string, unknown>,
      operationName: args.operationName ?? undefined,
      req: state.req,
      requestId: state.requestId,
    });
    state.headers = result.headers;
    const errors = result.errors?.length ? (result.errors as GraphQLFormattedError[]) : undefined;
    return { data: result.data ?? null, ...(errors ? { errors: errors as never } : {}) };
  };

  const config: SofaConfig = {
    basePath: '/v1',
    schema,
    depthLimit: options.depthLimit,
    routes: Object.fromEntries(
      options.routes.map((route) => [
        route.sofaKey,
        { method: route.method, path: route.sofaPath, responseStatus: route.status as never, tags: [route.tag], description: route.description },
      ]),
    ),
    execute: execute as unknown as SofaConfig['execute'],
    errorHandler: (errors: ReadonlyArray<unknown>) => {
      const response = new Response(null, { status: 500 });
      failed.set(response, errors);
      return response as never;
    },
    // The platform serves its own OpenAPI document and docs page (openapi.ts, docs-page.ts).
    openAPI: { endpoint: false } as never,
    swaggerUI: { endpoint: false } as never,
  };
  const sofa = createSofa(config);
  const router = createSofaRouter(sofa);

  const fetsRoutes = (router as unknown as { __routes?: Array<{ method?: string; path?: string; handler?: SofaHandler }> }).__routes;
  const handlers = new Map<string, SofaHandler>();
  const documents = new Map<string, DocumentNode>();
  const problems: string[] = [];
  for (const route of options.routes) {
    const handler = fetsRoutes?.find((r) => r.method === route.method && r.path === route.sofaPath)?.handler;
    if (typeof handler !== 'function') problems.push(`${route.method} ${route.path}: sofa's router has no handler for ${route.sofaPath} (sofa-api or feTS internals changed?)`);
    else handlers.set(route.sofaKey, handler);

    const document = buildDocument(sofa.schema, route, sofa.models, sofa.ignore, sofa.depthLimit);
    // The documents run against the full API schema; a mismatch is a bug to find at startup.
    for (const error of validate(options.schema, document)) problems.push(`${route.method} ${route.path}: ${error.message}`);
    documents.set(route.sofaKey, document);
  }
  if (problems.length > 0) throw new RouteTableError(`rest-compat: cannot build the sofa routes:\n  - ${problems.join('\n  - ')}`);

  return {
    schema: sofa.schema,
    documents,
    async run(sofaKey, request, state) {
      const body = request.body;
      // The members of a fetch Request that sofa's handler reads: body, text(), url, params.
      const fetchLike = { url: request.url, params: request.params, body: body ?? null, text: async () => body ?? '' };
      const response = await handlers.get(sofaKey)!(fetchLike, { state });
      const errors = failed.get(response);
      if (errors) return { ok: false, errors };
      return { ok: true, status: response.status, json: await response.text() };
    },
  };
}

/** The operation sofa generates for a route (same builder, same options as sofa's router). */
function buildDocument(schema: GraphQLSchema, route: ServedRoute, models: string[], ignore: string[], depthLimit: number): DocumentNode {
  const operation = buildOperationNodeForField({ schema, kind: route.operation === 'query' ? OperationTypeNode.QUERY : OperationTypeNode.MUTATION, field: route.fieldName, models, ignore, circularReferenceDepth: depthLimit });
  return { kind: Kind.DOCUMENT, definitions: [operation] };
}

/** The API schema with only the served root fields, nested arguments removed, unused types pruned. */
function servedSchema(schema: GraphQLSchema, routes: readonly ServedRoute[]): GraphQLSchema {
  const served = new Set(routes.map((r) => r.sofaKey));
  const mapped = mapSchema(schema, {
    [MapperKind.ROOT_FIELD]: (field, fieldName, typeName) => (served.has(`${typeName}.${fieldName}`) ? field : null),
    [MapperKind.COMPOSITE_FIELD]: (field) => {
      const args = Object.values(field.args ?? {});
      if (args.some((arg) => arg.type.toString().endsWith('!') && arg.defaultValue === undefined)) return null;
      return { ...field, args: {} };
    },
  });
  const pruned = pruneSchema(new GraphQLSchema({ ...mapped.toConfig(), subscription: undefined }));
  if (!pruned.getQueryType()) throw new RouteTableError('rest-compat: sofa needs at least one served Query route');
  return pruned;
}

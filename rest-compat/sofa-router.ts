import type { IncomingMessage } from 'node:http';
import { buildOperationNodeForField, MapperKind, mapSchema, pruneSchema } from '@graphql-tools/utils';
import { GraphQLSchema, Kind, validate, type DocumentNode, type ExecutionArgs, type ExecutionResult, type GraphQLFormattedError, type OperationDefinitionNode } from 'graphql';
import { createSofa, createSofaRouter, type SofaConfig } from 'sofa-api';
import type { RestExecutor } from './types';
import { RouteTableError, type ServedRoute } from './served-routes';

/** What one request carries through sofa into the executor and back. */
export interface SofaRequestState {
  req: IncomingMessage;
  requestId: string;
  /** Extra response headers the executor returned (rate limits…). */
  headers?: Record<string, string>;
}

export interface SofaRoutes {
  /** sofa's feTS router: `fetch(url, init, { state })` answers one served route. */
  router: ReturnType<typeof createSofaRouter>;
  /** The schema sofa builds operations from (the API schema cut down to the served fields). */
  schema: GraphQLSchema;
  /** The operation of each served route, by sofa key (`Query.secrets`), as sofa sends it. */
  documents: Map<string, DocumentNode>;
  /** The errors sofa handed to its errorHandler for a response of the router, if the route failed. */
  failedErrors(response: object): ReadonlyArray<unknown> | undefined;
}

export interface SofaRoutesOptions {
  schema: GraphQLSchema;
  routes: readonly ServedRoute[];
  execute: RestExecutor;
  /** sofa's `depthLimit`: how often one type may repeat along a selection path. */
  depthLimit: number;
}

/** Marks the errors of a failed route; the handler renders them with the request id. */
const ERROR_STATUS_MARK = 599;

/**
 * Builds the served routes with sofa: sofa generates one operation per field (selection sets
 * from the schema), maps path parameters, query parameters and body keys onto its arguments,
 * and executes through `execute`. Three adaptations, none a fork:
 *
 * - sofa turns every root field of its schema into a route (plus `/webhook` routes), so it gets
 *   the API schema cut down to the served fields; nested fields lose their arguments (optional
 *   ones are left out, fields with required ones are dropped) so that sofa's documents take only
 *   the route's own arguments.
 * - sofa's `execute` is graphql-js' signature; the adapter turns its ExecutionArgs into a
 *   RestOperation for the gateway and keeps the executor's extra headers on the request state.
 * - sofa's `errorHandler` has no access to the request, so it records the errors on a marked
 *   Response and the handler renders the platform's error body (with the request id) from them.
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
    errorHandler: (errors) => {
      const response = new Response(null, { status: ERROR_STATUS_MARK });
      failed.set(response, errors);
      return response as never;
    },
    // The platform serves its own OpenAPI document and docs page (openapi.ts, docs-page.ts).
    openAPI: { endpoint: false } as never,
    swaggerUI: { endpoint: false } as never,
  };
  const sofa = createSofa(config);
  const router = createSofaRouter(sofa);

  const documents = new Map<string, DocumentNode>();
  const problems: string[] = [];
  for (const route of options.routes) {
    const document = buildDocument(sofa.schema, route, sofa.models, sofa.ignore, sofa.depthLimit);
    // The documents run against the full API schema; a mismatch is a bug to find at startup.
    for (const error of validate(options.schema, document)) problems.push(`${route.method} ${route.path}: ${error.message}`);
    documents.set(route.sofaKey, document);
  }
  if (problems.length > 0) throw new RouteTableError(`rest-compat: generated operations are invalid:\n  - ${problems.join('\n  - ')}`);

  return { router, schema: sofa.schema, documents, failedErrors: (response) => failed.get(response) };
}

/** The operation sofa generates for a route (same builder, same options as sofa's router). */
function buildDocument(schema: GraphQLSchema, route: ServedRoute, models: string[], ignore: string[], depthLimit: number): DocumentNode {
  const operation: OperationDefinitionNode = buildOperationNodeForField({
    schema,
    kind: route.operation,
    field: route.fieldName,
    models,
    ignore,
    circularReferenceDepth: depthLimit,
  });
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
  const config = mapped.toConfig();
  const pruned = pruneSchema(new GraphQLSchema({ ...config, subscription: undefined }));
  if (!pruned.getQueryType()) throw new RouteTableError('rest-compat: sofa needs at least one served Query route');
  return pruned;
}

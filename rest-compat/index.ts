import type { IncomingMessage, ServerResponse } from 'node:http';
import { print, printSchema } from 'graphql';
import { DomainError, ValidationError } from '../core/errors';
import { readBody, sendJson } from '../core/http';
import { renderDocsPage } from './docs-page';
import { restError, toRestError, type RestError } from './errors';
import { buildOpenApiDocument } from './openapi';
import { parseJsonObject, validateRouteInput } from './request-input';
import { MalformedPathError, RouteMatcher } from './route-matcher';
import { ROUTES, type RouteDefinition } from './routes';
import { resolveServedRoutes, type ServedRoute } from './served-routes';
import { createSofaRoutes, type SofaRequestState } from './sofa-router';
import type { RawRouteHandler, RestCompatOptions } from './types';

export type { ExtraRawRoute, RawRouteContext, RawRouteHandler, RestCompatOptions, RestExecutor, RestOperation, RestOperationResult } from './types';
export { ROUTES, type RouteDefinition } from './routes';

export interface RestHandler {
  /** Handles every request whose path starts with /v1 (including `/v1` itself); never throws. */
  handle(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void>;
  /** The published OpenAPI 3 document (also at GET /v1/openapi.json). */
  openapi: object;
  /** The GraphQL operation each served route sends, by `METHOD /spec/path` (for benchmarks and docs). */
  operations: Record<string, string>;
}

/** What a path of the table resolves to. */
type TableEntry =
  | { kind: 'served'; route: ServedRoute }
  | { kind: 'pending'; route: RouteDefinition }
  | { kind: 'raw'; path: string; handler: RawRouteHandler }
  | { kind: 'static'; contentType: string; body: Buffer; headers?: Record<string, string> };

const BASE = '/v1';

/**
 * The REST layer: the route table served through sofa-api, in front of the gateway's executor.
 * Everything that can be computed is computed here, once: the route trie, the operations, the
 * OpenAPI document, the docs page and the SDL. Throws (RouteTableError) when the table does not
 * fit the schema. `table` is the route table; tests pass their own, everyone else the default.
 */
export function createRestHandler(options: RestCompatOptions, table: readonly RouteDefinition[] = ROUTES): RestHandler {
  const { config, logger } = options;
  const served = resolveServedRoutes(options.schema, table);
  const sofa = createSofaRoutes({ schema: options.schema, routes: served, execute: options.execute, depthLimit: options.depthLimit ?? 1 });
  const openapi = buildOpenApiDocument({ schema: sofa.schema, routes: served, documents: sofa.documents, version: '1.0.0' });

  const matcher = new RouteMatcher<TableEntry>();
  const servedByKey = new Map(served.map((route) => [`${route.method} ${route.path}`, route]));
  for (const extra of options.extraRawRoutes ?? []) matcher.add(extra.method, extra.path, { kind: 'raw', path: extra.path, handler: extra.handler });
  for (const route of table) {
    const rawHandler = route.raw ? options.rawHandlers?.[route.raw] : undefined;
    const entry: TableEntry = route.field
      ? { kind: 'served', route: servedByKey.get(`${route.method} ${route.path}`)! }
      : rawHandler
        ? { kind: 'raw', path: route.path, handler: rawHandler }
        : { kind: 'pending', route };
    matcher.add(route.method, route.path, entry);
  }
  // The published schema and its docs: public, not routes of the spec.
  const staticFile = (contentType: string, body: string, headers?: Record<string, string>): TableEntry => ({ kind: 'static', contentType, body: Buffer.from(body), headers });
  matcher.add('GET', '/openapi.json', staticFile('application/json; charset=utf-8', JSON.stringify(openapi)));
  matcher.add('GET', '/schema.graphql', staticFile('text/plain; charset=utf-8', printSchema(options.schema)));
  matcher.add(
    'GET',
    '/docs',
    staticFile('text/html; charset=utf-8', renderDocsPage(`${BASE}/openapi.json`), {
      // The page is self-contained: it may talk to this origin and load nothing else.
      'content-security-policy': "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:",
    }),
  );

  const operations = Object.fromEntries(served.map((route) => [`${route.method} ${route.path}`, print(sofa.documents.get(route.sofaKey)!)]));

  async function dispatch(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
    const url = req.url ?? '/';
    const queryAt = url.indexOf('?');
    const fullPath = queryAt < 0 ? url : url.slice(0, queryAt);
    const method = req.method ?? 'GET';
    const path = fullPath.startsWith(`${BASE}/`) ? fullPath.slice(BASE.length) : '';

    let match;
    try {
      match = path ? matcher.match(method, path) : undefined;
    } catch (err) {
      if (err instanceof MalformedPathError) return send(res, requestId, restError('BAD_REQUEST', err.message, requestId));
      throw err;
    }
    if (!match) {
      return send(res, requestId, restError('ROUTE_NOT_FOUND', `No route ${method} ${fullPath}; the routes are listed at ${BASE}/docs`, requestId));
    }
    const entry = match.entry;
    if (!entry) {
      // A known path, another method: 404 (not 405), so that every "no such route" answer has the
      // one code and status of ROUTE_NOT_FOUND; `Allow` names the methods the path is served with.
      const allow = [...match.methods].filter(([m, e]) => m !== '*' && e.kind !== 'pending').map(([m]) => m).join(', ');
      return send(res, requestId, restError('ROUTE_NOT_FOUND', `No route ${method} ${fullPath}`, requestId, undefined, allow ? { allow } : {}));
    }
    if (entry.kind === 'static') {
      res.writeHead(200, { 'content-type': entry.contentType, 'content-length': entry.body.length, 'x-request-id': requestId, ...entry.headers });
      res.end(entry.body);
      return;
    }
    if (entry.kind === 'raw') {
      try {
        await entry.handler(req, res, { params: match.params, query: new URLSearchParams(queryAt >= 0 ? url.slice(queryAt + 1) : ''), requestId, path: entry.path });
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        if (res.headersSent) return void res.destroy();
        return send(res, requestId, toRestError([err], requestId));
      }
      return;
    }
    if (entry.kind === 'pending') {
      return send(
        res,
        requestId,
        restError('ROUTE_NOT_FOUND', `${entry.route.method === '*' ? method : entry.route.method} ${entry.route.path} is not yet available`, requestId),
      );
    }

    const route = entry.route;
    let rawBody: Buffer | undefined;
    let body: Record<string, unknown> | undefined;
    let query: URLSearchParams | undefined;
    try {
      // Read before sofa sees anything, so the size limit holds and nothing past it is buffered.
      if (route.readsBody || hasBody(req)) rawBody = await readBody(req, config.maxBodyBytes);
      if (route.readsBody) body = parseJsonObject(rawBody!);
      if (queryAt >= 0) query = new URLSearchParams(url.slice(queryAt + 1));
      const fixed = route.fixedArgs.find((name) => query?.has(name) || (body !== undefined && name in body));
      if (fixed) throw new ValidationError(`"${fixed}" is fixed by the path ${route.path} and cannot be given`, { field: fixed });
      validateRouteInput(route.args, match.params, query, body);
    } catch (err) {
      if (err instanceof DomainError) return send(res, requestId, toRestError([err], requestId));
      throw err;
    }

    const state: SofaRequestState = { req, requestId };
    const outcome = await sofa.run(
      route.sofaKey,
      { url: `http://rest.local${url}`, params: match.params, body: route.readsBody && rawBody!.length > 0 ? rawBody!.toString('utf8') : undefined },
      state,
    );
    if (!outcome.ok) {
      const error = toRestError(outcome.errors, requestId);
      if (error.internal !== undefined) logger.error('REST route failed', { requestId, route: `${route.method} ${route.path}`, err: error.internal });
      return send(res, requestId, error, state.headers);
    }
    res.writeHead(outcome.status, {
      ...state.headers,
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(outcome.json),
      'x-request-id': requestId,
    });
    res.end(outcome.json);
  }

  async function handle(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
    try {
      await dispatch(req, res, requestId);
    } catch (err) {
      logger.error('REST request failed', { requestId, method: req.method, url: req.url, err });
      if (!res.headersSent) send(res, requestId, restError('INTERNAL', 'Internal server error', requestId));
      else res.destroy();
    }
  }

  return { handle, openapi, operations };
}

function send(res: ServerResponse, requestId: string, error: RestError, extraHeaders?: Record<string, string>): void {
  sendJson(res, error.status, error.body, { ...extraHeaders, ...error.headers, 'x-request-id': requestId });
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

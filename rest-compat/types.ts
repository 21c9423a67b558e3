import type { IncomingMessage } from 'node:http';
import type { DocumentNode, GraphQLFormattedError, GraphQLSchema } from 'graphql';
import type { PlatformConfig } from '../core/config';
import type { Logger } from '../core/logger';
import type { IncomingMessage as Req, ServerResponse } from 'node:http';
import type { HttpMethod, RawHandlerName } from './routes';

/** What a raw route handler gets besides the request and response. */
export interface RawRouteContext {
  /** Path parameters of the matched route, decoded. */
  params: Record<string, string>;
  query: URLSearchParams;
  requestId: string;
  /** The route's path as the table writes it (`/auth/idp-a`). */
  path: string;
}

/** Serves a raw route completely (status, headers, body); errors it throws get the platform shape. */
export type RawRouteHandler = (req: Req, res: ServerResponse, ctx: RawRouteContext) => Promise<void>;

/** A raw route outside the spec's table (an OAuth callback, for example). */
export interface ExtraRawRoute {
  method: HttpMethod;
  path: string;
  handler: RawRouteHandler;
}

/** One REST call as a GraphQL operation, for the gateway to run. */
export interface RestOperation {
  document: DocumentNode;
  variables: Record<string, unknown>;
  operationName?: string;
  /** The HTTP request: the gateway reads credentials (X-API-Key, Authorization) from it. */
  req: IncomingMessage;
  requestId: string;
}

export interface RestOperationResult {
  data?: Record<string, unknown> | null;
  /** Already masked, each with `extensions.code` from core/errors/error-codes.ts. */
  errors?: ReadonlyArray<GraphQLFormattedError>;
  /** Extra response headers (rate-limit headers…). */
  headers?: Record<string, string>;
}

/** Runs an operation through the gateway (authentication, rate limits, masking happen there). */
export type RestExecutor = (op: RestOperation) => Promise<RestOperationResult>;

export interface RestCompatOptions {
  config: PlatformConfig;
  logger: Logger;
  /** The supergraph's API schema. */
  schema: GraphQLSchema;
  execute: RestExecutor;
  /**
   * sofa's `depthLimit`: how many times one type may appear along a path of the generated
   * selection sets. 1 already selects nested objects such as `user` and `createdBy` in full.
   * @defaultValue 1
   */
  depthLimit?: number;
  /** Handlers of the table's `raw` routes; a raw route without one answers "not yet available". */
  rawHandlers?: Partial<Record<RawHandlerName, RawRouteHandler>>;
  /** Raw routes the table does not list (they are not spec routes), matched before the table. */
  extraRawRoutes?: ExtraRawRoute[];
}

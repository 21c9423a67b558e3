import type { IncomingMessage } from 'node:http';
import type { DocumentNode, GraphQLFormattedError, GraphQLSchema } from 'graphql';
import type { PlatformConfig } from '../core/config';
import type { Logger } from '../core/logger';

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
}

import type { GraphQLFormattedError } from 'graphql';
import { DomainError, isErrorCode, statusOf, type ErrorCode } from '../core/errors';
import { errorBody, type ErrorBody } from '../core/http';

/** An error response of the REST layer: status, platform error body and extra headers. */
export interface RestError {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
}

/**
 * The one translation from an error to a REST response (ARCHITECTURE.md, "Errors"). The first
 * error decides. GraphQL errors from the gateway arrive masked with `extensions.code`; a thrown
 * DomainError keeps its code; sofa's own request errors (`extensions.http.status` 400) are the
 * caller's; anything else is INTERNAL with no internals in the body.
 */
export function toRestError(errors: ReadonlyArray<unknown>, requestId: string): RestError & { internal?: unknown } {
  const first = errors[0];
  let code: ErrorCode = 'INTERNAL';
  let message = 'Internal server error';
  let details: unknown;
  let internal: unknown;

  if (first instanceof DomainError) {
    ({ code, message, details } = first);
  } else if (first && typeof first === 'object') {
    const error = first as GraphQLFormattedError & { extensions?: { http?: { status?: number } } };
    const extensionCode = error.extensions?.code;
    if (isErrorCode(extensionCode) && extensionCode !== 'INTERNAL') {
      code = extensionCode;
      message = error.message;
      details = error.extensions?.details;
    } else if (error.extensions?.http?.status === 400) {
      code = 'BAD_REQUEST';
      message = error.message;
    } else {
      internal = first;
    }
  } else {
    internal = first;
  }

  const headers: Record<string, string> = {};
  if (code === 'UNAUTHENTICATED') headers['www-authenticate'] = 'Bearer';
  if (code === 'RATE_LIMITED') {
    const retryAfter = (details as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
    if (typeof retryAfter === 'number' && Number.isFinite(retryAfter)) headers['retry-after'] = String(Math.max(0, Math.ceil(retryAfter)));
  }
  return { status: statusOf(code), body: errorBody(code, message, requestId, details), headers, ...(internal !== undefined ? { internal } : {}) };
}

/** An error of our own making (unknown route, bad body…), as a REST response. */
export function restError(code: ErrorCode, message: string, requestId: string, details?: unknown, headers: Record<string, string> = {}): RestError {
  return { status: statusOf(code), body: errorBody(code, message, requestId, details), headers };
}

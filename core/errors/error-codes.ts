/** The one mapping from error code to HTTP status (ARCHITECTURE.md, "Errors"). */
export const ERROR_STATUS = {
  VALIDATION_FAILED: 400,
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  INSUFFICIENT_BALANCE: 402,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  ROUTE_NOT_FOUND: 404,
  CONFLICT: 409,
  INVALID_STATE: 409,
  PAYLOAD_TOO_LARGE: 413,
  /** The request line or headers exceed the server's limit (Node's 16 KiB); answered before any route. */
  HEADERS_TOO_LARGE: 431,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  /** A proxied upstream (an app in a sandbox) did not answer: nothing listening, closed, or too slow. */
  UPSTREAM_UNAVAILABLE: 502,
  UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ERROR_STATUS, value);
}

export function statusOf(code: string | undefined): number {
  return isErrorCode(code) ? ERROR_STATUS[code] : 500;
}

import { ERROR_STATUS, type ErrorCode } from './error-codes';

/**
 * Base of every intentional error of the platform. Domain code throws these; the GraphQL
 * layer turns them into `extensions.code` and the REST layer into an HTTP status, each in
 * one place (`mask.ts`, `rest-compat/errors.ts`). Domain code knows neither.
 */
export class DomainError extends Error {
  override name = 'DomainError';
  readonly code: ErrorCode;
  readonly details?: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.code = code;
    this.details = details;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

import { DomainError } from './domain-error';

export class RateLimitedError extends DomainError {
  override name = 'RateLimitedError';

  constructor(message: string, readonly retryAfterSeconds: number, details?: Record<string, unknown>) {
    super('RATE_LIMITED', message, { ...details, retryAfterSeconds });
  }
}

import { DomainError } from './domain-error';

export class UnavailableError extends DomainError {
  override name = 'UnavailableError';

  constructor(message = 'Service unavailable', details?: Record<string, unknown>) {
    super('UNAVAILABLE', message, details);
  }
}

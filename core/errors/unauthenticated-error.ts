import { DomainError } from './domain-error';

export class UnauthenticatedError extends DomainError {
  override name = 'UnauthenticatedError';

  constructor(message = 'Authentication required', details?: Record<string, unknown>) {
    super('UNAUTHENTICATED', message, details);
  }
}

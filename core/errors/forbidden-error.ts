import { DomainError } from './domain-error';

export class ForbiddenError extends DomainError {
  override name = 'ForbiddenError';

  constructor(message = 'Forbidden', details?: Record<string, unknown>) {
    super('FORBIDDEN', message, details);
  }
}

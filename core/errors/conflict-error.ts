import { DomainError } from './domain-error';

export class ConflictError extends DomainError {
  override name = 'ConflictError';

  constructor(message = 'Conflict', details?: Record<string, unknown>) {
    super('CONFLICT', message, details);
  }
}

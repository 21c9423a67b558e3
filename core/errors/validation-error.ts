import { DomainError } from './domain-error';

export class ValidationError extends DomainError {
  override name = 'ValidationError';

  constructor(message = 'Validation failed', details?: Record<string, unknown>) {
    super('VALIDATION_FAILED', message, details);
  }
}

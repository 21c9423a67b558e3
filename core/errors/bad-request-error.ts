import { DomainError } from './domain-error';

export class BadRequestError extends DomainError {
  override name = 'BadRequestError';

  constructor(message = 'Bad request', details?: Record<string, unknown>) {
    super('BAD_REQUEST', message, details);
  }
}

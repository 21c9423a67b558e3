import { DomainError } from './domain-error';

export class InsufficientBalanceError extends DomainError {
  override name = 'InsufficientBalanceError';

  constructor(message = 'Insufficient balance', details?: Record<string, unknown>) {
    super('INSUFFICIENT_BALANCE', message, details);
  }
}

import { DomainError } from './domain-error';

export class PayloadTooLargeError extends DomainError {
  override name = 'PayloadTooLargeError';

  constructor(message = 'Payload too large', details?: Record<string, unknown>) {
    super('PAYLOAD_TOO_LARGE', message, details);
  }
}

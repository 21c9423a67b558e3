import { DomainError } from './domain-error';

/** An operation the record's current state does not allow; the message names the state. */
export class InvalidStateError extends DomainError {
  override name = 'InvalidStateError';

  constructor(resource: string, state: string, operation: string) {
    super('INVALID_STATE', `Cannot ${operation} ${resource} while it is ${state}`, { resource, state, operation });
  }
}

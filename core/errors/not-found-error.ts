import { DomainError } from './domain-error';

/** A record that does not exist, or that the caller may not see: the two are never told apart. */
export class NotFoundError extends DomainError {
  override name = 'NotFoundError';

  constructor(resource: string, id?: string) {
    super('NOT_FOUND', id ? `${resource} ${id} not found` : `${resource} not found`, id ? { resource, id } : { resource });
  }
}

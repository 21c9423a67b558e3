import { userReference } from '../user.types';
import type { SecretEntity } from './secret.entity';
import type { DeletedSecret, Secret } from './secret.types';

/** Row → API shape. The ciphertext is not part of it, whether or not the row carries it. */
export function toSecret(row: SecretEntity): Secret {
  return {
    id: row.id,
    key: row.key,
    workspaceId: row.workspaceId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    createdBy: userReference(row.createdByUserId),
  };
}

export function toDeletedSecret(id: string): DeletedSecret {
  return { id, deleted: true };
}

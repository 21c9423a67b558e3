import { userReference } from '../user.types';
import type { OAuthConnectionEntity } from './oauth-connection.entity';
import type { DeletedOAuthConnection, OAuthConnection } from './oauth-connection.types';

/** Row → API shape. The token ciphertexts are not part of it, whether or not the row carries them. */
export function toOAuthConnection(row: OAuthConnectionEntity): OAuthConnection {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    provider: row.provider,
    status: row.status,
    subject: row.subject,
    email: row.email,
    name: row.name,
    scopes: row.scopes,
    accessTokenExpiresAt: row.accessTokenExpiresAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    lastRefreshedAt: row.lastRefreshedAt?.toISOString() ?? null,
    createdBy: userReference(row.createdByUserId),
  };
}

export function toDeletedOAuthConnection(id: string): DeletedOAuthConnection {
  return { id, deleted: true };
}

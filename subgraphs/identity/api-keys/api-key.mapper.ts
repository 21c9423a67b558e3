import type { ApiKeyEntity } from './api-key.entity';
import type { ApiKey, CreatedApiKey } from './api-key.types';

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

/** The one place an api_keys row becomes the API's ApiKey; the hash never leaves. */
export function toApiKey(row: ApiKeyEntity): ApiKey {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    createdAt: row.createdAt.toISOString(),
    expiresAt: iso(row.expiresAt),
    lastUsedAt: iso(row.lastUsedAt),
    revokedAt: iso(row.revokedAt),
  };
}

export function toCreatedApiKey(row: ApiKeyEntity, key: string): CreatedApiKey {
  return { ...toApiKey(row), key };
}

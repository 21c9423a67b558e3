import { requireUser } from '../../../core/access';
import type { RequestContext } from '../../../core/context';
import { randomToken, sha256 } from '../../../core/crypto';
import { NotFoundError, ValidationError } from '../../../core/errors';
import { ID_PREFIX, newId } from '../../../core/ids';
import { API_KEY_PREFIX } from '../../../core/tokens';
import type { IdentityEvents } from '../identity.events';
import { toApiKey, toCreatedApiKey } from './api-key.mapper';
import type { ApiKeyRepository } from './api-key.repository';
import type { ApiKey, CreatedApiKey } from './api-key.types';

/** Characters of the key kept for display: the typed prefix and a few random ones. */
export const API_KEY_DISPLAY_LENGTH = 12;
const MAX_EXPIRY_DAYS = 3650;

/** `wcp_key_` followed by 32 random bytes, base64url. */
export function newApiKey(): string {
  return `${API_KEY_PREFIX}${randomToken(32)}`;
}

export class ApiKeyService {
  constructor(
    private readonly keys: ApiKeyRepository,
    private readonly events: IdentityEvents,
  ) {}

  /** A key acting as the caller. Only its sha256 is stored; the key is answered this once. */
  async create(ctx: RequestContext, input: { name: string; expiresInDays?: number | null }): Promise<CreatedApiKey> {
    const principal = requireUser(ctx);
    const name = typeof input.name === 'string' ? input.name.trim() : '';
    if (!name || name.length > 100) throw new ValidationError('name must be 1 to 100 characters', { field: 'name' });
    const days = input.expiresInDays;
    if (days !== undefined && days !== null && (!Number.isInteger(days) || days < 1 || days > MAX_EXPIRY_DAYS)) {
      throw new ValidationError(`expiresInDays must be an integer between 1 and ${MAX_EXPIRY_DAYS}`, { field: 'expiresInDays' });
    }
    const key = newApiKey();
    const row = await this.keys.insert({
      id: newId(ID_PREFIX.apiKey),
      userId: principal.userId,
      name,
      prefix: key.slice(0, API_KEY_DISPLAY_LENGTH),
      keyHash: sha256(key),
      expiresAt: days ? new Date(Date.now() + days * 86400_000) : null,
    });
    return toCreatedApiKey(row, key);
  }

  /** The caller's keys that are not revoked, newest first. */
  async list(ctx: RequestContext): Promise<ApiKey[]> {
    const principal = requireUser(ctx);
    return (await this.keys.listActive(principal.userId)).map(toApiKey);
  }

  /** Revokes one of the caller's keys (idempotent); another user's key answers 404. */
  async revoke(ctx: RequestContext, input: { id: string }): Promise<ApiKey> {
    const principal = requireUser(ctx);
    const row = await this.keys.findOfUser(input.id, principal.userId);
    if (!row) throw new NotFoundError('ApiKey', input.id);
    const revoked = await this.keys.revoke(row.id);
    await this.events.principalChanged({ userId: principal.userId, apiKeyId: row.id });
    return toApiKey(revoked);
  }
}

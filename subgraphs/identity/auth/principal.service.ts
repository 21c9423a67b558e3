import { sha256 } from '../../../core/crypto';
import { BadRequestError } from '../../../core/errors';
import type { Principal } from '../../../core/principal';
import { API_KEY_PREFIX } from '../../../core/tokens';
import type { ApiKeyRepository } from '../api-keys/api-key.repository';
import type { UserRepository } from '../users/user.repository';
import type { WorkspaceRepository } from '../workspaces/workspace.repository';

/** last_used_at is written at most this often per key, not on every request. */
const LAST_USED_RESOLUTION_SECONDS = 60;

export type PrincipalLookup = { userId: string } | { apiKey: string };

/**
 * Builds the principal the gateway forwards with every request, from a verified access token's
 * user id or from an API key. Two small indexed queries: the user (or key joined with its user)
 * and the memberships. Null for anything that must not authenticate.
 */
export class PrincipalService {
  constructor(
    private readonly users: UserRepository,
    private readonly workspaces: WorkspaceRepository,
    private readonly apiKeys: ApiKeyRepository,
  ) {}

  async resolve(body: unknown): Promise<Principal | null> {
    const lookup = parseLookup(body);
    return 'userId' in lookup ? this.forUser(lookup.userId) : this.forApiKey(lookup.apiKey);
  }

  private async forUser(userId: string): Promise<Principal | null> {
    const user = await this.users.findById(userId);
    if (!user || user.disabledAt) return null;
    return {
      userId: user.id,
      username: user.username,
      isAdmin: user.isAdmin,
      via: 'jwt',
      defaultWorkspaceId: user.defaultWorkspaceId,
      memberships: await this.workspaces.rolesOfUser(user.id),
    };
  }

  private async forApiKey(apiKey: string): Promise<Principal | null> {
    if (!apiKey.startsWith(API_KEY_PREFIX) || apiKey.length > 256) return null;
    const found = await this.apiKeys.findUsableByHash(sha256(apiKey));
    if (!found) return null;
    const stale = !found.lastUsedAt || Date.now() - found.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_SECONDS * 1000;
    const [memberships] = await Promise.all([
      this.workspaces.rolesOfUser(found.user.id),
      stale ? this.apiKeys.touchLastUsed(found.keyId, LAST_USED_RESOLUTION_SECONDS) : undefined,
    ]);
    return {
      userId: found.user.id,
      username: found.user.username,
      isAdmin: found.user.isAdmin,
      via: 'api_key',
      apiKeyId: found.keyId,
      defaultWorkspaceId: found.user.defaultWorkspaceId,
      memberships,
    };
  }
}

function parseLookup(body: unknown): PrincipalLookup {
  const value = (body ?? {}) as Record<string, unknown>;
  if (typeof value.userId === 'string' && value.userId) return { userId: value.userId };
  if (typeof value.apiKey === 'string' && value.apiKey) return { apiKey: value.apiKey };
  throw new BadRequestError('Body must be { "userId": string } or { "apiKey": string }');
}

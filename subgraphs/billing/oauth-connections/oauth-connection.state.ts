import { IDP_NAMES, type IdpName, type PlatformConfig } from '../../../core/config';
import { sha256 } from '../../../core/crypto';
import type { Redis } from '../../../core/redis';

/** What auth-url remembers until the caller comes back with the code. */
export interface PendingConnection {
  workspaceId: string;
  provider: IdpName;
  /** Who started the flow; only they may finish it. */
  userId: string;
  codeVerifier: string;
  nonce: string;
  redirectUri: string;
  scopes: string[];
}

/**
 * Pending workspace connections between auth-url and exchange: the state's sha256 keys the
 * PKCE verifier and the rest in Redis for `oauthStateTtlSeconds` (a Redis dump does not hand
 * out usable states). Redis expiry does the cleanup.
 */
export class OAuthConnectionStateStore {
  constructor(
    private readonly redis: Redis,
    private readonly config: Pick<PlatformConfig, 'redisPrefix' | 'oauthStateTtlSeconds'>,
  ) {}

  /** @returns when the state stops being accepted. */
  async save(state: string, pending: PendingConnection): Promise<Date> {
    const ttl = this.config.oauthStateTtlSeconds;
    await this.redis.set(this.key(state), JSON.stringify(pending), 'EX', ttl);
    return new Date(Date.now() + ttl * 1000);
  }

  /** Ends the state and answers what it held; GETDEL is atomic, so only one caller ever gets it. */
  async take(state: string): Promise<PendingConnection | null> {
    const raw = await this.redis.getdel(this.key(state));
    return raw === null ? null : parsePending(raw);
  }

  private key(state: string): string {
    return `${this.config.redisPrefix}:oauth-connection-state:${sha256(state)}`;
  }
}

function parsePending(raw: string): PendingConnection | null {
  try {
    const value = JSON.parse(raw) as Partial<PendingConnection>;
    const strings = [value.workspaceId, value.userId, value.codeVerifier, value.nonce, value.redirectUri];
    if (!strings.every((s) => typeof s === 'string') || !(IDP_NAMES as readonly unknown[]).includes(value.provider)) return null;
    if (!Array.isArray(value.scopes) || !value.scopes.every((s) => typeof s === 'string')) return null;
    return value as PendingConnection;
  } catch {
    return null;
  }
}

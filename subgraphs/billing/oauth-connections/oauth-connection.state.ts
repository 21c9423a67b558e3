import { IDP_NAMES, type IdpName, type PlatformConfig } from '../../../core/config';
import { OneTimeValues } from '../../../core/one-time-values';
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
 * Pending workspace connections between auth-url and exchange: the PKCE verifier and the rest,
 * kept for `oauthStateTtlSeconds` under `oauth-connection-state:<sha256(state)>` (OneTimeValues).
 */
export class OAuthConnectionStateStore {
  private readonly states: OneTimeValues;

  constructor(
    redis: Redis,
    private readonly config: Pick<PlatformConfig, 'redisPrefix' | 'oauthStateTtlSeconds'>,
  ) {
    this.states = new OneTimeValues(redis, config.redisPrefix, 'oauth-connection-state');
  }

  /** @returns when the state stops being accepted. */
  async save(state: string, pending: PendingConnection): Promise<Date> {
    const ttl = this.config.oauthStateTtlSeconds;
    await this.states.put(state, JSON.stringify(pending), ttl);
    return new Date(Date.now() + ttl * 1000);
  }

  /** Ends the state and answers what it held; only one caller ever gets it. */
  async take(state: string): Promise<PendingConnection | null> {
    const raw = await this.states.take(state);
    return raw === null ? null : parsePending(raw);
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

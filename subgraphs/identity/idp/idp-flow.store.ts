import type { IdpName, PlatformConfig } from '../../../core/config';
import { sha256 } from '../../../core/crypto';
import type { Redis } from '../../../core/redis';

/** A browser sign-in between the redirect to the provider and its callback. */
export interface PendingSignIn {
  provider: IdpName;
  nonce: string;
  codeVerifier: string;
  /** The redirect_uri sent to the provider; the code exchange must send the same one. */
  redirectUri: string;
  /** Console path to land on afterwards; already checked to be a relative path. */
  returnTo: string;
  /** sha256 of the browser-binding cookie the gateway set when the sign-in started. */
  bindingHash: string;
}

/** A finished sign-in waiting for the console to exchange its code. */
export interface PendingHandoff {
  userId: string;
  provider: IdpName;
}

/** A handoff code is carried by one redirect and exchanged at once; a minute is plenty. */
export const HANDOFF_TTL_SECONDS = 60;

/**
 * The short-lived records of browser sign-in, in Redis under the sha256 of their random key
 * (`idp-state:<sha256(state)>`, `idp-handoff:<sha256(code)>`), so a Redis dump hands out
 * nothing usable. Both are taken with GETDEL: atomic, so each is used at most once even when a
 * callback or an exchange is replayed concurrently. Redis expiry does the cleanup.
 */
export class IdpFlowStore {
  constructor(
    private readonly redis: Redis,
    private readonly config: Pick<PlatformConfig, 'redisPrefix' | 'oauthStateTtlSeconds'>,
  ) {}

  async saveState(state: string, pending: PendingSignIn): Promise<void> {
    await this.redis.set(this.key('idp-state', state), JSON.stringify(pending), 'EX', this.config.oauthStateTtlSeconds);
  }

  /** The pending sign-in of `state`, removed; null when unknown, expired or already taken. */
  async takeState(state: string): Promise<PendingSignIn | null> {
    return parse<PendingSignIn>(await this.redis.getdel(this.key('idp-state', state)));
  }

  async saveHandoff(code: string, handoff: PendingHandoff): Promise<void> {
    await this.redis.set(this.key('idp-handoff', code), JSON.stringify(handoff), 'EX', HANDOFF_TTL_SECONDS);
  }

  /** The handoff of `code`, removed; null when unknown, expired or already exchanged. */
  async takeHandoff(code: string): Promise<PendingHandoff | null> {
    return parse<PendingHandoff>(await this.redis.getdel(this.key('idp-handoff', code)));
  }

  private key(kind: 'idp-state' | 'idp-handoff', secret: string): string {
    return `${this.config.redisPrefix}:${kind}:${sha256(secret)}`;
  }
}

function parse<T>(raw: string | null): T | null {
  return raw === null ? null : (JSON.parse(raw) as T);
}

import type { IdpName, PlatformConfig } from '../../../core/config';
import { OneTimeValues } from '../../../core/one-time-values';
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
 * The short-lived records of browser sign-in (`idp-state:<sha256(state)>`,
 * `idp-handoff:<sha256(code)>`; see OneTimeValues). Both are taken, so each is used at most once
 * even when a callback or an exchange is replayed concurrently.
 */
export class IdpFlowStore {
  private readonly states: OneTimeValues;
  private readonly handoffs: OneTimeValues;

  constructor(
    redis: Redis,
    private readonly config: Pick<PlatformConfig, 'redisPrefix' | 'oauthStateTtlSeconds'>,
  ) {
    this.states = new OneTimeValues(redis, config.redisPrefix, 'idp-state');
    this.handoffs = new OneTimeValues(redis, config.redisPrefix, 'idp-handoff');
  }

  saveState(state: string, pending: PendingSignIn): Promise<void> {
    return this.states.put(state, JSON.stringify(pending), this.config.oauthStateTtlSeconds);
  }

  /** The pending sign-in of `state`, removed; null when unknown, expired or already taken. */
  async takeState(state: string): Promise<PendingSignIn | null> {
    return parse<PendingSignIn>(await this.states.take(state));
  }

  saveHandoff(code: string, handoff: PendingHandoff): Promise<void> {
    return this.handoffs.put(code, JSON.stringify(handoff), HANDOFF_TTL_SECONDS);
  }

  /** The handoff of `code`, removed; null when unknown, expired or already exchanged. */
  async takeHandoff(code: string): Promise<PendingHandoff | null> {
    return parse<PendingHandoff>(await this.handoffs.take(code));
  }
}

function parse<T>(raw: string | null): T | null {
  return raw === null ? null : (JSON.parse(raw) as T);
}

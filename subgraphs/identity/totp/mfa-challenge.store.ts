import type { PlatformConfig } from '../../../core/config';
import { randomToken } from '../../../core/crypto';
import { OneTimeValues } from '../../../core/one-time-values';
import type { Redis } from '../../../core/redis';

/** What login answers a user with a second factor in place of tokens. */
export interface MfaChallenge {
  challenge: string;
  /** Seconds the challenge stays valid. */
  expiresIn: number;
}

/**
 * Sign-in challenges between the password step and the second factor: a random token keying
 * the user id for `mfaChallengeTtlSeconds` under `mfa-challenge:<sha256(token)>` (OneTimeValues).
 */
export class MfaChallengeStore {
  private readonly challenges: OneTimeValues;

  constructor(
    redis: Redis,
    private readonly config: Pick<PlatformConfig, 'redisPrefix' | 'mfaChallengeTtlSeconds'>,
  ) {
    this.challenges = new OneTimeValues(redis, config.redisPrefix, 'mfa-challenge');
  }

  async issue(userId: string): Promise<MfaChallenge> {
    const challenge = randomToken(32);
    const expiresIn = this.config.mfaChallengeTtlSeconds;
    await this.challenges.put(challenge, userId, expiresIn);
    return { challenge, expiresIn };
  }

  /** The user of a live challenge, leaving it live (a wrong code may be retried). */
  userOf(challenge: string): Promise<string | null> {
    return this.challenges.peek(challenge);
  }

  /** Ends the challenge and answers its user; only one caller gets it. */
  consume(challenge: string): Promise<string | null> {
    return this.challenges.take(challenge);
  }
}

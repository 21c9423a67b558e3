import type { PlatformConfig } from '../../../core/config';
import { randomToken, sha256 } from '../../../core/crypto';
import type { Redis } from '../../../core/redis';

/** What login answers a user with a second factor in place of tokens. */
export interface MfaChallenge {
  challenge: string;
  /** Seconds the challenge stays valid. */
  expiresIn: number;
}

/**
 * Sign-in challenges between the password step and the second factor: a random token whose
 * sha256 keys the user id in Redis for `mfaChallengeTtlSeconds` (a Redis dump does not hand
 * out usable challenges). Redis expiry does the cleanup.
 */
export class MfaChallengeStore {
  constructor(
    private readonly redis: Redis,
    private readonly config: Pick<PlatformConfig, 'redisPrefix' | 'mfaChallengeTtlSeconds'>,
  ) {}

  async issue(userId: string): Promise<MfaChallenge> {
    const challenge = randomToken(32);
    const expiresIn = this.config.mfaChallengeTtlSeconds;
    await this.redis.set(this.key(challenge), userId, 'EX', expiresIn);
    return { challenge, expiresIn };
  }

  /** The user of a live challenge, leaving it live (a wrong code may be retried). */
  async userOf(challenge: string): Promise<string | null> {
    return this.redis.get(this.key(challenge));
  }

  /** Ends the challenge and answers its user; GETDEL is atomic, so only one caller gets it. */
  async consume(challenge: string): Promise<string | null> {
    return this.redis.getdel(this.key(challenge));
  }

  private key(challenge: string): string {
    return `${this.config.redisPrefix}:mfa-challenge:${sha256(challenge)}`;
  }
}

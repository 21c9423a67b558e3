import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { PlatformConfig } from '../../../core/config';
import { RateLimitedError } from '../../../core/errors';
import type { Redis } from '../../../core/redis';

/**
 * Failed TOTP and recovery-code attempts, per user. Six digits fall to guessing fast without
 * a limit, so each attempt takes a point before it is checked (an atomic Redis increment:
 * concurrent guesses cannot slip past a read-then-count check) and a success gives them all
 * back. Once the points are spent every attempt is refused until the window passes, even with
 * the right code.
 */
export class TotpThrottle {
  private readonly attempts: RateLimiterRedis;

  constructor(redis: Redis, config: PlatformConfig) {
    this.attempts = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${config.redisPrefix}:totp-fail`,
      points: config.totpFailuresPerWindow,
      duration: config.totpFailureWindowSeconds,
    });
  }

  /** Takes one attempt of the user's allowance; throws RateLimitedError when none is left. */
  async takeAttempt(userId: string): Promise<void> {
    try {
      await this.attempts.consume(userId);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      const retryAfterSeconds = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
      throw new RateLimitedError('Too many failed TOTP attempts; try again later', retryAfterSeconds);
    }
  }

  /** A correct code: the failures before it no longer count. */
  async clear(userId: string): Promise<void> {
    await this.attempts.delete(userId);
  }
}

import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { PlatformConfig } from '../../../core/config';
import { RateLimitedError } from '../../../core/errors';
import type { Redis } from '../../../core/redis';

/**
 * Failed-login throttle, per username and per client address. Only failures count; a success
 * clears the username's counter. Once either counter is spent, logins are refused until the
 * window passes, even with the right password, so guessing cannot go on.
 */
export class LoginThrottle {
  private readonly byUsername: RateLimiterRedis;
  private readonly byAddress: RateLimiterRedis;

  constructor(redis: Redis, config: PlatformConfig) {
    const duration = config.loginFailureWindowSeconds;
    this.byUsername = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${config.redisPrefix}:login-fail-user`,
      points: config.loginFailuresPerUsername,
      duration,
    });
    this.byAddress = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${config.redisPrefix}:login-fail-ip`,
      points: config.loginFailuresPerAddress,
      duration,
    });
  }

  /** Throws RateLimitedError while either counter is spent. */
  async check(username: string, address: string): Promise<void> {
    const [user, ip] = await Promise.all([this.byUsername.get(userKey(username)), this.byAddress.get(address)]);
    const blocked = [spent(user, this.byUsername.points), spent(ip, this.byAddress.points)].filter((ms): ms is number => ms !== null);
    if (blocked.length) {
      const retryAfterSeconds = Math.max(1, Math.ceil(Math.max(...blocked) / 1000));
      throw new RateLimitedError('Too many failed logins; try again later', retryAfterSeconds);
    }
  }

  async recordFailure(username: string, address: string): Promise<void> {
    // consume() rejects once over the limit; the next check() reports that, so ignore it here.
    await Promise.all([
      this.byUsername.consume(userKey(username)).catch(ignoreLimit),
      this.byAddress.consume(address).catch(ignoreLimit),
    ]);
  }

  async recordSuccess(username: string): Promise<void> {
    await this.byUsername.delete(userKey(username));
  }
}

/** Usernames are case-insensitive, and so is their counter. */
function userKey(username: string): string {
  return username.toLowerCase();
}

/** Milliseconds until the counter frees up, or null when attempts remain. */
function spent(res: RateLimiterRes | null, points: number): number | null {
  return res && res.consumedPoints >= points ? res.msBeforeNext : null;
}

function ignoreLimit(err: unknown): void {
  if (!(err instanceof RateLimiterRes)) throw err;
}

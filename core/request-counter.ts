import { RateLimiterRedis } from 'rate-limiter-flexible';
import { RATE_LIMIT_WINDOW_SECONDS, requestCounterPrefix, type LimitedClass } from './rate-limits';
import type { Redis } from './redis';

/**
 * The request counter of one class as rate-limiter-flexible sees it. The gateway consumes with
 * it and billing reads with it, so both agree on keys and windows. The count in Redis does not
 * depend on `points` (the limit): counters of different limits share keys, and only the verdict
 * on a consume differs.
 */
export function requestCounter(redis: Redis, redisPrefix: string, routeClass: LimitedClass, points: number): RateLimiterRedis {
  return new RateLimiterRedis({
    storeClient: redis,
    keyPrefix: requestCounterPrefix(redisPrefix, routeClass),
    points,
    duration: RATE_LIMIT_WINDOW_SECONDS,
  });
}

import type { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { UnavailableError } from '../../../core/errors';
import { aiTokenMinute, usageKeys, type RouteClass } from '../../../core/rate-limits';
import type { Redis } from '../../../core/redis';
import { requestCounter } from '../../../core/request-counter';

/** Raw counters of a workspace, as Redis holds them now. */
export interface UsageCounters {
  readRequests: WindowCount;
  writeRequests: WindowCount;
  concurrentSandboxes: number;
  concurrentBrowserSessions: number;
  aiTokens: WindowCount;
}

export interface WindowCount {
  used: number;
  /** Milliseconds until the window ends; 0 when none is open. */
  msToReset: number;
}

/**
 * Reads a workspace's live usage from Redis: request counts from the keys the gateway's limiter
 * writes (same prefix, same library), concurrency and AI-token counters from the keys their
 * domains maintain (core/rate-limits.ts `usageKeys`). Billing never writes any of them.
 */
export class RateLimitUsageReader {
  private readonly counters: Record<RouteClass, RateLimiterRedis>;

  constructor(
    private readonly redis: Redis,
    private readonly redisPrefix: string,
  ) {
    // The limit (`points`) plays no part in reading a count.
    this.counters = { read: requestCounter(redis, redisPrefix, 'read', 1), write: requestCounter(redis, redisPrefix, 'write', 1) };
  }

  async read(workspaceId: string, now = Date.now()): Promise<UsageCounters> {
    const keys = usageKeys(this.redisPrefix, workspaceId);
    try {
      const [read, write, [sandboxes, browsers, aiTokens]] = await Promise.all([
        this.counters.read.get(workspaceId),
        this.counters.write.get(workspaceId),
        this.redis.mget(keys.concurrentSandboxes, keys.concurrentBrowserSessions, keys.aiTokens(aiTokenMinute(now))),
      ]);
      return {
        readRequests: windowOf(read),
        writeRequests: windowOf(write),
        concurrentSandboxes: count(sandboxes),
        concurrentBrowserSessions: count(browsers),
        // The AI-token window is the calendar minute the counter is keyed by.
        aiTokens: { used: count(aiTokens), msToReset: 60_000 - (now % 60_000) },
      };
    } catch {
      throw new UnavailableError('Usage counters are unavailable right now; try again shortly');
    }
  }
}

function windowOf(res: RateLimiterRes | null): WindowCount {
  if (!res) return { used: 0, msToReset: 0 };
  return { used: Math.max(0, res.consumedPoints), msToReset: Math.max(0, res.msBeforeNext) };
}

/** A counter's value; missing, garbled or negative (a DECR past zero) reads as 0. */
function count(raw: string | null): number {
  const value = raw === null ? 0 : Number.parseInt(raw, 10);
  return Number.isFinite(value) && value > 0 ? value : 0;
}

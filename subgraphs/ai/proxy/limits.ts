import type { DataSource } from 'typeorm';
import type { Redis } from '../../../core/redis';
import { aiRedisKeys } from '../model/shared';
import type { CachedKey } from './types';

/** Why a key may not send a request now. */
export interface LimitRefusal {
  kind: 'rate_limit' | 'budget';
  status: 429 | 402;
  message: string;
  /** Seconds, for `retry-after` (rate limits only). */
  retryAfter?: number;
}

/** Longest wait for the limit counters; past it (Redis unreachable) the request goes on (fail open). */
const CHECK_TIMEOUT_MS = 1_000;

/** A month's spend counter outlives the month a little, so a late request still finds it. */
const SPEND_TTL_SECONDS = 40 * 24 * 3600;

/** `YYYY-MM` of an instant, UTC (the key-spend counter's month). */
export function monthOf(now = Date.now()): string {
  return new Date(now).toISOString().slice(0, 7);
}

export function minuteOf(now = Date.now()): number {
  return Math.floor(now / 60_000);
}

/**
 * A gateway key's own limits, checked before forwarding: requests per minute (INCR of this
 * minute's counter), tokens per minute (this minute's counter, added to after each request) and
 * the monthly budget (the month's spend counter). One pipelined round trip, and only for keys
 * that have a limit. The spend counter is seeded once per month from `SUM(cost_usd)` of the
 * key's usage when missing (a new month, or a flushed Redis).
 */
export class KeyLimits {
  private readonly keys: ReturnType<typeof aiRedisKeys>;

  constructor(
    private readonly redis: Redis,
    private readonly dataSource: DataSource,
    redisPrefix: string,
    private readonly onUnavailable: (err: unknown) => void = () => undefined,
  ) {
    this.keys = aiRedisKeys(redisPrefix);
  }

  /** Null when the key may send now. Fails open (null, logged) when Redis or the seed query does not answer in time. */
  async check(key: CachedKey, now = Date.now()): Promise<LimitRefusal | null> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), CHECK_TIMEOUT_MS);
    });
    try {
      const result = await Promise.race([this.evaluate(key, now), timeout]);
      if (result === 'timeout') {
        this.onUnavailable(new Error(`key limits did not answer within ${CHECK_TIMEOUT_MS} ms`));
        return null;
      }
      return result;
    } catch (err) {
      this.onUnavailable(err);
      return null;
    } finally {
      clearTimeout(timer);
    }
  }

  private async evaluate(key: CachedKey, now: number): Promise<LimitRefusal | null> {
    const minute = minuteOf(now);
    const month = monthOf(now);
    const pipeline = this.redis.pipeline();
    const rpm = key.requestsPerMinute !== null;
    const tpm = key.tokensPerMinute !== null;
    const budget = key.monthlyBudgetUsd !== null;
    if (rpm) {
      const counter = this.keys.keyRequests(key.id, minute);
      pipeline.incr(counter).expire(counter, 60);
    }
    if (tpm) pipeline.get(this.keys.keyTokens(key.id, minute));
    if (budget) pipeline.get(this.keys.keySpend(key.id, month));
    const results = (await pipeline.exec()) ?? [];
    let i = 0;
    const retryAfter = Math.max(1, 60 - Math.floor((now / 1000) % 60));
    if (rpm) {
      const [err, count] = results[i];
      i += 2;
      if (!err && Number(count) > key.requestsPerMinute!) {
        return { kind: 'rate_limit', status: 429, message: `This key is limited to ${key.requestsPerMinute} requests per minute.`, retryAfter };
      }
    }
    if (tpm) {
      const [err, tokens] = results[i++];
      if (!err && Number(tokens ?? 0) >= key.tokensPerMinute!) {
        return { kind: 'rate_limit', status: 429, message: `This key is limited to ${key.tokensPerMinute} tokens per minute.`, retryAfter };
      }
    }
    if (budget) {
      const [err, spent] = results[i++];
      const spend = err ? 0 : spent === null ? await this.seedSpend(key.id, month) : Number(spent);
      if (spend >= key.monthlyBudgetUsd!) {
        return { kind: 'budget', status: 402, message: `This key has used its monthly budget of $${key.monthlyBudgetUsd} (${month}).` };
      }
    }
    return null;
  }

  /** The month's spend so far from ai.usage, stored unless another request stored it first. */
  private async seedSpend(keyId: string, month: string): Promise<number> {
    const start = new Date(`${month}-01T00:00:00.000Z`);
    const [row] = (await this.dataSource.query(
      `SELECT COALESCE(SUM(cost_usd), 0)::float8 AS spent FROM "ai"."usage" WHERE key_id = $1 AND created_at >= $2 AND created_at < $3`,
      [keyId, start, new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1))],
    )) as Array<{ spent: number }>;
    const spent = Number(row?.spent ?? 0);
    const counter = this.keys.keySpend(keyId, month);
    const stored = await this.redis.set(counter, String(spent), 'EX', SPEND_TTL_SECONDS, 'NX');
    if (stored === 'OK') return spent;
    return Number((await this.redis.get(counter)) ?? spent);
  }
}

import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Logger } from '../../../core/logger';
import { aiTokenMinute, usageKeys } from '../../../core/rate-limits';
import type { Redis } from '../../../core/redis';
import { aiRedisKeys, realtimeBucket } from '../model/shared';
import { minuteOf, monthOf } from './limits';
import type { Operation } from './types';

/** One `ai.usage` row. */
export interface UsageRecord {
  requestId: string;
  workspaceId: string;
  keyId: string | null;
  poolId: string | null;
  upstreamId: string | null;
  platformModelId: string | null;
  /** openai | anthropic | gemini | playground */
  clientApi: string;
  upstreamApi: string | null;
  operation: Operation;
  model: string;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  costUsd: number;
  latencyMs: number;
  ttfbMs: number | null;
  status: number;
  streamed: boolean;
  attempts: number;
  error: string | null;
  createdAt: Date;
}

/** One `ai.conversations` row. */
export interface ConversationRecord {
  requestId: string;
  workspaceId: string;
  keyId: string | null;
  poolId: string | null;
  model: string;
  requestBody: unknown;
  responseBody: unknown;
  status: number;
}

/** Which of a key's own counters the request adds to (only those with a limit are kept). */
export interface KeyCounters {
  keyId: string;
  tokens: boolean;
  spend: boolean;
}

export interface UsageRecorderOptions {
  dataSource: DataSource;
  redis: Redis;
  redisPrefix: string;
  logger: Logger;
  /** Conversation bodies larger than this are stored as `{ truncated: true, bytes }`. */
  conversationMaxBytes: number;
  /** Longest wait of a row before its batch is written, ms. @defaultValue 100 */
  flushIntervalMs?: number;
  /** Rows that trigger a write at once. @defaultValue 200 */
  batchSize?: number;
}

/** Rows kept while the database is unreachable; past this the oldest are dropped (and logged). */
const MAX_BUFFERED = 100_000;
const KEY_SPEND_TTL_SECONDS = 40 * 24 * 3600;
const LAST_USED_EVERY_MS = 60_000;

interface RealtimeSums {
  requests: number;
  errors: number;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  costMicroUsd: number;
}

/**
 * Records usage off the hot path. Rows and conversations are buffered and written in batches
 * (every `flushIntervalMs` or `batchSize` rows) with their metering events, in one statement:
 * `INSERT … ON CONFLICT (request_id) DO NOTHING`, and metering events only for the rows that
 * statement inserted, so a batch retried after an unclear failure never counts twice. The Redis
 * counters (realtime bucket, workspace AI tokens, key tokens and spend) are summed in memory and
 * sent as one pipeline per batch. `close()` writes what is left.
 */
export class UsageRecorder {
  private rows: UsageRecord[] = [];
  private conversations: ConversationRecord[] = [];
  private realtime = new Map<string, RealtimeSums>();
  private increments = new Map<string, { by: number; ttl: number }>();
  private floatIncrements = new Map<string, number>();
  private touchedKeys = new Set<string>();
  private readonly lastTouched = new Map<string, number>();
  private readonly recentIds = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private failures = 0;
  private closed = false;
  private readonly flushIntervalMs: number;
  private readonly batchSize: number;
  private readonly keys: ReturnType<typeof aiRedisKeys>;

  constructor(private readonly options: UsageRecorderOptions) {
    this.flushIntervalMs = options.flushIntervalMs ?? 100;
    this.batchSize = options.batchSize ?? 200;
    this.keys = aiRedisKeys(options.redisPrefix);
  }

  /**
   * The request id a usage row is stored under: the gateway's, unless this process already used
   * it (a client may choose its X-Request-Id), then a suffixed one, so no request loses its row.
   */
  requestIdFor(given: string | null | undefined): string {
    let id = given || `aireq_${randomBytes(12).toString('base64url')}`;
    if (this.recentIds.has(id)) id = `${id}.${randomBytes(6).toString('base64url')}`;
    this.recentIds.add(id);
    if (this.recentIds.size > 50_000) {
      // Set iterates in insertion order: forget the oldest half.
      let n = 25_000;
      for (const old of this.recentIds) {
        if (n-- <= 0) break;
        this.recentIds.delete(old);
      }
    }
    return id;
  }

  record(row: UsageRecord, counters: KeyCounters | null, conversation?: ConversationRecord): void {
    if (this.rows.length >= MAX_BUFFERED) {
      const dropped = this.rows.splice(0, this.batchSize);
      this.options.logger.error('ai usage: buffer full, oldest rows dropped', { dropped: dropped.length });
    }
    this.rows.push(row);
    if (conversation) this.conversations.push(this.bounded(conversation));
    this.count(row, counters);
    if (row.keyId) this.touch(row.keyId, row.createdAt.getTime());
    // After close(), a late row (a request cut by the shutdown) is written at once, best effort.
    if (this.rows.length >= this.batchSize || this.closed) void this.flush().catch(() => undefined);
    else this.schedule();
  }

  /** Writes everything buffered now (and waits for a write in progress). */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    while (this.flushing) await this.flushing;
    if (!this.hasWork()) return;
    this.flushing = this.write().finally(() => {
      this.flushing = null;
    });
    await this.flushing;
    if (this.hasWork() && !this.closed) this.schedule();
  }

  /** Flushes until empty (bounded retries), then stops scheduling. */
  async close(): Promise<void> {
    this.closed = true;
    for (let i = 0; i < 5 && this.hasWork(); i++) {
      await this.flush();
      if (this.hasWork()) await new Promise((resolve) => setTimeout(resolve, 100 * (i + 1)));
    }
    if (this.timer) clearTimeout(this.timer);
    if (this.rows.length) this.options.logger.error('ai usage: rows not written at close', { rows: this.rows.length });
  }

  get pending(): number {
    return this.rows.length;
  }

  private hasWork(): boolean {
    return this.rows.length > 0 || this.conversations.length > 0 || this.realtime.size > 0 || this.increments.size > 0 || this.floatIncrements.size > 0 || this.touchedKeys.size > 0;
  }

  private schedule(): void {
    if (this.timer || this.closed) return;
    // Back off while the database fails: 100 ms, 200 ms, … up to 5 s.
    const delay = this.failures ? Math.min(5_000, this.flushIntervalMs * 2 ** this.failures) : this.flushIntervalMs;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, delay);
    this.timer.unref?.();
  }

  private count(row: UsageRecord, counters: KeyCounters | null): void {
    const now = row.createdAt.getTime();
    const rtKey = this.keys.realtime(row.workspaceId, realtimeBucket(now));
    let sums = this.realtime.get(rtKey);
    if (!sums) this.realtime.set(rtKey, (sums = { requests: 0, errors: 0, inputTokens: 0, outputTokens: 0, cachedTokens: 0, costMicroUsd: 0 }));
    sums.requests++;
    if (row.status >= 400 || row.error) sums.errors++;
    sums.inputTokens += row.inputTokens;
    sums.outputTokens += row.outputTokens;
    sums.cachedTokens += row.cachedTokens;
    sums.costMicroUsd += Math.round(row.costUsd * 1e6);
    const tokens = row.inputTokens + row.outputTokens;
    if (tokens > 0) {
      this.increment(usageKeys(this.options.redisPrefix, row.workspaceId).aiTokens(aiTokenMinute(now)), tokens, 120);
      if (counters?.tokens) this.increment(this.keys.keyTokens(counters.keyId, minuteOf(now)), tokens, 120);
    }
    if (counters?.spend && row.costUsd > 0) {
      const spendKey = this.keys.keySpend(counters.keyId, monthOf(now));
      this.floatIncrements.set(spendKey, (this.floatIncrements.get(spendKey) ?? 0) + row.costUsd);
    }
  }

  private increment(key: string, by: number, ttl: number): void {
    const current = this.increments.get(key);
    if (current) current.by += by;
    else this.increments.set(key, { by, ttl });
  }

  private touch(keyId: string, now: number): void {
    const last = this.lastTouched.get(keyId);
    if (last !== undefined && now - last < LAST_USED_EVERY_MS) return;
    this.lastTouched.set(keyId, now);
    if (this.lastTouched.size > 50_000) this.lastTouched.clear();
    this.touchedKeys.add(keyId);
  }

  private bounded(conversation: ConversationRecord): ConversationRecord {
    const limit = this.options.conversationMaxBytes;
    const fit = (body: unknown): unknown => {
      if (body === undefined || body === null) return null;
      const bytes = Buffer.byteLength(JSON.stringify(body));
      return bytes > limit ? { truncated: true, bytes } : body;
    };
    return { ...conversation, requestBody: fit(conversation.requestBody) ?? {}, responseBody: fit(conversation.responseBody) };
  }

  private async write(): Promise<void> {
    const rows = this.rows;
    const conversations = this.conversations;
    const realtime = this.realtime;
    const increments = this.increments;
    const floatIncrements = this.floatIncrements;
    const touched = this.touchedKeys;
    this.rows = [];
    this.conversations = [];
    this.realtime = new Map();
    this.increments = new Map();
    this.floatIncrements = new Map();
    this.touchedKeys = new Set();

    // Redis first: it is what limits and live usage read, and it is fast.
    if (realtime.size || increments.size || floatIncrements.size) {
      const pipeline = this.options.redis.pipeline();
      for (const [key, sums] of realtime) {
        for (const [field, value] of Object.entries(sums)) if (value) pipeline.hincrby(key, field, value);
        pipeline.expire(key, 180);
      }
      for (const [key, { by, ttl }] of increments) pipeline.incrby(key, by).expire(key, ttl);
      for (const [key, by] of floatIncrements) pipeline.incrbyfloat(key, by).expire(key, KEY_SPEND_TTL_SECONDS);
      // Counters are best effort (the rows are the record); a failed pipeline is logged, not retried.
      // Bounded wait: an unreachable Redis (commands queue until it is back) must not hold the rows.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        pipeline.exec().catch((err: unknown) => this.options.logger.warn('ai usage: redis counters failed', { err })),
        new Promise((resolve) => {
          timer = setTimeout(resolve, 1_000);
        }),
      ]);
      clearTimeout(timer);
    }

    try {
      if (rows.length) await insertUsage(this.options.dataSource, rows);
      if (conversations.length) await insertConversations(this.options.dataSource, conversations);
      this.failures = 0;
    } catch (err) {
      this.failures++;
      this.options.logger.error('ai usage: batch write failed; will retry', { err, rows: rows.length });
      // Put them back in front (ON CONFLICT makes a retry of a half-written batch safe).
      this.rows = rows.concat(this.rows);
      this.conversations = conversations.concat(this.conversations);
      return;
    }
    if (touched.size) {
      await this.options.dataSource
        .query(`UPDATE "ai"."gateway_keys" SET last_used_at = now() WHERE id = ANY($1::text[])`, [[...touched]])
        .catch((err: unknown) => this.options.logger.warn('ai usage: last_used_at update failed', { err }));
    }
  }
}

const USAGE_SQL = `
  WITH r AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                         $9::text[], $10::text[], $11::int[], $12::int[], $13::int[], $14::numeric[], $15::int[], $16::int[],
                         $17::int[], $18::bool[], $19::int[], $20::text[], $21::timestamptz[])
      AS t(request_id, workspace_id, key_id, pool_id, upstream_id, platform_model_id, client_api, upstream_api,
           operation, model, input_tokens, output_tokens, cached_tokens, cost_usd, latency_ms, ttfb_ms,
           status, streamed, attempts, error, created_at)
  ), ins AS (
    INSERT INTO "ai"."usage" (request_id, workspace_id, key_id, pool_id, upstream_id, platform_model_id, client_api, upstream_api,
                              operation, model, input_tokens, output_tokens, cached_tokens, cost_usd, latency_ms, ttfb_ms,
                              status, streamed, attempts, error, created_at)
    SELECT * FROM r
    ON CONFLICT (request_id) DO NOTHING
    RETURNING request_id, workspace_id, input_tokens, output_tokens, cached_tokens, cost_usd, created_at
  )
  INSERT INTO "ai"."metering_events" (idempotency_key, workspace_id, kind, quantity, request_id, created_at)
  SELECT ins.request_id || ':' || m.suffix, ins.workspace_id, m.kind, m.quantity, ins.request_id, ins.created_at
    FROM ins
   CROSS JOIN LATERAL (VALUES ('input_tokens', 'ai_input_tokens', ins.input_tokens::float8),
                              ('output_tokens', 'ai_output_tokens', ins.output_tokens::float8),
                              ('cached_tokens', 'ai_cached_tokens', ins.cached_tokens::float8),
                              ('cost_usd', 'ai_cost_usd', ins.cost_usd::float8)) AS m(suffix, kind, quantity)
   WHERE m.quantity > 0
  ON CONFLICT (idempotency_key) DO NOTHING`;

async function insertUsage(dataSource: DataSource, rows: UsageRecord[]): Promise<void> {
  const col = <T>(pick: (r: UsageRecord) => T): T[] => rows.map(pick);
  await dataSource.query(USAGE_SQL, [
    col((r) => r.requestId),
    col((r) => r.workspaceId),
    col((r) => r.keyId),
    col((r) => r.poolId),
    col((r) => r.upstreamId),
    col((r) => r.platformModelId),
    col((r) => r.clientApi),
    col((r) => r.upstreamApi),
    col((r) => r.operation),
    col((r) => r.model),
    col((r) => Math.max(0, Math.round(r.inputTokens))),
    col((r) => Math.max(0, Math.round(r.outputTokens))),
    col((r) => Math.max(0, Math.round(r.cachedTokens))),
    col((r) => Math.max(0, r.costUsd).toFixed(8)),
    col((r) => Math.max(0, Math.round(r.latencyMs))),
    col((r) => (r.ttfbMs === null ? null : Math.max(0, Math.round(r.ttfbMs)))),
    col((r) => r.status),
    col((r) => r.streamed),
    col((r) => r.attempts),
    col((r) => (r.error === null ? null : r.error.slice(0, 2000))),
    col((r) => r.createdAt),
  ]);
}

async function insertConversations(dataSource: DataSource, rows: ConversationRecord[]): Promise<void> {
  await dataSource.query(
    `INSERT INTO "ai"."conversations" (request_id, workspace_id, key_id, pool_id, model, request_body, response_body, status)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::jsonb[], $7::jsonb[], $8::int[])
     ON CONFLICT (request_id) DO NOTHING`,
    [
      rows.map((r) => r.requestId),
      rows.map((r) => r.workspaceId),
      rows.map((r) => r.keyId),
      rows.map((r) => r.poolId),
      rows.map((r) => r.model),
      rows.map((r) => JSON.stringify(r.requestBody ?? {})),
      rows.map((r) => (r.responseBody === null || r.responseBody === undefined ? null : JSON.stringify(r.responseBody))),
      rows.map((r) => r.status),
    ],
  );
}

import type { DataSource } from 'typeorm';
import type { Redis } from '../../../core/redis';
import { aiRedisKeys, realtimeBucket, REALTIME_BUCKET_SECONDS } from '../model/shared';

export const USAGE_GROUPS = ['day', 'model', 'key', 'upstream', 'pool', 'none'] as const;
export type UsageGroupBy = (typeof USAGE_GROUPS)[number];

/** Most groups one report carries (days of a 366-day window fit). */
export const MAX_USAGE_GROUPS = 1000;

/** The SQL of each grouping; fixed strings, never caller input. */
const GROUP_EXPRESSIONS: Record<Exclude<UsageGroupBy, 'none'>, string> = {
  day: `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
  model: 'model',
  key: 'key_id',
  // Requests served by a platform model have no upstream: its id stands in.
  upstream: 'COALESCE(upstream_id, platform_model_id)',
  pool: 'pool_id',
};

export interface UsageFilter {
  workspaceId: string;
  from: Date;
  to: Date;
  model?: string;
  keyId?: string;
  upstreamId?: string;
  poolId?: string;
}

export interface UsageRow {
  key: string | null;
  requests: number;
  errors: number;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  costUsd: number;
  avgLatencyMs: number | null;
  avgTtfbMs: number | null;
}

const AGGREGATES = `
  count(*)::int AS "requests",
  (count(*) FILTER (WHERE status >= 400))::int AS "errors",
  COALESCE(sum(input_tokens), 0)::float8 AS "inputTokens",
  COALESCE(sum(output_tokens), 0)::float8 AS "outputTokens",
  COALESCE(sum(cached_tokens), 0)::float8 AS "cachedTokens",
  COALESCE(sum(cost_usd), 0)::float8 AS "costUsd",
  avg(latency_ms)::float8 AS "avgLatencyMs",
  avg(ttfb_ms)::float8 AS "avgTtfbMs"`;

/** Reads of `ai.usage`; the aggregates are computed by PostgreSQL in one pass. */
export class UsageRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * The totals and, unless `none`, the groups, in one scan (GROUPING SETS: the empty set is the
   * total). The window is [from, to).
   */
  async aggregate(filter: UsageFilter, groupBy: UsageGroupBy): Promise<{ totals: UsageRow; groups: UsageRow[] }> {
    const params: unknown[] = [filter.workspaceId, filter.from, filter.to];
    const where = ['workspace_id = $1', 'created_at >= $2', 'created_at < $3'];
    for (const [column, value] of [['model', filter.model], ['key_id', filter.keyId], ['upstream_id', filter.upstreamId], ['pool_id', filter.poolId]] as const) {
      if (value === undefined) continue;
      params.push(value);
      where.push(`${column} = $${params.length}`);
    }
    if (groupBy === 'none') {
      const [totals] = (await this.dataSource.query(`SELECT NULL AS "key", ${AGGREGATES} FROM "ai"."usage" WHERE ${where.join(' AND ')}`, params)) as UsageRow[];
      return { totals, groups: [] };
    }
    const expression = GROUP_EXPRESSIONS[groupBy];
    const order = groupBy === 'day' ? '"key" ASC' : '"requests" DESC, "key" ASC NULLS LAST';
    const rows = (await this.dataSource.query(
      `SELECT GROUPING(${expression}) = 1 AS "isTotal", ${expression} AS "key", ${AGGREGATES}
       FROM "ai"."usage" WHERE ${where.join(' AND ')}
       GROUP BY GROUPING SETS ((), (${expression}))
       ORDER BY "isTotal" DESC, ${order}
       LIMIT ${MAX_USAGE_GROUPS + 1}`,
      params,
    )) as Array<UsageRow & { isTotal: boolean }>;
    const [total, ...groups] = rows.map(({ isTotal, ...row }) => (void isTotal, row));
    return { totals: total, groups };
  }
}

/** Live counters of the last minute, as the proxy writes them (10-second Redis hashes). */
export interface RealtimeTotals {
  requests: number;
  errors: number;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  costMicroUsd: number;
}

/** Buckets summed: six of ten seconds, the current one included. */
export const REALTIME_BUCKETS = 6;

export class RealtimeUsageReader {
  private readonly keys: ReturnType<typeof aiRedisKeys>;

  constructor(
    private readonly redis: Redis,
    redisPrefix: string,
  ) {
    this.keys = aiRedisKeys(redisPrefix);
  }

  get windowSeconds(): number {
    return REALTIME_BUCKETS * REALTIME_BUCKET_SECONDS;
  }

  async lastMinute(workspaceId: string, now = Date.now()): Promise<RealtimeTotals> {
    const current = realtimeBucket(now);
    const pipeline = this.redis.pipeline();
    for (let i = 0; i < REALTIME_BUCKETS; i++) pipeline.hgetall(this.keys.realtime(workspaceId, current - i));
    const results = (await pipeline.exec()) ?? [];
    const totals: RealtimeTotals = { requests: 0, errors: 0, inputTokens: 0, outputTokens: 0, cachedTokens: 0, costMicroUsd: 0 };
    for (const [err, hash] of results) {
      if (err) throw err;
      for (const field of Object.keys(totals) as Array<keyof RealtimeTotals>) {
        const value = Number((hash as Record<string, string>)[field] ?? 0);
        if (Number.isFinite(value)) totals[field] += value;
      }
    }
    return totals;
  }
}

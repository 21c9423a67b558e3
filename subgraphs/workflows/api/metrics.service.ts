import type { DataSource } from 'typeorm';
import type { RequestContext } from '../../../core/context';
import { ValidationError } from '../../../core/errors';
import type { WorkflowService } from './workflow.service';
import type { MetricsArgs, TimeseriesArgs, WorkflowMetrics, WorkflowMetricsTimeseries } from './workflow.types';

export const INTERVALS: Record<string, number> = { '1m': 60, '5m': 300, '15m': 900, '1h': 3600, '6h': 21600, '1d': 86400 };
export const MAX_BUCKETS = 1000;
const DEFAULT_WINDOW_MS = 24 * 3600 * 1000;

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const int = (v: unknown): number => Number(v ?? 0);

/** Execution counts and durations of one workflow, computed in SQL over executions created in [from, to). */
export class MetricsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly workflows: WorkflowService,
  ) {}

  async metrics(ctx: RequestContext, args: MetricsArgs): Promise<WorkflowMetrics> {
    const workflow = await this.workflows.load(ctx, args.id, 'viewer');
    const { from, to } = window(args);
    const [totals] = await this.dataSource.query(
      `SELECT count(*) AS total,
              count(*) FILTER (WHERE status = 'queued') AS queued,
              count(*) FILTER (WHERE status = 'running') AS running,
              count(*) FILTER (WHERE status = 'waiting') AS waiting,
              count(*) FILTER (WHERE status = 'succeeded') AS succeeded,
              count(*) FILTER (WHERE status = 'failed') AS failed,
              count(*) FILTER (WHERE status = 'cancelled') AS cancelled,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) FILTER (WHERE status IN ('succeeded','failed','cancelled') AND duration_ms IS NOT NULL) AS p50,
              percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms) FILTER (WHERE status IN ('succeeded','failed','cancelled') AND duration_ms IS NOT NULL) AS p95
         FROM "workflows"."executions"
        WHERE workflow_id = $1 AND created_at >= $2 AND created_at < $3`,
      [workflow.id, from, to],
    );
    const nodes = await this.dataSource.query(
      `SELECT s.node_id, s.node_type, count(*) AS runs,
              count(*) FILTER (WHERE s.status = 'failed') AS failures,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY s.duration_ms) FILTER (WHERE s.duration_ms IS NOT NULL) AS p50,
              percentile_cont(0.95) WITHIN GROUP (ORDER BY s.duration_ms) FILTER (WHERE s.duration_ms IS NOT NULL) AS p95
         FROM "workflows"."execution_steps" s
         JOIN "workflows"."executions" e ON e.id = s.execution_id
        WHERE e.workflow_id = $1 AND e.created_at >= $2 AND e.created_at < $3
        GROUP BY s.node_id, s.node_type
        ORDER BY s.node_id, s.node_type`,
      [workflow.id, from, to],
    );
    const finished = int(totals.succeeded) + int(totals.failed) + int(totals.cancelled);
    return {
      from: from.toISOString(),
      to: to.toISOString(),
      total: int(totals.total),
      byStatus: { queued: int(totals.queued), running: int(totals.running), waiting: int(totals.waiting), succeeded: int(totals.succeeded), failed: int(totals.failed), cancelled: int(totals.cancelled) },
      successRate: finished ? int(totals.succeeded) / finished : null,
      durationP50Ms: num(totals.p50),
      durationP95Ms: num(totals.p95),
      nodes: nodes.map((n: Record<string, unknown>) => ({ nodeId: n.node_id, nodeType: n.node_type, runs: int(n.runs), failures: int(n.failures), durationP50Ms: num(n.p50), durationP95Ms: num(n.p95) })),
    };
  }

  /** Buckets of `interval` aligned to the epoch, from the one holding `from` to the one holding `to`; empty ones included. */
  async timeseries(ctx: RequestContext, args: TimeseriesArgs): Promise<WorkflowMetricsTimeseries> {
    const interval = args.interval ?? '1h';
    const seconds = INTERVALS[interval];
    if (!seconds) throw new ValidationError(`interval must be one of ${Object.keys(INTERVALS).join(', ')}`, { field: 'interval' });
    const workflow = await this.workflows.load(ctx, args.id, 'viewer');
    const { from, to } = window(args);
    const step = seconds * 1000;
    const first = Math.floor(from.getTime() / step) * step;
    const buckets = Math.ceil((to.getTime() - first) / step);
    if (buckets > MAX_BUCKETS) throw new ValidationError(`from..to holds ${buckets} buckets of ${interval}; at most ${MAX_BUCKETS}: use a longer interval or a shorter window`, { field: 'interval' });
    const rows = await this.dataSource.query(
      `SELECT b.at,
              count(e.id) AS total,
              count(e.id) FILTER (WHERE e.status = 'succeeded') AS succeeded,
              count(e.id) FILTER (WHERE e.status = 'failed') AS failed,
              count(e.id) FILTER (WHERE e.status = 'cancelled') AS cancelled,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY e.duration_ms) FILTER (WHERE e.status IN ('succeeded','failed','cancelled') AND e.duration_ms IS NOT NULL) AS p50
         FROM generate_series($2::timestamptz, $3::timestamptz, make_interval(secs => $4)) AS b(at)
         LEFT JOIN "workflows"."executions" e
           ON e.workflow_id = $1 AND e.created_at >= b.at AND e.created_at < b.at + make_interval(secs => $4)
          AND e.created_at >= $5 AND e.created_at < $6
        GROUP BY b.at
        ORDER BY b.at`,
      [workflow.id, new Date(first), new Date(first + (buckets - 1) * step), seconds, from, to],
    );
    return {
      from: from.toISOString(),
      to: to.toISOString(),
      interval,
      buckets: rows.map((r: Record<string, unknown>) => ({
        at: new Date(r.at as string | Date).toISOString(),
        total: int(r.total),
        succeeded: int(r.succeeded),
        failed: int(r.failed),
        cancelled: int(r.cancelled),
        durationP50Ms: num(r.p50),
      })),
    };
  }
}

function parseTime(value: string | null | undefined, field: string): Date | null {
  if (value === null || value === undefined || value === '') return null;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw new ValidationError(`${field} must be an ISO 8601 time`, { field });
  return date;
}

function window(args: { from?: string | null; to?: string | null }): { from: Date; to: Date } {
  const to = parseTime(args.to, 'to') ?? new Date();
  const from = parseTime(args.from, 'from') ?? new Date(to.getTime() - DEFAULT_WINDOW_MS);
  if (from.getTime() >= to.getTime()) throw new ValidationError('from must be before to', { field: 'from' });
  return { from, to };
}

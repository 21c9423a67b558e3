import type { DataSource, Repository } from 'typeorm';
import type { Page } from '../../../core/pagination';
import { FunnelEntity, type FunnelStep } from '../model/entities';
import { reportQuery } from './report-query';
import { pathPattern } from './validation';

export type FunnelPatch = Partial<Pick<FunnelEntity, 'name' | 'steps' | 'windowSeconds'>>;

export interface FunnelStepCount {
  /** 1-based. */
  step: number;
  visitors: number;
  /** Median seconds from the previous step; null on the first and when nobody reached it. */
  median: number | null;
}

/** The only code that touches `analytics.funnels`, and the funnel analysis over `analytics.events`. */
export class FunnelRepository {
  private readonly rows: Repository<FunnelEntity>;

  constructor(private readonly dataSource: DataSource) {
    this.rows = dataSource.getRepository(FunnelEntity);
  }

  async insert(row: FunnelEntity): Promise<void> {
    await this.rows.insert(row as never);
  }

  findById(id: string): Promise<FunnelEntity | null> {
    return this.rows.findOneBy({ id });
  }

  /** Newest first, of a workspace or of one installation (in its workspace, so ix_funnels_workspace serves both). */
  list(filter: { workspaceId: string; installationId?: string }, page: Page): Promise<[FunnelEntity[], number]> {
    return this.rows.findAndCount({ where: filter, order: { createdAt: 'DESC', id: 'ASC' }, skip: page.offset, take: page.limit });
  }

  async update(id: string, patch: FunnelPatch, updatedAt: Date): Promise<void> {
    await this.rows.update({ id }, { ...patch, steps: patch.steps as never, updatedAt });
  }

  async delete(id: string): Promise<boolean> {
    const result = await this.rows.delete({ id });
    return (result.affected ?? 0) > 0;
  }

  /**
   * Visitors reaching each step in order, in one statement:
   * - `matched`: the events that match any step, read once (by name, on the
   *   (installation_id, name, ts) index) from `from` to `to` + the window, one flag per step;
   * - `s1`: each visitor's first step-1 event in [from, to);
   * - `sK`: per visitor of s(K-1), the earliest step-K event after step K-1's and no later than
   *   the first step's time + the window (the earliest is never worse for the steps after it).
   * Then one row per step: how many visitors, and the median seconds from the previous step.
   */
  async analyze(installationId: string, steps: FunnelStep[], windowSeconds: number, from: Date, to: Date): Promise<FunnelStepCount[]> {
    const params: unknown[] = [installationId, from, to, windowSeconds];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    const names = new Set<string>();
    const flags = steps.map((step, i) => {
      if (step.type === 'event') {
        names.add(step.match);
        return `(name = ${param(step.match)}) AS m${i + 1}`;
      }
      names.add('$pageview');
      const exact = !step.match.includes('*');
      return `(name = '$pageview' AND path ${exact ? '=' : 'LIKE'} ${param(exact ? step.match : pathPattern(step.match))}) AS m${i + 1}`;
    });
    const namesParam = param([...names]);
    const withinWindow = `make_interval(secs => $4)`;
    const stepTables = steps.slice(1).map(
      (_, i) => `s${i + 2} AS (
         SELECT p.visitor_id, p.first_at, p.at AS previous_at, min(m.ts) AS at
           FROM s${i + 1} p
           JOIN matched m ON m.visitor_id = p.visitor_id AND m.m${i + 2} AND m.ts > p.at AND m.ts <= p.first_at + ${withinWindow}
          GROUP BY p.visitor_id, p.first_at, p.at
       )`,
    );
    const counts = steps.map((_, i) =>
      i === 0
        ? `SELECT 1 AS step, count(*)::int AS visitors, NULL::float8 AS median FROM s1`
        : `SELECT ${i + 1}, count(*)::int, percentile_cont(0.5) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM at - previous_at))::float8 FROM s${i + 1}`,
    );
    return reportQuery<FunnelStepCount>(
      this.dataSource,
      `WITH matched AS MATERIALIZED (
         SELECT * FROM (
           SELECT visitor_id, ts, ${flags.join(', ')}
             FROM "analytics"."events"
            WHERE installation_id = $1 AND name = ANY(${namesParam}::text[]) AND ts >= $2 AND ts < $3::timestamptz + ${withinWindow}
         ) e
          WHERE ${steps.map((_, i) => `m${i + 1}`).join(' OR ')}
       ),
       s1 AS (
         SELECT visitor_id, min(ts) AS first_at, min(ts) AS at FROM matched WHERE m1 AND ts < $3 GROUP BY visitor_id
       ),
       ${stepTables.join(',\n       ')}
       ${counts.join('\n       UNION ALL ')}
       ORDER BY step`,
      params,
    );
  }
}

import type { DataSource, Repository } from 'typeorm';
import type { PlanName, RateLimitValues } from '../../../core/rate-limits';
import { WorkspaceRateLimitEntity } from './rate-limit.entity';

/** The only code that touches `billing.workspace_rate_limits`. */
export class RateLimitRepository {
  private readonly rows: Repository<WorkspaceRateLimitEntity>;

  constructor(dataSource: DataSource) {
    this.rows = dataSource.getRepository(WorkspaceRateLimitEntity);
  }

  async find(workspaceId: string): Promise<WorkspaceRateLimitEntity | null> {
    return this.rows.findOne({ where: { workspaceId } });
  }

  /**
   * The workspace's row, inserting `initial` when there is none. Concurrent first reads insert
   * once (ON CONFLICT DO NOTHING) and all read the row that won.
   */
  async findOrInsert(initial: WorkspaceRateLimitEntity): Promise<WorkspaceRateLimitEntity> {
    const existing = await this.find(initial.workspaceId);
    if (existing) return existing;
    await this.rows.createQueryBuilder().insert().into(WorkspaceRateLimitEntity).values(initial).orIgnore().execute();
    return (await this.find(initial.workspaceId)) ?? initial;
  }

  /** Stores newly computed limits. @returns the row as stored, or null when it does not exist. */
  async updateLimits(workspaceId: string, plan: PlanName, limits: RateLimitValues, at: Date): Promise<WorkspaceRateLimitEntity | null> {
    const result = await this.rows.update({ workspaceId, plan }, { limits, computedAt: at, updatedAt: at });
    if (!result.affected) return null;
    return this.find(workspaceId);
  }
}

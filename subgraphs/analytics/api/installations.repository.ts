import type { DataSource, Repository } from 'typeorm';
import type { Page } from '../../../core/pagination';
import { InstallationEntity } from '../model/entities';

export type InstallationPatch = Partial<Pick<InstallationEntity, 'name' | 'domains' | 'hidden'>>;

/** The only code that touches `analytics.installations` (and, on delete, everything recorded for one). */
export class InstallationRepository {
  private readonly rows: Repository<InstallationEntity>;

  constructor(private readonly dataSource: DataSource) {
    this.rows = dataSource.getRepository(InstallationEntity);
  }

  async insert(row: InstallationEntity): Promise<void> {
    await this.rows.insert(row);
  }

  findById(id: string): Promise<InstallationEntity | null> {
    return this.rows.findOneBy({ id });
  }

  /** Newest first; `id` breaks ties of the same instant so pages are stable. */
  listByWorkspace(workspaceId: string, includeHidden: boolean, page: Page): Promise<[InstallationEntity[], number]> {
    return this.rows.findAndCount({
      where: includeHidden ? { workspaceId } : { workspaceId, hidden: false },
      order: { createdAt: 'DESC', id: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
  }

  async update(id: string, patch: InstallationPatch, updatedAt: Date): Promise<void> {
    await this.rows.update({ id }, { ...patch, updatedAt });
  }

  /**
   * Deletes the installation and everything recorded for it, in one transaction. Funnels and
   * users go by ON DELETE CASCADE; sessions and events have no foreign key (the ingestion writer
   * must not pay for one), so they are deleted by installation id:
   * `DELETE FROM analytics.events WHERE installation_id = $1` visits every monthly partition
   * through its (installation_id, ts) index.
   */
  async deleteWithData(id: string): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const [, affected] = (await manager.query(`DELETE FROM "analytics"."installations" WHERE id = $1`, [id])) as [unknown, number];
      if (!affected) return false;
      await manager.query(`DELETE FROM "analytics"."sessions" WHERE installation_id = $1`, [id]);
      await manager.query(`DELETE FROM "analytics"."events" WHERE installation_id = $1`, [id]);
      return true;
    });
  }
}

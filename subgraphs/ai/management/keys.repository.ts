import { IsNull, type DataSource, type Repository } from 'typeorm';
import type { Page } from '../../../core/pagination';
import { GatewayKeyEntity, PoolEntity } from '../model/entities';

/** The only code that touches `ai.gateway_keys`. */
export class KeyRepository {
  private readonly rows: Repository<GatewayKeyEntity>;

  constructor(private readonly dataSource: DataSource) {
    this.rows = dataSource.getRepository(GatewayKeyEntity);
  }

  /**
   * Inserts the key while holding a share lock on its pool, so a concurrent pool delete either
   * sees this key (and refuses) or ran first (and this answers false).
   */
  async insertForPool(row: GatewayKeyEntity): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const pool = await manager.createQueryBuilder(PoolEntity, 'p').setLock('pessimistic_read').where('p.id = :id', { id: row.poolId }).getOne();
      if (!pool) return false;
      await manager.insert(GatewayKeyEntity, row);
      return true;
    });
  }

  findById(id: string): Promise<GatewayKeyEntity | null> {
    return this.rows.findOne({ where: { id } });
  }

  listByWorkspace(workspaceId: string, page: Page): Promise<[GatewayKeyEntity[], number]> {
    return this.rows.findAndCount({ where: { workspaceId }, order: { createdAt: 'DESC', id: 'ASC' }, skip: page.offset, take: page.limit });
  }

  /** Sets revoked_at once; a second revoke leaves the first time in place. */
  async revoke(id: string, at: Date): Promise<void> {
    await this.rows.update({ id, revokedAt: IsNull() }, { revokedAt: at });
  }
}

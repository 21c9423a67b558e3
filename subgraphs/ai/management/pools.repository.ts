import { In, type DataSource, type Repository } from 'typeorm';
import type { Page } from '../../../core/pagination';
import { GatewayKeyEntity, PoolEntity, PoolMemberEntity } from '../model/entities';

export type NewPoolMember = Omit<PoolMemberEntity, 'id'>;

/** Outcome of a guarded pool delete. */
export type PoolDeleteOutcome = { deleted: true } | { deleted: false; activeKeys: number } | { deleted: false; missing: true };

/** PostgreSQL's unique_violation: the member is already in the pool. */
export const UNIQUE_VIOLATION = '23505';

/** The only code that touches `ai.pools` and `ai.pool_members`. */
export class PoolRepository {
  private readonly pools: Repository<PoolEntity>;
  private readonly members: Repository<PoolMemberEntity>;

  constructor(private readonly dataSource: DataSource) {
    this.pools = dataSource.getRepository(PoolEntity);
    this.members = dataSource.getRepository(PoolMemberEntity);
  }

  /** The pool and its first members, in one transaction. */
  async insert(pool: PoolEntity, members: NewPoolMember[]): Promise<PoolMemberEntity[]> {
    return this.dataSource.transaction(async (manager) => {
      await manager.insert(PoolEntity, pool);
      if (!members.length) return [];
      await manager.insert(PoolMemberEntity, members);
      return manager.find(PoolMemberEntity, { where: { poolId: pool.id }, order: { priority: 'ASC', id: 'ASC' } });
    });
  }

  findById(id: string): Promise<PoolEntity | null> {
    return this.pools.findOne({ where: { id } });
  }

  listByWorkspace(workspaceId: string, page: Page): Promise<[PoolEntity[], number]> {
    return this.pools.findAndCount({ where: { workspaceId }, order: { createdAt: 'DESC', id: 'ASC' }, skip: page.offset, take: page.limit });
  }

  /** Members of several pools in one query, fallback order (priority, then age). */
  membersOf(poolIds: readonly string[]): Promise<PoolMemberEntity[]> {
    if (!poolIds.length) return Promise.resolve([]);
    return this.members.find({ where: { poolId: In([...poolIds]) }, order: { priority: 'ASC', id: 'ASC' } });
  }

  /** A duplicate member throws PostgreSQL's 23505 (the partial unique indexes). */
  async addMember(member: NewPoolMember): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await manager.insert(PoolMemberEntity, member);
      await manager.update(PoolEntity, { id: member.poolId }, { updatedAt: member.createdAt });
    });
  }

  /** @returns whether such a member was there. */
  async removeMember(poolId: string, member: { upstreamId: string } | { platformModelId: string }): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const result = await manager.delete(PoolMemberEntity, { poolId, ...member });
      if (!result.affected) return false;
      await manager.update(PoolEntity, { id: poolId }, { updatedAt: new Date() });
      return true;
    });
  }

  /**
   * Deletes the pool unless gateway keys that are not revoked still send to it. The pool row is
   * locked first; key creation locks it too (KeyRepository), so no key slips in between.
   */
  async deleteUnlessInUse(poolId: string): Promise<PoolDeleteOutcome> {
    return this.dataSource.transaction(async (manager) => {
      const locked = await manager.createQueryBuilder(PoolEntity, 'p').setLock('pessimistic_write').where('p.id = :poolId', { poolId }).getOne();
      if (!locked) return { deleted: false, missing: true };
      const activeKeys = await manager
        .createQueryBuilder(GatewayKeyEntity, 'k')
        .where('k.poolId = :poolId', { poolId })
        .andWhere('k.revokedAt IS NULL')
        .getCount();
      if (activeKeys > 0) return { deleted: false, activeKeys };
      // Revoked keys and members go with it (ON DELETE CASCADE).
      await manager.delete(PoolEntity, { id: poolId });
      return { deleted: true };
    });
  }
}

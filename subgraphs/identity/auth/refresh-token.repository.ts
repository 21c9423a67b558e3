import type { DataSource, EntityManager, Repository } from 'typeorm';
import { IsNull } from 'typeorm';
import { ID_PREFIX, newId } from '../../../core/ids';
import { RefreshTokenEntity } from './refresh-token.entity';

export interface NewRefreshToken {
  userId: string;
  familyId: string;
  secretHash: string;
  expiresAt: Date;
}

/** One refresh token, read and changed while its row is locked. */
export interface LockedRefreshToken {
  token: RefreshTokenEntity;
  markRotated(): Promise<void>;
  revokeFamily(): Promise<number>;
  issueNext(input: NewRefreshToken): Promise<RefreshTokenEntity>;
}

export class RefreshTokenRepository {
  private readonly rows: Repository<RefreshTokenEntity>;

  constructor(private readonly dataSource: DataSource) {
    this.rows = dataSource.getRepository(RefreshTokenEntity);
  }

  insert(input: NewRefreshToken): Promise<RefreshTokenEntity> {
    return insertToken(this.dataSource.manager, input);
  }

  findById(id: string): Promise<RefreshTokenEntity | null> {
    return this.rows.findOneBy({ id });
  }

  /** Revokes every live token of the family; returns how many. */
  async revokeFamily(familyId: string): Promise<number> {
    return revokeFamily(this.dataSource.manager, familyId);
  }

  /**
   * Runs `fn` in a transaction holding the token's row `FOR UPDATE`, so two refreshes of one
   * token run one after the other and the second sees the first's rotation. Returns null
   * (without calling `fn`) when there is no such token.
   */
  withLockedToken<T>(id: string, fn: (locked: LockedRefreshToken) => Promise<T>): Promise<T | null> {
    return this.dataSource.transaction(async (manager) => {
      const rows = manager.getRepository(RefreshTokenEntity);
      const token = await rows.createQueryBuilder('t').setLock('pessimistic_write').where('t.id = :id', { id }).getOne();
      if (!token) return null;
      return fn({
        token,
        markRotated: async () => {
          await rows.update({ id }, { rotatedAt: new Date() });
        },
        revokeFamily: () => revokeFamily(manager, token.familyId),
        issueNext: (input) => insertToken(manager, input),
      });
    });
  }
}

function insertToken(manager: EntityManager, input: NewRefreshToken): Promise<RefreshTokenEntity> {
  const rows = manager.getRepository(RefreshTokenEntity);
  return rows.save(
    rows.create({ id: newId(ID_PREFIX.refreshToken), ...input, createdAt: new Date(), rotatedAt: null, revokedAt: null }),
  );
}

async function revokeFamily(manager: EntityManager, familyId: string): Promise<number> {
  const result = await manager.getRepository(RefreshTokenEntity).update({ familyId, revokedAt: IsNull() }, { revokedAt: new Date() });
  return result.affected ?? 0;
}

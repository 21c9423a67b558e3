import { In, type DataSource, type Repository } from 'typeorm';
import type { Page } from '../../../core/pagination';
import { SecretEntity } from './secret.entity';

/** Name of the unique constraint on (workspace_id, key), set by the migration. */
export const SECRET_KEY_CONSTRAINT = 'uq_secrets_workspace_key';
/** First half of the advisory lock that serialises inserts per workspace (the limit check). */
const INSERT_LOCK_CLASS = 724_006;

export interface SecretPatch {
  key?: string;
  valueCiphertext?: string;
}

/** The only code that touches `billing.secrets`. */
export class SecretRepository {
  private readonly rows: Repository<SecretEntity>;

  constructor(private readonly dataSource: DataSource) {
    this.rows = dataSource.getRepository(SecretEntity);
  }

  /** Newest first; `id` breaks ties of the same instant so pages are stable. */
  async listByWorkspace(workspaceId: string, page: Page): Promise<[SecretEntity[], number]> {
    return this.rows.findAndCount({
      where: { workspaceId },
      order: { createdAt: 'DESC', id: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
  }

  async findInWorkspace(workspaceId: string, id: string): Promise<SecretEntity | null> {
    return this.rows.findOne({ where: { workspaceId, id } });
  }

  /** Rows of the given keys with their ciphertext (the one read that selects it). */
  async findWithCiphertextByKeys(workspaceId: string, keys: string[]): Promise<SecretEntity[]> {
    if (!keys.length) return [];
    return this.rows
      .createQueryBuilder('secret')
      .addSelect('secret.valueCiphertext')
      .where({ workspaceId, key: In(keys) })
      .getMany();
  }

  /**
   * Inserts unless the workspace already holds `max` secrets. Inserts of one workspace take an
   * advisory transaction lock, so concurrent creates cannot overshoot the limit together.
   * @returns false when the limit is reached. A duplicate key throws PostgreSQL's 23505.
   */
  async insertWithinLimit(row: SecretEntity, max: number): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [INSERT_LOCK_CLASS, row.workspaceId]);
      const count = await manager.count(SecretEntity, { where: { workspaceId: row.workspaceId } });
      if (count >= max) return false;
      await manager.insert(SecretEntity, row);
      return true;
    });
  }

  /** @returns false when no such secret is in the workspace. A duplicate key throws 23505. */
  async update(workspaceId: string, id: string, patch: SecretPatch, updatedAt: Date): Promise<boolean> {
    const result = await this.rows.update({ workspaceId, id }, { ...patch, updatedAt });
    return (result.affected ?? 0) > 0;
  }

  /** @returns false when no such secret is in the workspace. */
  async delete(workspaceId: string, id: string): Promise<boolean> {
    const result = await this.rows.delete({ workspaceId, id });
    return (result.affected ?? 0) > 0;
  }
}

/** True for PostgreSQL's unique violation of the (workspace_id, key) constraint. */
export function isDuplicateKeyError(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const { code, constraint, driverError } = err as { code?: string; constraint?: string; driverError?: { code?: string; constraint?: string } };
  return (code ?? driverError?.code) === '23505' && (constraint ?? driverError?.constraint) === SECRET_KEY_CONSTRAINT;
}

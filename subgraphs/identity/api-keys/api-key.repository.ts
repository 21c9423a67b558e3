import { IsNull, type DataSource, type Repository } from 'typeorm';
import { ApiKeyEntity } from './api-key.entity';
import type { UserEntity } from '../users/user.entity';

/** What the principal lookup needs of a key and its user, read in one join. */
export interface ApiKeyWithUser {
  keyId: string;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  user: Pick<UserEntity, 'id' | 'username' | 'isAdmin' | 'defaultWorkspaceId'>;
}

export class ApiKeyRepository {
  private readonly rows: Repository<ApiKeyEntity>;

  constructor(private readonly dataSource: DataSource) {
    this.rows = dataSource.getRepository(ApiKeyEntity);
  }

  insert(row: Omit<ApiKeyEntity, 'createdAt' | 'lastUsedAt' | 'revokedAt'>): Promise<ApiKeyEntity> {
    return this.rows.save(this.rows.create({ ...row, createdAt: new Date(), lastUsedAt: null, revokedAt: null }));
  }

  /** The user's keys that are not revoked, newest first. */
  listActive(userId: string): Promise<ApiKeyEntity[]> {
    return this.rows.find({ where: { userId, revokedAt: IsNull() }, order: { createdAt: 'DESC', id: 'ASC' } });
  }

  findOfUser(id: string, userId: string): Promise<ApiKeyEntity | null> {
    return this.rows.findOneBy({ id, userId });
  }

  /** Sets revoked_at unless already set; answers the row as it now is. */
  async revoke(id: string): Promise<ApiKeyEntity> {
    await this.rows.update({ id, revokedAt: IsNull() }, { revokedAt: new Date() });
    return this.rows.findOneByOrFail({ id });
  }

  /** The live key of this hash with its enabled user: one indexed join. */
  async findUsableByHash(keyHash: string): Promise<ApiKeyWithUser | null> {
    const rows: Array<{ key_id: string; expires_at: Date | null; last_used_at: Date | null; user_id: string; username: string; is_admin: boolean; default_workspace_id: string }> =
      await this.dataSource.query(
        `SELECT k."id" AS "key_id", k."expires_at", k."last_used_at", u."id" AS "user_id", u."username", u."is_admin", u."default_workspace_id"
           FROM "identity"."api_keys" k JOIN "identity"."users" u ON u."id" = k."user_id"
          WHERE k."key_hash" = $1 AND k."revoked_at" IS NULL AND (k."expires_at" IS NULL OR k."expires_at" > now())
            AND u."disabled_at" IS NULL`,
        [keyHash],
      );
    const row = rows[0];
    if (!row) return null;
    return {
      keyId: row.key_id,
      expiresAt: row.expires_at,
      lastUsedAt: row.last_used_at,
      user: { id: row.user_id, username: row.username, isAdmin: row.is_admin, defaultWorkspaceId: row.default_workspace_id },
    };
  }

  /** Records a use, at most once per `minIntervalSeconds` per key (the WHERE skips fresher rows). */
  async touchLastUsed(id: string, minIntervalSeconds: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE "identity"."api_keys" SET "last_used_at" = now()
        WHERE "id" = $1 AND ("last_used_at" IS NULL OR "last_used_at" < now() - make_interval(secs => $2))`,
      [id, minIntervalSeconds],
    );
  }
}

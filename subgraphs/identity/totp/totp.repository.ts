import type { DataSource, QueryRunner, Repository } from 'typeorm';
import { UserTotpEntity } from './user-totp.entity';

/**
 * Enrolments and recovery codes. Every state change that guards against reuse (a time step,
 * a recovery code, promoting a pending secret) is one conditional statement, so two
 * concurrent requests cannot both pass.
 */
export class TotpRepository {
  private readonly rows: Repository<UserTotpEntity>;

  constructor(private readonly dataSource: DataSource) {
    this.rows = dataSource.getRepository(UserTotpEntity);
  }

  find(userId: string): Promise<UserTotpEntity | null> {
    return this.rows.findOneBy({ userId });
  }

  /** Which of the users have TOTP enabled: one query for the whole batch. */
  async enabledAmong(userIds: readonly string[]): Promise<Set<string>> {
    const rows: Array<{ user_id: string }> = await this.dataSource.query(
      `SELECT "user_id" FROM "identity"."user_totp" WHERE "user_id" = ANY($1) AND "enabled_at" IS NOT NULL`,
      [userIds],
    );
    return new Set(rows.map((r) => r.user_id));
  }

  /** Stores a pending secret in place of any earlier one; false when TOTP is already enabled. */
  async savePending(userId: string, secretEncrypted: string, expiresAt: Date): Promise<boolean> {
    const saved: unknown[] = await this.dataSource.query(
      `INSERT INTO "identity"."user_totp" AS t ("user_id", "pending_secret_encrypted", "pending_expires_at")
       VALUES ($1, $2, $3)
       ON CONFLICT ("user_id") DO UPDATE
         SET "pending_secret_encrypted" = EXCLUDED."pending_secret_encrypted", "pending_expires_at" = EXCLUDED."pending_expires_at", "updated_at" = now()
         WHERE t."enabled_at" IS NULL
       RETURNING "user_id"`,
      [userId, secretEncrypted, expiresAt],
    );
    return saved.length > 0;
  }

  /**
   * Enrols the pending secret that was checked (matched by its ciphertext, so a setup started
   * meanwhile is not enrolled unchecked), records the step of the confirming code and replaces
   * the recovery codes, in one transaction. Null when that pending secret is gone.
   */
  async enable(userId: string, pendingEncrypted: string, step: number, recoveryCodeHashes: string[]): Promise<Date | null> {
    return this.dataSource.transaction(async (manager) => {
      const enabled = await returnedRows<{ enabled_at: Date }>(
        manager.queryRunner!,
        `UPDATE "identity"."user_totp"
            SET "secret_encrypted" = "pending_secret_encrypted", "enabled_at" = now(), "last_used_step" = $3,
                "pending_secret_encrypted" = NULL, "pending_expires_at" = NULL, "updated_at" = now()
          WHERE "user_id" = $1 AND "enabled_at" IS NULL AND "pending_secret_encrypted" = $2
          RETURNING "enabled_at"`,
        [userId, pendingEncrypted, step],
      );
      if (!enabled.length) return null;
      await manager.query(`DELETE FROM "identity"."totp_recovery_codes" WHERE "user_id" = $1`, [userId]);
      await manager.query(`INSERT INTO "identity"."totp_recovery_codes" ("user_id", "code_hash") SELECT $1, unnest($2::text[])`, [userId, recoveryCodeHashes]);
      return enabled[0].enabled_at;
    });
  }

  /** Records `step` as used if it is newer than the last used one; false for a replayed or older step. */
  async consumeStep(userId: string, step: number): Promise<boolean> {
    const updated = await this.update(
      `UPDATE "identity"."user_totp" SET "last_used_step" = $2, "updated_at" = now()
        WHERE "user_id" = $1 AND "enabled_at" IS NOT NULL AND ("last_used_step" IS NULL OR "last_used_step" < $2)
        RETURNING "user_id"`,
      [userId, step],
    );
    return updated.length > 0;
  }

  /** Spends an unused recovery code; false when there is none of this hash. */
  async consumeRecoveryCode(userId: string, codeHash: string): Promise<boolean> {
    const updated = await this.update(
      `UPDATE "identity"."totp_recovery_codes" SET "used_at" = now()
        WHERE "user_id" = $1 AND "code_hash" = $2 AND "used_at" IS NULL
        RETURNING "user_id"`,
      [userId, codeHash],
    );
    return updated.length > 0;
  }

  async countUnusedRecoveryCodes(userId: string): Promise<number> {
    const [{ count }]: Array<{ count: number }> = await this.dataSource.query(
      `SELECT count(*)::int AS "count" FROM "identity"."totp_recovery_codes" WHERE "user_id" = $1 AND "used_at" IS NULL`,
      [userId],
    );
    return count;
  }

  /** Forgets the enrolment, pending setup and recovery codes. */
  async remove(userId: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await manager.query(`DELETE FROM "identity"."totp_recovery_codes" WHERE "user_id" = $1`, [userId]);
      await manager.query(`DELETE FROM "identity"."user_totp" WHERE "user_id" = $1`, [userId]);
    });
  }

  /** Runs an UPDATE … RETURNING on a connection of its own and answers the rows it returned. */
  private async update(sql: string, parameters: unknown[]): Promise<unknown[]> {
    const runner = this.dataSource.createQueryRunner();
    try {
      return await returnedRows(runner, sql, parameters);
    } finally {
      await runner.release();
    }
  }
}

/**
 * The rows a statement returned. TypeORM's plain query() answers `[rows, rowCount]` for UPDATE
 * and DELETE (a two-element array whatever matched), so this asks for the structured result.
 */
async function returnedRows<T>(runner: QueryRunner, sql: string, parameters: unknown[]): Promise<T[]> {
  return (await runner.query(sql, parameters, true)).records as T[];
}

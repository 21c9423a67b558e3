import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Workspace secrets: metadata in the clear, the value only as ciphertext bound to the row id. */
export class CreateSecrets1763744400000 implements MigrationInterface {
  name = 'CreateSecrets1763744400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "billing"."secrets" (
        "id" text PRIMARY KEY,
        "workspace_id" text NOT NULL,
        "key" text NOT NULL,
        "value_ciphertext" text NOT NULL,
        "created_by_user_id" text NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "uq_secrets_workspace_key" UNIQUE ("workspace_id", "key")
      )
    `);
    await queryRunner.query(`CREATE INDEX "ix_secrets_workspace_created" ON "billing"."secrets" ("workspace_id", "created_at" DESC, "id")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX IF EXISTS "billing"."ix_secrets_workspace_created"`);
    await queryRunner.query(`DROP TABLE IF EXISTS "billing"."secrets"`);
  }
}

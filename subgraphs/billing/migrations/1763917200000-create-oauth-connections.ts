import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Workspace OAuth connections to identity providers: the account in the clear (for display),
 * the tokens only as ciphertext bound to the row id. One row per (workspace, provider, account).
 */
export class CreateOAuthConnections1763917200000 implements MigrationInterface {
  name = 'CreateOAuthConnections1763917200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "billing"."oauth_connections" (
        "id" text PRIMARY KEY,
        "workspace_id" text NOT NULL,
        "provider" text NOT NULL,
        "status" text NOT NULL DEFAULT 'active',
        "subject" text NOT NULL,
        "email" text,
        "name" text,
        "scopes" text[] NOT NULL DEFAULT '{}',
        "access_token_ciphertext" text NOT NULL,
        "refresh_token_ciphertext" text,
        "access_token_expires_at" timestamptz,
        "created_by_user_id" text NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        "last_refreshed_at" timestamptz,
        CONSTRAINT "ck_oauth_connections_provider" CHECK ("provider" IN ('idp-a', 'idp-b')),
        CONSTRAINT "ck_oauth_connections_status" CHECK ("status" IN ('active', 'reauthorization_required')),
        CONSTRAINT "uq_oauth_connections_workspace_provider_subject" UNIQUE ("workspace_id", "provider", "subject")
      )
    `);
    await queryRunner.query(
      `CREATE INDEX "ix_oauth_connections_workspace_provider_created" ON "billing"."oauth_connections" ("workspace_id", "provider", "created_at" DESC, "id")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX IF EXISTS "billing"."ix_oauth_connections_workspace_provider_created"`);
    await queryRunner.query(`DROP TABLE IF EXISTS "billing"."oauth_connections"`);
  }
}

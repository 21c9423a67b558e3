import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Users, workspaces and their members, refresh tokens and API keys, in the `identity` schema. */
export class CreateIdentitySchema1767225600000 implements MigrationInterface {
  name = 'CreateIdentitySchema1767225600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "identity"."workspaces" (
        "id" text PRIMARY KEY,
        "name" text NOT NULL,
        "personal" boolean NOT NULL DEFAULT false,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE "identity"."users" (
        "id" text PRIMARY KEY,
        "username" text NOT NULL,
        "password_hash" text NOT NULL,
        "is_admin" boolean NOT NULL DEFAULT false,
        "default_workspace_id" text NOT NULL REFERENCES "identity"."workspaces" ("id"),
        "disabled_at" timestamptz,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now()
      )`);
    // Usernames are unique regardless of case, so "Alice" cannot impersonate "alice".
    await queryRunner.query(`CREATE UNIQUE INDEX "users_username_lower_key" ON "identity"."users" (lower("username"))`);
    await queryRunner.query(`
      CREATE TABLE "identity"."workspace_members" (
        "id" text PRIMARY KEY,
        "workspace_id" text NOT NULL REFERENCES "identity"."workspaces" ("id") ON DELETE CASCADE,
        "user_id" text NOT NULL REFERENCES "identity"."users" ("id") ON DELETE CASCADE,
        "role" text NOT NULL CHECK ("role" IN ('owner', 'admin', 'member', 'viewer')),
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "workspace_members_workspace_user_key" UNIQUE ("workspace_id", "user_id")
      )`);
    await queryRunner.query(`CREATE INDEX "workspace_members_user_idx" ON "identity"."workspace_members" ("user_id")`);
    await queryRunner.query(`
      CREATE TABLE "identity"."refresh_tokens" (
        "id" text PRIMARY KEY,
        "user_id" text NOT NULL REFERENCES "identity"."users" ("id") ON DELETE CASCADE,
        "family_id" text NOT NULL,
        "secret_hash" text NOT NULL,
        "expires_at" timestamptz NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "rotated_at" timestamptz,
        "revoked_at" timestamptz
      )`);
    await queryRunner.query(`CREATE INDEX "refresh_tokens_family_idx" ON "identity"."refresh_tokens" ("family_id")`);
    await queryRunner.query(`CREATE INDEX "refresh_tokens_expires_idx" ON "identity"."refresh_tokens" ("expires_at")`);
    await queryRunner.query(`
      CREATE TABLE "identity"."api_keys" (
        "id" text PRIMARY KEY,
        "user_id" text NOT NULL REFERENCES "identity"."users" ("id") ON DELETE CASCADE,
        "name" text NOT NULL,
        "prefix" text NOT NULL,
        "key_hash" text NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "expires_at" timestamptz,
        "last_used_at" timestamptz,
        "revoked_at" timestamptz,
        CONSTRAINT "api_keys_key_hash_key" UNIQUE ("key_hash")
      )`);
    await queryRunner.query(`CREATE INDEX "api_keys_user_idx" ON "identity"."api_keys" ("user_id")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS "identity"."api_keys"`);
    await queryRunner.query(`DROP TABLE IF EXISTS "identity"."refresh_tokens"`);
    await queryRunner.query(`DROP TABLE IF EXISTS "identity"."workspace_members"`);
    await queryRunner.query(`DROP TABLE IF EXISTS "identity"."users"`);
    await queryRunner.query(`DROP TABLE IF EXISTS "identity"."workspaces"`);
  }
}

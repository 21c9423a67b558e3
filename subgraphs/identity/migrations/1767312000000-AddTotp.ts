import type { MigrationInterface, QueryRunner } from 'typeorm';

/** TOTP second factor: one enrolment row per user and that user's recovery codes, in the `identity` schema. */
export class AddTotp1767312000000 implements MigrationInterface {
  name = 'AddTotp1767312000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Secrets are AES-256-GCM ciphertexts (core/crypto), never the base32 secret itself.
    // An enrolled secret and its enabled_at come and go together.
    await queryRunner.query(`
      CREATE TABLE "identity"."user_totp" (
        "user_id" text PRIMARY KEY REFERENCES "identity"."users" ("id") ON DELETE CASCADE,
        "secret_encrypted" text,
        "enabled_at" timestamptz,
        "last_used_step" bigint,
        "pending_secret_encrypted" text,
        "pending_expires_at" timestamptz,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "user_totp_enabled_has_secret" CHECK (("secret_encrypted" IS NULL) = ("enabled_at" IS NULL))
      )`);
    await queryRunner.query(`
      CREATE TABLE "identity"."totp_recovery_codes" (
        "user_id" text NOT NULL REFERENCES "identity"."users" ("id") ON DELETE CASCADE,
        "code_hash" text NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "used_at" timestamptz,
        PRIMARY KEY ("user_id", "code_hash")
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS "identity"."totp_recovery_codes"`);
    await queryRunner.query(`DROP TABLE IF EXISTS "identity"."user_totp"`);
  }
}

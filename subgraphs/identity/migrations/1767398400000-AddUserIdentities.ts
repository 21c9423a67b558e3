import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sign-in through identity providers: `user_identities` ties a provider's subject to a user, and
 * users get an optional verified email (what a provider's verified email is linked by).
 */
export class AddUserIdentities1767398400000 implements MigrationInterface {
  name = 'AddUserIdentities1767398400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Only emails a provider vouched for are stored, so linking by email never trusts a claim.
    await queryRunner.query(`ALTER TABLE "identity"."users" ADD COLUMN "email" text, ADD COLUMN "email_verified_at" timestamptz`);
    await queryRunner.query(`CREATE UNIQUE INDEX "users_email_lower_key" ON "identity"."users" (lower("email"))`);
    // One user per (provider, subject); a user may have several identities.
    await queryRunner.query(`
      CREATE TABLE "identity"."user_identities" (
        "provider" text NOT NULL,
        "subject" text NOT NULL,
        "user_id" text NOT NULL REFERENCES "identity"."users" ("id") ON DELETE CASCADE,
        "email" text,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "last_login_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "user_identities_pkey" PRIMARY KEY ("provider", "subject")
      )`);
    await queryRunner.query(`CREATE INDEX "user_identities_user_idx" ON "identity"."user_identities" ("user_id")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS "identity"."user_identities"`);
    await queryRunner.query(`DROP INDEX IF EXISTS "identity"."users_email_lower_key"`);
    await queryRunner.query(`ALTER TABLE "identity"."users" DROP COLUMN IF EXISTS "email_verified_at", DROP COLUMN IF EXISTS "email"`);
  }
}

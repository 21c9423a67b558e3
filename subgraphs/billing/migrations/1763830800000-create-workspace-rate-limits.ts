import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Workspace rate limits: one row per workspace, its plan and the limits computed from the plan
 * and the configuration's overrides (a snapshot, recomputed by refresh). A workspace gets its row
 * on first read.
 */
export class CreateWorkspaceRateLimits1763830800000 implements MigrationInterface {
  name = 'CreateWorkspaceRateLimits1763830800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "billing"."workspace_rate_limits" (
        "workspace_id" text PRIMARY KEY,
        "plan" text NOT NULL,
        "limits" jsonb NOT NULL,
        "computed_at" timestamptz NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "ck_workspace_rate_limits_plan" CHECK ("plan" IN ('free', 'pro', 'enterprise')),
        CONSTRAINT "ck_workspace_rate_limits_limits" CHECK (jsonb_typeof("limits") = 'object')
      )
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS "billing"."workspace_rate_limits"`);
  }
}

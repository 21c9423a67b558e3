import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Workflows, their webhook registrations while deployed, executions and their steps. */
export class CreateWorkflows1768176000000 implements MigrationInterface {
  name = 'CreateWorkflows1768176000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "workflows"."workflows" (
        "id" text PRIMARY KEY,
        "workspace_id" text NOT NULL,
        "name" text NOT NULL,
        "description" text,
        "nodes" jsonb NOT NULL,
        "connections" jsonb NOT NULL,
        "settings" jsonb NOT NULL DEFAULT '{}',
        "version" integer NOT NULL DEFAULT 1,
        "deployed" boolean NOT NULL DEFAULT false,
        "deployed_at" timestamptz,
        "created_by_user_id" text,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now()
      )
    `);
    await queryRunner.query(`CREATE INDEX "ix_workflows_workspace" ON "workflows"."workflows" ("workspace_id", "created_at" DESC, "id")`);
    await queryRunner.query(`
      CREATE TABLE "workflows"."webhook_registrations" (
        "workflow_id" text NOT NULL REFERENCES "workflows"."workflows" ("id") ON DELETE CASCADE,
        "node_id" text NOT NULL,
        "workspace_id" text NOT NULL,
        "method" text NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY ("workflow_id", "node_id")
      )
    `);
    await queryRunner.query(`
      CREATE TABLE "workflows"."executions" (
        "id" text PRIMARY KEY,
        "workflow_id" text REFERENCES "workflows"."workflows" ("id") ON DELETE CASCADE,
        "workspace_id" text NOT NULL,
        "workflow_version" integer,
        "definition" jsonb NOT NULL,
        "status" text NOT NULL CHECK ("status" IN ('queued','running','waiting','succeeded','failed','cancelled')),
        "mode" text NOT NULL,
        "trigger_node_id" text,
        "input" jsonb,
        "output" jsonb,
        "error" text,
        "cancel_requested" boolean NOT NULL DEFAULT false,
        "created_by_user_id" text,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "started_at" timestamptz,
        "finished_at" timestamptz,
        "duration_ms" integer
      )
    `);
    await queryRunner.query(`CREATE INDEX "ix_executions_workflow_created" ON "workflows"."executions" ("workflow_id", "created_at" DESC)`);
    await queryRunner.query(`CREATE INDEX "ix_executions_workspace_created" ON "workflows"."executions" ("workspace_id", "created_at" DESC)`);
    await queryRunner.query(`
      CREATE TABLE "workflows"."execution_steps" (
        "execution_id" text NOT NULL REFERENCES "workflows"."executions" ("id") ON DELETE CASCADE,
        "node_id" text NOT NULL,
        "workspace_id" text NOT NULL,
        "node_type" text NOT NULL,
        "seq" integer NOT NULL,
        "status" text NOT NULL CHECK ("status" IN ('running','succeeded','failed','skipped')),
        "input" jsonb,
        "output" jsonb,
        "error" text,
        "attempts" integer NOT NULL DEFAULT 1,
        "started_at" timestamptz NOT NULL,
        "finished_at" timestamptz,
        "duration_ms" integer,
        PRIMARY KEY ("execution_id", "node_id")
      )
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['execution_steps', 'executions', 'webhook_registrations', 'workflows']) {
      await queryRunner.query(`DROP TABLE IF EXISTS "workflows"."${table}"`);
    }
  }
}

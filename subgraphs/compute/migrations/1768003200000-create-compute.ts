import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Sandboxes with their lifecycle log, ports and stats; snapshots; usage events; GPU allocations. */
export class CreateCompute1768003200000 implements MigrationInterface {
  name = 'CreateCompute1768003200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "compute"."sandboxes" (
        "id" text PRIMARY KEY,
        "workspace_id" text NOT NULL,
        "name" text NOT NULL,
        "status" text NOT NULL CHECK ("status" IN ('pending','starting','running','stopping','stopped','snapshotting','failed','deleting','deleted')),
        "status_reason" text,
        "image" text NOT NULL,
        "source_snapshot_id" text,
        "boot_snapshot_id" text,
        "cpu_millis" integer,
        "memory_mb" integer,
        "gpu_count" integer NOT NULL DEFAULT 0,
        "gpu_type" text,
        "env" jsonb NOT NULL DEFAULT '{}',
        "args" jsonb,
        "secret_refs" jsonb NOT NULL DEFAULT '[]',
        "volume_mounts" jsonb NOT NULL DEFAULT '[]',
        "labels" jsonb NOT NULL DEFAULT '{}',
        "max_lifetime_seconds" integer,
        "on_ttl_expire" jsonb,
        "expires_at" timestamptz,
        "container_id" text,
        "op_seq" integer NOT NULL DEFAULT 0,
        "created_by_user_id" text,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        "status_changed_at" timestamptz NOT NULL DEFAULT now(),
        "started_at" timestamptz,
        "stopped_at" timestamptz,
        "deleted_at" timestamptz
      )
    `);
    await queryRunner.query(`CREATE INDEX "ix_sandboxes_workspace_created" ON "compute"."sandboxes" ("workspace_id", "created_at" DESC, "id")`);
    await queryRunner.query(`CREATE INDEX "ix_sandboxes_transitional" ON "compute"."sandboxes" ("status_changed_at") WHERE "status" IN ('pending','starting','stopping','snapshotting','deleting')`);
    await queryRunner.query(`CREATE INDEX "ix_sandboxes_running" ON "compute"."sandboxes" ("workspace_id") WHERE "status" IN ('pending','starting','running','stopping','snapshotting')`);

    await queryRunner.query(`
      CREATE TABLE "compute"."sandbox_events" (
        "id" bigserial PRIMARY KEY,
        "sandbox_id" text NOT NULL REFERENCES "compute"."sandboxes" ("id") ON DELETE CASCADE,
        "workspace_id" text NOT NULL,
        "from_status" text,
        "to_status" text NOT NULL,
        "reason" text NOT NULL,
        "actor" text NOT NULL,
        "at" timestamptz NOT NULL DEFAULT clock_timestamp()
      )
    `);
    await queryRunner.query(`CREATE INDEX "ix_sandbox_events_sandbox" ON "compute"."sandbox_events" ("sandbox_id", "id")`);

    await queryRunner.query(`
      CREATE TABLE "compute"."sandbox_ports" (
        "sandbox_id" text NOT NULL REFERENCES "compute"."sandboxes" ("id") ON DELETE CASCADE,
        "port" integer NOT NULL CHECK ("port" BETWEEN 1 AND 65535),
        "workspace_id" text NOT NULL,
        "protocol" text NOT NULL,
        "public" boolean NOT NULL DEFAULT false,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY ("sandbox_id", "port")
      )
    `);

    await queryRunner.query(`
      CREATE TABLE "compute"."sandbox_stats" (
        "sandbox_id" text NOT NULL REFERENCES "compute"."sandboxes" ("id") ON DELETE CASCADE,
        "at" timestamptz NOT NULL,
        "workspace_id" text NOT NULL,
        "cpu_cores" double precision NOT NULL,
        "cpu_nanos" bigint NOT NULL,
        "memory_bytes" bigint NOT NULL,
        "memory_limit_bytes" bigint NOT NULL,
        "network_rx_bytes" bigint NOT NULL,
        "network_tx_bytes" bigint NOT NULL,
        PRIMARY KEY ("sandbox_id", "at")
      )
    `);
    await queryRunner.query(`CREATE INDEX "ix_sandbox_stats_at" ON "compute"."sandbox_stats" ("at")`);

    await queryRunner.query(`
      CREATE TABLE "compute"."snapshots" (
        "id" text PRIMARY KEY,
        "workspace_id" text NOT NULL,
        "name" text NOT NULL,
        "description" text,
        "labels" jsonb NOT NULL DEFAULT '{}',
        "status" text NOT NULL CHECK ("status" IN ('creating','ready','failed')),
        "status_reason" text,
        "source_sandbox_id" text,
        "source_image" text NOT NULL,
        "image_ref" text NOT NULL,
        "size_bytes" bigint,
        "created_by_user_id" text,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        "ready_at" timestamptz
      )
    `);
    await queryRunner.query(`CREATE INDEX "ix_snapshots_workspace_created" ON "compute"."snapshots" ("workspace_id", "created_at" DESC, "id")`);
    await queryRunner.query(`CREATE INDEX "ix_snapshots_source_sandbox" ON "compute"."snapshots" ("source_sandbox_id", "created_at" DESC) WHERE "source_sandbox_id" IS NOT NULL`);

    await queryRunner.query(`
      CREATE TABLE "compute"."usage_events" (
        "id" bigserial PRIMARY KEY,
        "idempotency_key" text NOT NULL UNIQUE,
        "workspace_id" text NOT NULL,
        "sandbox_id" text NOT NULL,
        "kind" text NOT NULL CHECK ("kind" IN ('cpu_seconds','memory_gb_seconds','gpu_seconds')),
        "quantity" double precision NOT NULL CHECK ("quantity" >= 0),
        "period_start" timestamptz NOT NULL,
        "period_end" timestamptz NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now()
      )
    `);
    await queryRunner.query(`CREATE INDEX "ix_usage_events_workspace" ON "compute"."usage_events" ("workspace_id", "period_end")`);

    await queryRunner.query(`
      CREATE TABLE "compute"."gpu_allocations" (
        "device_id" text PRIMARY KEY,
        "gpu_type" text NOT NULL,
        "sandbox_id" text NOT NULL,
        "allocated_at" timestamptz NOT NULL DEFAULT now()
      )
    `);
    await queryRunner.query(`CREATE INDEX "ix_gpu_allocations_sandbox" ON "compute"."gpu_allocations" ("sandbox_id")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['gpu_allocations', 'usage_events', 'snapshots', 'sandbox_stats', 'sandbox_ports', 'sandbox_events', 'sandboxes']) {
      await queryRunner.query(`DROP TABLE IF EXISTS "compute"."${table}"`);
    }
  }
}

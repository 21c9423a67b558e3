import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Upstreams, pools and members, gateway keys, usage, conversations and metering events. */
export class CreateAiGateway1768089600000 implements MigrationInterface {
  name = 'CreateAiGateway1768089600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "ai"."upstreams" (
        "id" text PRIMARY KEY,
        "workspace_id" text NOT NULL,
        "name" text NOT NULL,
        "api" text NOT NULL CHECK ("api" IN ('openai','anthropic','gemini')),
        "base_url" text NOT NULL,
        "auth_kind" text NOT NULL DEFAULT 'api_key' CHECK ("auth_kind" IN ('api_key','oauth')),
        "credential_ciphertext" text NOT NULL,
        "refresh_token_ciphertext" text,
        "credential_expires_at" timestamptz,
        "models" jsonb NOT NULL DEFAULT '[]',
        "model_map" jsonb NOT NULL DEFAULT '{}',
        "weight" integer NOT NULL DEFAULT 1 CHECK ("weight" BETWEEN 1 AND 1000),
        "timeout_ms" integer NOT NULL DEFAULT 60000,
        "enabled" boolean NOT NULL DEFAULT true,
        "created_by_user_id" text,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now()
      )
    `);
    await queryRunner.query(`CREATE INDEX "ix_upstreams_workspace" ON "ai"."upstreams" ("workspace_id", "created_at" DESC, "id")`);
    await queryRunner.query(`
      CREATE TABLE "ai"."pools" (
        "id" text PRIMARY KEY,
        "workspace_id" text NOT NULL,
        "name" text NOT NULL,
        "strategy" text NOT NULL CHECK ("strategy" IN ('weighted','round-robin','least-latency','fallback')),
        "store_conversations" boolean NOT NULL DEFAULT false,
        "max_attempts" integer NOT NULL DEFAULT 3 CHECK ("max_attempts" BETWEEN 1 AND 10),
        "created_by_user_id" text,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now()
      )
    `);
    await queryRunner.query(`CREATE INDEX "ix_pools_workspace" ON "ai"."pools" ("workspace_id", "created_at" DESC, "id")`);
    await queryRunner.query(`
      CREATE TABLE "ai"."pool_members" (
        "id" bigserial PRIMARY KEY,
        "pool_id" text NOT NULL REFERENCES "ai"."pools" ("id") ON DELETE CASCADE,
        "upstream_id" text REFERENCES "ai"."upstreams" ("id") ON DELETE CASCADE,
        "platform_model_id" text,
        "weight" integer CHECK ("weight" BETWEEN 1 AND 1000),
        "priority" integer NOT NULL DEFAULT 0,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        CHECK (("upstream_id" IS NULL) <> ("platform_model_id" IS NULL))
      )
    `);
    await queryRunner.query(`CREATE UNIQUE INDEX "uq_pool_members_upstream" ON "ai"."pool_members" ("pool_id", "upstream_id") WHERE "upstream_id" IS NOT NULL`);
    await queryRunner.query(`CREATE UNIQUE INDEX "uq_pool_members_platform" ON "ai"."pool_members" ("pool_id", "platform_model_id") WHERE "platform_model_id" IS NOT NULL`);
    await queryRunner.query(`
      CREATE TABLE "ai"."gateway_keys" (
        "id" text PRIMARY KEY,
        "workspace_id" text NOT NULL,
        "name" text NOT NULL,
        "pool_id" text NOT NULL REFERENCES "ai"."pools" ("id") ON DELETE CASCADE,
        "key_hash" text NOT NULL UNIQUE,
        "key_prefix" text NOT NULL,
        "requests_per_minute" integer,
        "tokens_per_minute" integer,
        "monthly_budget_usd" numeric(14,4),
        "store_conversations" boolean NOT NULL DEFAULT false,
        "expires_at" timestamptz,
        "revoked_at" timestamptz,
        "created_by_user_id" text,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "last_used_at" timestamptz
      )
    `);
    await queryRunner.query(`CREATE INDEX "ix_gateway_keys_workspace" ON "ai"."gateway_keys" ("workspace_id", "created_at" DESC, "id")`);
    await queryRunner.query(`
      CREATE TABLE "ai"."usage" (
        "id" bigserial PRIMARY KEY,
        "request_id" text NOT NULL UNIQUE,
        "workspace_id" text NOT NULL,
        "key_id" text,
        "pool_id" text,
        "upstream_id" text,
        "platform_model_id" text,
        "client_api" text NOT NULL,
        "upstream_api" text,
        "operation" text NOT NULL,
        "model" text NOT NULL,
        "input_tokens" integer NOT NULL DEFAULT 0,
        "output_tokens" integer NOT NULL DEFAULT 0,
        "cached_tokens" integer NOT NULL DEFAULT 0,
        "cost_usd" numeric(18,8) NOT NULL DEFAULT 0,
        "latency_ms" integer NOT NULL,
        "ttfb_ms" integer,
        "status" integer NOT NULL,
        "streamed" boolean NOT NULL DEFAULT false,
        "attempts" integer NOT NULL DEFAULT 1,
        "error" text,
        "created_at" timestamptz NOT NULL DEFAULT now()
      )
    `);
    await queryRunner.query(`CREATE INDEX "ix_usage_workspace_created" ON "ai"."usage" ("workspace_id", "created_at")`);
    await queryRunner.query(`CREATE INDEX "ix_usage_key_created" ON "ai"."usage" ("key_id", "created_at") WHERE "key_id" IS NOT NULL`);
    await queryRunner.query(`CREATE INDEX "ix_usage_upstream_created" ON "ai"."usage" ("upstream_id", "created_at") WHERE "upstream_id" IS NOT NULL`);
    await queryRunner.query(`
      CREATE TABLE "ai"."conversations" (
        "request_id" text PRIMARY KEY,
        "workspace_id" text NOT NULL,
        "key_id" text,
        "pool_id" text,
        "model" text NOT NULL,
        "request_body" jsonb NOT NULL,
        "response_body" jsonb,
        "status" integer NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now()
      )
    `);
    await queryRunner.query(`CREATE INDEX "ix_conversations_workspace_created" ON "ai"."conversations" ("workspace_id", "created_at" DESC)`);
    await queryRunner.query(`
      CREATE TABLE "ai"."metering_events" (
        "id" bigserial PRIMARY KEY,
        "idempotency_key" text NOT NULL UNIQUE,
        "workspace_id" text NOT NULL,
        "kind" text NOT NULL,
        "quantity" double precision NOT NULL CHECK ("quantity" >= 0),
        "request_id" text NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now()
      )
    `);
    await queryRunner.query(`CREATE INDEX "ix_ai_metering_workspace" ON "ai"."metering_events" ("workspace_id", "created_at")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['metering_events', 'conversations', 'usage', 'gateway_keys', 'pool_members', 'pools', 'upstreams']) {
      await queryRunner.query(`DROP TABLE IF EXISTS "ai"."${table}"`);
    }
  }
}

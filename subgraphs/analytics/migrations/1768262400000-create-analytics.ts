import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Installations, funnels, identified users, daily salts, sessions (and their daily rollup) and the time-partitioned event
 * table (monthly partitions, created ahead by the ingestion writer, plus a default partition so an
 * event is never refused for want of one). Indexes follow the queries (README.md).
 */
export class CreateAnalytics1768262400000 implements MigrationInterface {
  name = 'CreateAnalytics1768262400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "analytics"."installations" (
        "id" text PRIMARY KEY,
        "workspace_id" text NOT NULL,
        "name" text NOT NULL,
        "domains" text[] NOT NULL,
        "public_key" text NOT NULL UNIQUE,
        "hidden" boolean NOT NULL DEFAULT false,
        "created_by_user_id" text,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now()
      )
    `);
    await queryRunner.query(`CREATE INDEX "ix_installations_workspace" ON "analytics"."installations" ("workspace_id", "created_at" DESC, "id")`);

    await queryRunner.query(`
      CREATE TABLE "analytics"."funnels" (
        "id" text PRIMARY KEY,
        "workspace_id" text NOT NULL,
        "installation_id" text NOT NULL REFERENCES "analytics"."installations" ("id") ON DELETE CASCADE,
        "name" text NOT NULL,
        "steps" jsonb NOT NULL,
        "window_seconds" integer NOT NULL,
        "created_by_user_id" text,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now()
      )
    `);
    await queryRunner.query(`CREATE INDEX "ix_funnels_workspace" ON "analytics"."funnels" ("workspace_id", "created_at" DESC, "id")`);

    // The salt of each UTC day: visitor ids are hashes over it, so they cannot be linked across days; kept two days.
    await queryRunner.query(`
      CREATE TABLE "analytics"."salts" (
        "day" date PRIMARY KEY,
        "salt" bytea NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now()
      )
    `);

    await queryRunner.query(`
      CREATE TABLE "analytics"."users" (
        "installation_id" text NOT NULL REFERENCES "analytics"."installations" ("id") ON DELETE CASCADE,
        "user_id" text NOT NULL,
        "traits" jsonb NOT NULL DEFAULT '{}',
        "first_seen_at" timestamptz NOT NULL,
        "last_seen_at" timestamptz NOT NULL,
        PRIMARY KEY ("installation_id", "user_id")
      )
    `);
    await queryRunner.query(`CREATE INDEX "ix_users_last_seen" ON "analytics"."users" ("installation_id", "last_seen_at" DESC)`);

    // One row per visit (30 minutes without an event end it), kept up to date by the writer: the stats read this, not the events.
    await queryRunner.query(`
      CREATE TABLE "analytics"."sessions" (
        "installation_id" text NOT NULL,
        "session_id" bigint NOT NULL,
        "visitor_id" bigint NOT NULL,
        "user_id" text,
        "started_at" timestamptz NOT NULL,
        "last_seen_at" timestamptz NOT NULL,
        "pageviews" integer NOT NULL DEFAULT 0,
        "events" integer NOT NULL DEFAULT 0,
        "entry_path" text,
        "exit_path" text,
        "hostname" text,
        "referrer_domain" text,
        "utm_source" text,
        "utm_medium" text,
        "utm_campaign" text,
        "browser" text,
        "os" text,
        "device" text,
        PRIMARY KEY ("installation_id", "session_id")
      )
    `);
    await queryRunner.query(`CREATE INDEX "ix_sessions_started" ON "analytics"."sessions" ("installation_id", "started_at")`);

    // Pageviews per installation, hour and path, kept by the writer with the events: top pages and pageview series over long windows read this.
    await queryRunner.query(`
      CREATE TABLE "analytics"."page_hours" (
        "installation_id" text NOT NULL REFERENCES "analytics"."installations" ("id") ON DELETE CASCADE,
        "hour" timestamptz NOT NULL,
        "path" text NOT NULL,
        "pageviews" integer NOT NULL,
        PRIMARY KEY ("installation_id", "hour", "path")
      )
    `);

    // Sessions per UTC day (of started_at) and breakdown value, rolled up from analytics.sessions
    // once a day's writes have gone quiet (rollup/session-days.ts): the stats read whole days here.
    // dimension '' with value '' is the day's totals; the others are the stats' breakdown lists.
    await queryRunner.query(`
      CREATE TABLE "analytics"."session_days" (
        "installation_id" text NOT NULL REFERENCES "analytics"."installations" ("id") ON DELETE CASCADE,
        "day" date NOT NULL,
        "dimension" text NOT NULL,
        "value" text NOT NULL,
        "sessions" integer NOT NULL,
        "visitors" integer NOT NULL,
        "bounces" integer NOT NULL,
        "duration_seconds" float8 NOT NULL,
        PRIMARY KEY ("installation_id", "day", "dimension", "value")
      )
    `);
    // Per installation and day: how many writer batches touched its sessions, and how many of them
    // its session_days rows include. A day is read from the rollup only when the two agree.
    await queryRunner.query(`
      CREATE TABLE "analytics"."session_day_writes" (
        "installation_id" text NOT NULL REFERENCES "analytics"."installations" ("id") ON DELETE CASCADE,
        "day" date NOT NULL,
        "writes" bigint NOT NULL,
        "written_at" timestamptz NOT NULL,
        "rolled_writes" bigint,
        PRIMARY KEY ("installation_id", "day")
      )
    `);
    await queryRunner.query(`CREATE INDEX "ix_session_day_writes_pending" ON "analytics"."session_day_writes" ("written_at") WHERE "rolled_writes" IS DISTINCT FROM "writes"`);

    await queryRunner.query(`
      CREATE TABLE "analytics"."events" (
        "installation_id" text NOT NULL,
        "ts" timestamptz NOT NULL,
        "event_id" text NOT NULL,
        "kind" text NOT NULL CHECK ("kind" IN ('pageview', 'event', 'identify')),
        "name" text NOT NULL,
        "visitor_id" bigint NOT NULL,
        "session_id" bigint NOT NULL,
        "user_id" text,
        "hostname" text,
        "path" text,
        "query" text,
        "referrer" text,
        "referrer_domain" text,
        "utm_source" text,
        "utm_medium" text,
        "utm_campaign" text,
        "browser" text,
        "os" text,
        "device" text,
        "screen_width" integer,
        "props" jsonb,
        "received_at" timestamptz NOT NULL DEFAULT now()
      ) PARTITION BY RANGE ("ts")
    `);
    await queryRunner.query(`CREATE TABLE "analytics"."events_default" PARTITION OF "analytics"."events" DEFAULT`);
    // Time range scans of one installation (timeseries, recent events, realtime), by name (funnels, event filters), per visitor and per user (trajectory, funnels, profiles).
    await queryRunner.query(`CREATE INDEX "ix_events_installation_ts" ON "analytics"."events" ("installation_id", "ts")`);
    await queryRunner.query(`CREATE INDEX "ix_events_installation_name_ts" ON "analytics"."events" ("installation_id", "name", "ts")`);
    await queryRunner.query(`CREATE INDEX "ix_events_installation_visitor_ts" ON "analytics"."events" ("installation_id", "visitor_id", "ts")`);
    await queryRunner.query(`CREATE INDEX "ix_events_installation_user_ts" ON "analytics"."events" ("installation_id", "user_id", "ts") WHERE "user_id" IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['events', 'session_day_writes', 'session_days', 'page_hours', 'sessions', 'users', 'salts', 'funnels', 'installations']) {
      await queryRunner.query(`DROP TABLE IF EXISTS "analytics"."${table}"`);
    }
  }
}

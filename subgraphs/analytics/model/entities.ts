import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * The analytics domain's stored records (schema "analytics", migration 1768262400000). Events and
 * sessions are written and read with SQL only (the events table is partitioned by month):
 * their columns are documented in the migration and README.md.
 */

/** A site being tracked: its allowed domains and the public key its script sends. */
@Entity({ name: 'installations' })
export class InstallationEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId: string;

  @Column({ type: 'text' })
  name: string;

  /** Host names events may come from (exact, or `*.example.com` for subdomains). */
  @Column({ type: 'text', array: true })
  domains: string[];

  /** `pk_…`: public (it is in every page), only identifies the installation. */
  @Column({ name: 'public_key', type: 'text' })
  publicKey: string;

  /** Hidden installations leave default lists (they still ingest). */
  @Column({ type: 'boolean', default: false })
  hidden: boolean;

  @Column({ name: 'created_by_user_id', type: 'text', nullable: true })
  createdByUserId: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

/** One funnel step: an event by name, or a pageview whose path matches (`*` matches any run of characters). */
export interface FunnelStep {
  type: 'event' | 'page';
  /** Event name, or path pattern. */
  match: string;
  /** Shown in results. @defaultValue match */
  label?: string;
}

@Entity({ name: 'funnels' })
export class FunnelEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId: string;

  @Column({ name: 'installation_id', type: 'text' })
  installationId: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'jsonb' })
  steps: FunnelStep[];

  /** A visitor converts when each step follows the previous one within this many seconds of the first. */
  @Column({ name: 'window_seconds', type: 'integer' })
  windowSeconds: number;

  @Column({ name: 'created_by_user_id', type: 'text', nullable: true })
  createdByUserId: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

/** An identified user of an installation (POST /analytics/identify). */
@Entity({ name: 'users' })
export class AnalyticsUserEntity {
  @PrimaryColumn({ name: 'installation_id', type: 'text' })
  installationId: string;

  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId: string;

  @Column({ type: 'jsonb', default: () => `'{}'` })
  traits: Record<string, unknown>;

  @Column({ name: 'first_seen_at', type: 'timestamptz' })
  firstSeenAt: Date;

  @Column({ name: 'last_seen_at', type: 'timestamptz' })
  lastSeenAt: Date;
}

import { Column, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';
import type { SandboxStatus, TtlAction } from './sandbox.states';

export interface SecretRef {
  /** Key of a workspace secret (`DATABASE_URL`). */
  secretKey: string;
  /** Environment variable that receives its value in the container. */
  envVar: string;
}

export interface VolumeMount {
  /** Name of a workspace volume; created on first use, shared by every sandbox that mounts it. */
  volume: string;
  /** Absolute path in the container. */
  mountPath: string;
  readOnly: boolean;
}

export interface TtlPolicy {
  action: TtlAction;
}

/** A sandbox as stored. Indexes and constraints live in the migration (`CreateCompute`). */
@Entity({ name: 'sandboxes' })
export class SandboxEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text' })
  status: SandboxStatus;

  /** Why the sandbox is in its status (the last transition's reason). */
  @Column({ name: 'status_reason', type: 'text', nullable: true })
  statusReason: string | null;

  /** Image the current container runs: the requested image, or a snapshot's image. */
  @Column({ type: 'text' })
  image: string;

  /** The snapshot the sandbox was created from, if any. */
  @Column({ name: 'source_snapshot_id', type: 'text', nullable: true })
  sourceSnapshotId: string | null;

  /** Snapshot the next start boots from (start-from-*, restore); cleared once the container runs from it. */
  @Column({ name: 'boot_snapshot_id', type: 'text', nullable: true })
  bootSnapshotId: string | null;

  @Column({ name: 'cpu_millis', type: 'integer', nullable: true })
  cpuMillis: number | null;

  @Column({ name: 'memory_mb', type: 'integer', nullable: true })
  memoryMb: number | null;

  @Column({ name: 'gpu_count', type: 'integer', default: 0 })
  gpuCount: number;

  @Column({ name: 'gpu_type', type: 'text', nullable: true })
  gpuType: string | null;

  @Column({ type: 'jsonb', default: {} })
  env: Record<string, string>;

  @Column({ type: 'jsonb', nullable: true })
  args: string[] | null;

  @Column({ name: 'secret_refs', type: 'jsonb', default: [] })
  secretRefs: SecretRef[];

  @Column({ name: 'volume_mounts', type: 'jsonb', default: [] })
  volumeMounts: VolumeMount[];

  /** User metadata (PUT /sandboxes/{id}). */
  @Column({ type: 'jsonb', default: {} })
  labels: Record<string, string>;

  @Column({ name: 'max_lifetime_seconds', type: 'integer', nullable: true })
  maxLifetimeSeconds: number | null;

  @Column({ name: 'on_ttl_expire', type: 'jsonb', nullable: true })
  onTtlExpire: TtlPolicy | null;

  /** When the lifetime ends; moved by extend-ttl. */
  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  @Column({ name: 'container_id', type: 'text', nullable: true })
  containerId: string | null;

  /** Increments with every transition that queues work; job ids include it, so a job is added once. */
  @Column({ name: 'op_seq', type: 'integer', default: 0 })
  opSeq: number;

  @Column({ name: 'created_by_user_id', type: 'text', nullable: true })
  createdByUserId: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  /** When the status last changed (the reconciler's clock for stuck states). */
  @Column({ name: 'status_changed_at', type: 'timestamptz' })
  statusChangedAt: Date;

  @Column({ name: 'started_at', type: 'timestamptz', nullable: true })
  startedAt: Date | null;

  @Column({ name: 'stopped_at', type: 'timestamptz', nullable: true })
  stoppedAt: Date | null;

  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt: Date | null;
}

/** One lifecycle transition (GET /sandboxes/{id}/logs/lifecycle). */
@Entity({ name: 'sandbox_events' })
export class SandboxEventEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'sandbox_id', type: 'text' })
  sandboxId: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId: string;

  @Column({ name: 'from_status', type: 'text', nullable: true })
  fromStatus: SandboxStatus | null;

  @Column({ name: 'to_status', type: 'text' })
  toStatus: SandboxStatus;

  @Column({ type: 'text' })
  reason: string;

  /** User id, or `platform` for the worker, the reconciler and TTL jobs. */
  @Column({ type: 'text' })
  actor: string;

  @Column({ type: 'timestamptz' })
  at: Date;
}

/** A port added to a sandbox, reachable through the platform's proxy. */
@Entity({ name: 'sandbox_ports' })
export class SandboxPortEntity {
  @PrimaryColumn({ name: 'sandbox_id', type: 'text' })
  sandboxId: string;

  @PrimaryColumn({ type: 'integer' })
  port: number;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId: string;

  /** http (also WebSocket upgrades). */
  @Column({ type: 'text' })
  protocol: string;

  /** A public port is reachable without credentials (its URL is the secret-free address of a web app). */
  @Column({ type: 'boolean', default: false })
  public: boolean;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

/** One resource sample of a running sandbox (stats/history); kept for COMPUTE_STATS_RETENTION_HOURS. */
@Entity({ name: 'sandbox_stats' })
export class SandboxStatsEntity {
  @PrimaryColumn({ name: 'sandbox_id', type: 'text' })
  sandboxId: string;

  @PrimaryColumn({ type: 'timestamptz' })
  at: Date;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId: string;

  /** CPU use since the previous sample, in cores (1.0 = one core busy). */
  @Column({ name: 'cpu_cores', type: 'double precision' })
  cpuCores: number;

  /** Cumulative CPU time of the container, ns (the base of the next delta). */
  @Column({ name: 'cpu_nanos', type: 'bigint' })
  cpuNanos: string;

  @Column({ name: 'memory_bytes', type: 'bigint' })
  memoryBytes: string;

  @Column({ name: 'memory_limit_bytes', type: 'bigint' })
  memoryLimitBytes: string;

  @Column({ name: 'network_rx_bytes', type: 'bigint' })
  networkRxBytes: string;

  @Column({ name: 'network_tx_bytes', type: 'bigint' })
  networkTxBytes: string;
}

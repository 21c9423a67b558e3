import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

export const USAGE_KINDS = ['cpu_seconds', 'memory_gb_seconds', 'gpu_seconds'] as const;
export type UsageKind = (typeof USAGE_KINDS)[number];

/**
 * A metered quantity for billing to price later. `idempotency_key` is unique, so a sample
 * processed twice (a retried job, two workers) is recorded once.
 */
@Entity({ name: 'usage_events' })
export class UsageEventEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'idempotency_key', type: 'text' })
  idempotencyKey: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId: string;

  @Column({ name: 'sandbox_id', type: 'text' })
  sandboxId: string;

  @Column({ type: 'text' })
  kind: UsageKind;

  @Column({ type: 'double precision' })
  quantity: number;

  @Column({ name: 'period_start', type: 'timestamptz' })
  periodStart: Date;

  @Column({ name: 'period_end', type: 'timestamptz' })
  periodEnd: Date;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

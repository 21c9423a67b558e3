import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { PlanName, RateLimitValues } from '../../../core/rate-limits';

/**
 * A workspace's plan and the limits in force, as last computed (`computedAt`). Constraints live
 * in the migration (`CreateWorkspaceRateLimits`).
 */
@Entity({ name: 'workspace_rate_limits' })
export class WorkspaceRateLimitEntity {
  @PrimaryColumn({ name: 'workspace_id', type: 'text' })
  workspaceId: string;

  @Column({ name: 'plan', type: 'text' })
  plan: PlanName;

  /** Every key of RateLimitValues; a key added later is filled in from the plan when read. */
  @Column({ name: 'limits', type: 'jsonb' })
  limits: Partial<RateLimitValues>;

  @Column({ name: 'computed_at', type: 'timestamptz' })
  computedAt: Date;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

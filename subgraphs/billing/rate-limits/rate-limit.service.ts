import { requireWorkspaceRole } from '../../../core/access';
import type { PlatformConfig } from '../../../core/config';
import type { RequestContext } from '../../../core/context';
import { ValidationError } from '../../../core/errors';
import type { Logger } from '../../../core/logger';
import { TOPICS, type PlatformPubSub, type RateLimitsChangedEvent } from '../../../core/pubsub';
import { effectiveLimits, MAX_LIMIT_VALUE, RATE_LIMIT_KEYS, type RateLimitValues } from '../../../core/rate-limits';
import type { WorkspaceRateLimitEntity } from './rate-limit.entity';
import { toWorkspaceRateLimits } from './rate-limit.mapper';
import type { RateLimitRepository } from './rate-limit.repository';
import type { WorkspaceRateLimits } from './rate-limit.types';
import type { RateLimitUsageReader } from './rate-limit.usage';

export interface WorkspaceRef {
  workspaceId: string;
}

/** What the gateway's internal route answers. */
export interface EffectiveRateLimits {
  workspaceId: string;
  limits: RateLimitValues;
}

export interface RateLimitServiceOptions {
  repository: RateLimitRepository;
  usage: RateLimitUsageReader;
  /** Read at each computation, so the plan default and overrides are those of the running process. */
  config: Pick<PlatformConfig, 'defaultPlan' | 'rateLimitOverrides'>;
  pubsub: Pick<PlatformPubSub, 'publishSettled'>;
  logger: Logger;
  /** @defaultValue () => new Date() */
  now?: () => Date;
}

/**
 * Workspace rate limits. A workspace's limits are its plan's with the configuration's overrides
 * applied (core/rate-limits.ts `effectiveLimits`), computed on first read and stored as a
 * snapshot; `refresh` recomputes them (after a plan or override change) and tells every gateway
 * to drop its cached copy. Reading needs any role in the workspace; refreshing needs admin.
 */
export class RateLimitService {
  private readonly repository: RateLimitRepository;
  private readonly usage: RateLimitUsageReader;
  private readonly config: RateLimitServiceOptions['config'];
  private readonly pubsub: RateLimitServiceOptions['pubsub'];
  private readonly logger: Logger;
  private readonly now: () => Date;

  constructor(options: RateLimitServiceOptions) {
    this.repository = options.repository;
    this.usage = options.usage;
    this.config = options.config;
    this.pubsub = options.pubsub;
    this.logger = options.logger;
    this.now = options.now ?? (() => new Date());
  }

  async get(ctx: RequestContext, input: WorkspaceRef): Promise<WorkspaceRateLimits> {
    requireWorkspaceRole(ctx, input.workspaceId, 'viewer');
    const row = await this.rowOf(input.workspaceId);
    const limits = this.limitsOf(row);
    return toWorkspaceRateLimits(row, limits, await this.usage.read(input.workspaceId, this.now().getTime()));
  }

  async refresh(ctx: RequestContext, input: WorkspaceRef): Promise<WorkspaceRateLimits> {
    const principal = requireWorkspaceRole(ctx, input.workspaceId, 'admin');
    let row = await this.rowOf(input.workspaceId);
    // The update is conditional on the plan read; a plan changed meanwhile is read again once.
    for (let attempt = 0; ; attempt++) {
      const limits = effectiveLimits(row.plan, row.workspaceId, this.config.rateLimitOverrides);
      const updated = await this.repository.updateLimits(row.workspaceId, row.plan, limits, this.now());
      if (updated) {
        row = updated;
        break;
      }
      if (attempt > 0) throw new Error(`Rate limits of workspace ${input.workspaceId} changed twice during a refresh`);
      row = await this.rowOf(input.workspaceId);
    }
    // Settled before the answer: the gateways apply the new limits from the caller's next request on.
    await this.pubsub.publishSettled(TOPICS.rateLimitsChanged, { workspaceId: row.workspaceId } satisfies RateLimitsChangedEvent).catch(() => undefined);
    this.logger.info('rate limits refreshed', { workspaceId: row.workspaceId, plan: row.plan, limits: row.limits, userId: principal.userId });
    return toWorkspaceRateLimits(row, this.limitsOf(row), await this.usage.read(row.workspaceId, this.now().getTime()));
  }

  /**
   * The limits the gateway enforces, for its internal route. An envelope with a user must be a
   * member of the workspace; one without is the gateway itself.
   */
  async effective(ctx: RequestContext, body: unknown): Promise<EffectiveRateLimits> {
    const { workspaceId } = parseWorkspaceRef(body);
    if (ctx.principal) requireWorkspaceRole(ctx, workspaceId, 'viewer');
    return { workspaceId, limits: this.limitsOf(await this.rowOf(workspaceId)) };
  }

  /** The stored row, created with the default plan and its computed limits on first read. */
  private async rowOf(workspaceId: string): Promise<WorkspaceRateLimitEntity> {
    const existing = await this.repository.find(workspaceId);
    if (existing) return existing;
    const now = this.now();
    const plan = this.config.defaultPlan;
    return this.repository.findOrInsert({
      workspaceId,
      plan,
      limits: effectiveLimits(plan, workspaceId, this.config.rateLimitOverrides),
      computedAt: now,
      createdAt: now,
      updatedAt: now,
    });
  }

  /**
   * The stored snapshot; a key it lacks (a limit added after it was computed) or holds garbled
   * comes from the plan and overrides as they are now.
   */
  private limitsOf(row: WorkspaceRateLimitEntity): RateLimitValues {
    const limits = effectiveLimits(row.plan, row.workspaceId, this.config.rateLimitOverrides);
    for (const key of RATE_LIMIT_KEYS) {
      const stored = row.limits?.[key];
      if (Number.isInteger(stored) && stored! >= 0 && stored! <= MAX_LIMIT_VALUE) limits[key] = stored!;
    }
    return limits;
  }
}

const WORKSPACE_ID = /^[A-Za-z0-9_-]{1,128}$/;

function parseWorkspaceRef(body: unknown): WorkspaceRef {
  const { workspaceId } = (body ?? {}) as { workspaceId?: unknown };
  if (typeof workspaceId !== 'string' || !WORKSPACE_ID.test(workspaceId)) throw new ValidationError('workspaceId is required', { field: 'workspaceId' });
  return { workspaceId };
}

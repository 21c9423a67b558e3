import { InternalClient } from '../../core/internal-client';
import type { Logger } from '../../core/logger';
import { RateLimitedError } from '../../core/errors';

interface CachedLimit {
  value: number;
  until: number;
}

/**
 * The workspace's concurrent-sandbox limit, from billing's internal route (cached 30 s, like the
 * gateway's copy). Billing unreachable: the create is let through and a warning logged — a
 * billing outage must not stop compute; the count is checked again on the next create.
 */
export class ConcurrencyLimits {
  private readonly cache = new Map<string, CachedLimit>();

  constructor(
    private readonly billing: () => InternalClient,
    private readonly logger: Logger,
    private readonly ttlMs = 30_000,
  ) {}

  async checkSandboxes(workspaceId: string, activeNow: number, request: { requestId: string; clientIp: string }): Promise<void> {
    const limit = await this.limitOf(workspaceId, request);
    if (limit !== undefined && activeNow >= limit) {
      throw new RateLimitedError(`Workspace ${workspaceId} already has ${activeNow} active sandboxes, its limit; stop or delete one first`, 5, {
        limit,
        inUse: activeNow,
        kind: 'concurrentSandboxes',
      });
    }
  }

  private async limitOf(workspaceId: string, request: { requestId: string; clientIp: string }): Promise<number | undefined> {
    const cached = this.cache.get(workspaceId);
    if (cached && cached.until > Date.now()) return cached.value;
    try {
      const answer = await this.billing().call<{ limits: { concurrentSandboxes: number } }>('rate-limits/effective', { workspaceId }, request);
      const value = answer.limits.concurrentSandboxes;
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(workspaceId, { value, until: Date.now() + this.ttlMs });
      return value;
    } catch (err) {
      this.logger.warn('concurrent-sandbox limit unavailable; create let through', { workspaceId, err });
      return undefined;
    }
  }
}

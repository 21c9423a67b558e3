import type { RateLimitValues } from '../../../core/rate-limits';
import type { WorkspaceRateLimitEntity } from './rate-limit.entity';
import type { ConcurrencyUsage, RateLimitUsage, RateWindowUsage, WorkspaceRateLimits } from './rate-limit.types';
import type { UsageCounters, WindowCount } from './rate-limit.usage';

/** Row, the limits read from it, and Redis counters → API shape. */
export function toWorkspaceRateLimits(row: WorkspaceRateLimitEntity, limits: RateLimitValues, counters: UsageCounters): WorkspaceRateLimits {
  return {
    workspaceId: row.workspaceId,
    plan: row.plan,
    limits: { ...limits },
    usage: toUsage(limits, counters),
    computedAt: row.computedAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function toUsage(limits: RateLimitValues, counters: UsageCounters): RateLimitUsage {
  return {
    readRequests: toWindow(counters.readRequests, limits.readRequestsPerMinute),
    writeRequests: toWindow(counters.writeRequests, limits.writeRequestsPerMinute),
    concurrentSandboxes: toConcurrency(counters.concurrentSandboxes, limits.concurrentSandboxes),
    concurrentBrowserSessions: toConcurrency(counters.concurrentBrowserSessions, limits.concurrentBrowserSessions),
    aiTokens: toWindow(counters.aiTokens, limits.aiTokensPerMinute),
  };
}

function toWindow(window: WindowCount, limit: number): RateWindowUsage {
  const used = Math.min(window.used, 2_147_483_647);
  return { used, limit, remaining: Math.max(0, limit - used), resetsInSeconds: Math.ceil(window.msToReset / 1000) };
}

function toConcurrency(inUse: number, limit: number): ConcurrencyUsage {
  return { inUse, limit, available: Math.max(0, limit - inUse) };
}

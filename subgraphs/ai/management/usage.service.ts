import { requireWorkspaceRole, selectWorkspaceId } from '../../../core/access';
import type { RequestContext } from '../../../core/context';
import { ValidationError } from '../../../core/errors';
import type { UpstreamService } from './upstreams.service';
import type { AiUpstreamUsageArgs } from './upstreams.types';
import { USAGE_GROUPS, type RealtimeUsageReader, type UsageFilter, type UsageGroupBy, type UsageRepository } from './usage.repository';
import type { AiRealtimeUsage, AiRealtimeUsageArgs, AiUsageArgs, AiUsageReport } from './usage.types';
import { optionalId, parseIsoDate } from './validation';

const DAY_MS = 86_400_000;
/** Window when `from` is not given. */
export const DEFAULT_WINDOW_DAYS = 30;
/** Longest window one report covers. */
export const MAX_WINDOW_DAYS = 366;

export interface UsageServiceOptions {
  usage: UsageRepository;
  realtime: RealtimeUsageReader;
  upstreams: UpstreamService;
}

/** Usage reports over `ai.usage` and the live last minute from Redis. Viewer role. */
export class UsageService {
  constructor(private readonly o: UsageServiceOptions) {}

  async report(ctx: RequestContext, args: AiUsageArgs): Promise<AiUsageReport> {
    const workspaceId = selectWorkspaceId(ctx, args.workspaceId);
    requireWorkspaceRole(ctx, workspaceId, 'viewer');
    const groupBy = parseGroupBy(args.groupBy);
    return this.build({ workspaceId, ...usageWindow(args), model: optionalId(args.model), keyId: optionalId(args.keyId), upstreamId: optionalId(args.upstreamId), poolId: optionalId(args.poolId) }, groupBy);
  }

  /** One upstream's usage by day, in its own workspace. */
  async upstreamUsage(ctx: RequestContext, args: AiUpstreamUsageArgs): Promise<AiUsageReport> {
    const upstream = await this.o.upstreams.load(ctx, args.id, 'viewer');
    return this.build({ workspaceId: upstream.workspaceId, ...usageWindow(args), upstreamId: upstream.id }, 'day');
  }

  async realtime(ctx: RequestContext, args: AiRealtimeUsageArgs): Promise<AiRealtimeUsage> {
    const workspaceId = selectWorkspaceId(ctx, args.workspaceId);
    requireWorkspaceRole(ctx, workspaceId, 'viewer');
    const now = Date.now();
    const totals = await this.o.realtime.lastMinute(workspaceId, now);
    return {
      windowSeconds: this.o.realtime.windowSeconds,
      requests: totals.requests,
      errors: totals.errors,
      inputTokens: totals.inputTokens,
      outputTokens: totals.outputTokens,
      cachedTokens: totals.cachedTokens,
      costUsd: totals.costMicroUsd / 1_000_000,
      at: new Date(now).toISOString(),
    };
  }

  private async build(filter: UsageFilter, groupBy: UsageGroupBy): Promise<AiUsageReport> {
    const { totals, groups } = await this.o.usage.aggregate(filter, groupBy);
    const { key, ...onlyTotals } = totals;
    void key;
    return { from: filter.from.toISOString(), to: filter.to.toISOString(), groupBy, totals: onlyTotals, groups };
  }
}

function parseGroupBy(value: string | null | undefined): UsageGroupBy {
  if (value === null || value === undefined || value === '') return 'day';
  if (!(USAGE_GROUPS as readonly string[]).includes(value)) throw new ValidationError(`groupBy must be one of ${USAGE_GROUPS.join(', ')}`, { field: 'groupBy' });
  return value as UsageGroupBy;
}

/** [from, to): `to` defaults to now, `from` to 30 days before `to`; at most 366 days. */
function usageWindow(args: { from?: string | null; to?: string | null }): { from: Date; to: Date } {
  const to = parseIsoDate(args.to, 'to') ?? new Date();
  const from = parseIsoDate(args.from, 'from') ?? new Date(to.getTime() - DEFAULT_WINDOW_DAYS * DAY_MS);
  if (from > to) throw new ValidationError('from must not be after to', { field: 'from' });
  if (to.getTime() - from.getTime() > MAX_WINDOW_DAYS * DAY_MS) throw new ValidationError(`The window from–to may span at most ${MAX_WINDOW_DAYS} days`, { field: 'from' });
  return { from, to };
}

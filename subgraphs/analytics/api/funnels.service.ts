import { requireUser, requireWorkspaceRole, selectWorkspaceId } from '../../../core/access';
import type { RequestContext } from '../../../core/context';
import { NotFoundError } from '../../../core/errors';
import { ID_PREFIX, hasPrefix, newId } from '../../../core/ids';
import { pageResult, toPage, type PageResult } from '../../../core/pagination';
import type { WorkspaceRole } from '../../../core/principal';
import type { FunnelEntity } from '../model/entities';
import type { FunnelPatch, FunnelRepository } from './funnels.repository';
import type {
  AnalyticsFunnel,
  AnalyticsFunnelAnalysis,
  AnalyzeAnalyticsFunnelArgs,
  CreateAnalyticsFunnelArgs,
  ListAnalyticsFunnelsArgs,
  UpdateAnalyticsFunnelArgs,
} from './funnels.types';
import type { DeletedAnalyticsRecord } from './installations.types';
import type { InstallationService } from './installations.service';
import { toFunnel } from './mapper';
import { DEFAULT_FUNNEL_WINDOW_SECONDS, parseFunnelSteps, parseWindowSeconds, reportRange, requireName } from './validation';

const ratio = (part: number, whole: number): number | null => (whole ? part / whole : null);

/**
 * Funnels of an installation: viewer to read and analyse, member to change, in the
 * installation's workspace; a funnel the caller may not read is 404.
 */
export class FunnelService {
  constructor(
    private readonly installations: InstallationService,
    private readonly funnels: FunnelRepository,
  ) {}

  async load(ctx: RequestContext, id: string, role: WorkspaceRole): Promise<FunnelEntity> {
    requireUser(ctx);
    if (!hasPrefix(id, ID_PREFIX.funnel)) throw new NotFoundError('Funnel', id);
    const row = await this.funnels.findById(id);
    if (!row || !ctx.principal?.memberships[row.workspaceId]) throw new NotFoundError('Funnel', id);
    requireWorkspaceRole(ctx, row.workspaceId, role);
    return row;
  }

  /** Of one installation when given, else of the selected workspace. */
  async list(ctx: RequestContext, args: ListAnalyticsFunnelsArgs): Promise<PageResult<AnalyticsFunnel>> {
    const page = toPage(args);
    let filter: { workspaceId: string; installationId?: string };
    if (args.installationId) {
      const installation = await this.installations.load(ctx, args.installationId, 'viewer');
      filter = { workspaceId: installation.workspaceId, installationId: installation.id };
    } else {
      filter = { workspaceId: selectWorkspaceId(ctx, args.workspaceId) };
      requireWorkspaceRole(ctx, filter.workspaceId, 'viewer');
    }
    const [rows, total] = await this.funnels.list(filter, page);
    return pageResult(rows.map(toFunnel), total, page);
  }

  async get(ctx: RequestContext, id: string): Promise<AnalyticsFunnel> {
    return toFunnel(await this.load(ctx, id, 'viewer'));
  }

  async create(ctx: RequestContext, args: CreateAnalyticsFunnelArgs): Promise<AnalyticsFunnel> {
    const name = requireName(args.name);
    const steps = parseFunnelSteps(args.steps);
    const windowSeconds = parseWindowSeconds(args.windowSeconds) ?? DEFAULT_FUNNEL_WINDOW_SECONDS;
    const installation = await this.installations.load(ctx, args.installationId, 'member');
    const now = new Date();
    const row: FunnelEntity = {
      id: newId(ID_PREFIX.funnel),
      workspaceId: installation.workspaceId,
      installationId: installation.id,
      name,
      steps,
      windowSeconds,
      createdByUserId: ctx.principal?.userId ?? null,
      createdAt: now,
      updatedAt: now,
    };
    await this.funnels.insert(row);
    return toFunnel(row);
  }

  async update(ctx: RequestContext, args: UpdateAnalyticsFunnelArgs): Promise<AnalyticsFunnel> {
    const patch: FunnelPatch = {};
    if (args.name !== undefined && args.name !== null) patch.name = requireName(args.name);
    if (args.steps !== undefined && args.steps !== null) patch.steps = parseFunnelSteps(args.steps);
    const windowSeconds = parseWindowSeconds(args.windowSeconds);
    if (windowSeconds !== null) patch.windowSeconds = windowSeconds;
    const row = await this.load(ctx, args.id, 'member');
    const updatedAt = new Date();
    await this.funnels.update(row.id, patch, updatedAt);
    return toFunnel({ ...row, ...patch, updatedAt });
  }

  async delete(ctx: RequestContext, id: string): Promise<DeletedAnalyticsRecord> {
    const row = await this.load(ctx, id, 'member');
    if (!(await this.funnels.delete(row.id))) throw new NotFoundError('Funnel', id);
    return { id: row.id, deleted: true };
  }

  /** Per step: visitors who reached it in order within the window, conversions, median time from the previous step (FunnelRepository.analyze). */
  async analyze(ctx: RequestContext, args: AnalyzeAnalyticsFunnelArgs): Promise<AnalyticsFunnelAnalysis> {
    const { from, to } = reportRange(args);
    const funnel = await this.load(ctx, args.id, 'viewer');
    const counts = await this.funnels.analyze(funnel.installationId, funnel.steps, funnel.windowSeconds, from, to);
    const steps = toFunnel(funnel).steps.map((step, i) => {
      const visitors = counts[i]?.visitors ?? 0;
      const first = counts[0]?.visitors ?? 0;
      return {
        step: i + 1,
        ...step,
        visitors,
        conversionFromPrevious: i === 0 ? ratio(visitors, visitors) : ratio(visitors, counts[i - 1]?.visitors ?? 0),
        conversionFromFirst: ratio(visitors, first),
        medianSecondsFromPrevious: counts[i]?.median ?? null,
      };
    });
    return {
      funnelId: funnel.id,
      installationId: funnel.installationId,
      from: from.toISOString(),
      to: to.toISOString(),
      windowSeconds: funnel.windowSeconds,
      steps,
      conversion: ratio(steps[steps.length - 1].visitors, steps[0].visitors),
    };
  }
}

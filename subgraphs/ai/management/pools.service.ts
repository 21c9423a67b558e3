import { requireWorkspaceRole, selectWorkspaceId } from '../../../core/access';
import type { RequestContext } from '../../../core/context';
import { ConflictError, NotFoundError, ValidationError } from '../../../core/errors';
import { hasPrefix, ID_PREFIX, newId } from '../../../core/ids';
import type { Logger } from '../../../core/logger';
import { pageResult, toPage, type PageResult } from '../../../core/pagination';
import type { WorkspaceRole } from '../../../core/principal';
import type { PoolEntity, PoolMemberEntity } from '../model/entities';
import type { AiConfigEvents } from './events';
import { toAiPool, toAiPoolMember, toAiPoolMemberRef } from './mapper';
import { UNIQUE_VIOLATION, type NewPoolMember, type PoolRepository } from './pools.repository';
import type { AddAiPoolMemberArgs, AiPool, AiPoolMemberInput, AiPoolSummary, CreateAiPoolArgs, ListAiPoolsArgs, RemoveAiPoolMemberArgs, RemoveAiPoolPlatformMemberArgs } from './pools.types';
import type { ProviderService } from './providers.service';
import type { UpstreamRepository } from './upstreams.repository';
import type { AiDeletedRecord } from './upstreams.types';
import type { UpstreamService } from './upstreams.service';
import { WEIGHT_RANGE } from './upstreams.service';
import { intInRange, optionalId, parseStrategy, requireName } from './validation';

/** Most members one pool may have. */
export const MAX_POOL_MEMBERS = 100;
const PRIORITY_RANGE = [-1000, 1000] as const;

export interface PoolServiceOptions {
  pools: PoolRepository;
  upstreamRows: UpstreamRepository;
  upstreams: UpstreamService;
  providers: ProviderService;
  events: AiConfigEvents;
  logger: Logger;
}

/**
 * Pools of upstreams and platform models. Viewer to read, member to change; a pool (or a member
 * upstream) of another workspace is 404. Deleting a pool that gateway keys still use is 409.
 */
export class PoolService {
  constructor(private readonly o: PoolServiceOptions) {}

  /** Members by id only: a page of pools with every member's upstream would be a large answer. */
  async list(ctx: RequestContext, args: ListAiPoolsArgs): Promise<PageResult<AiPoolSummary>> {
    const workspaceId = selectWorkspaceId(ctx, args.workspaceId);
    requireWorkspaceRole(ctx, workspaceId, 'viewer');
    const page = toPage(args);
    const [rows, total] = await this.o.pools.listByWorkspace(workspaceId, page);
    const members = await this.o.pools.membersOf(rows.map((p) => p.id));
    return pageResult(rows.map((pool) => toAiPool(pool, members.filter((m) => m.poolId === pool.id).map(toAiPoolMemberRef))), total, page);
  }

  async get(ctx: RequestContext, id: string): Promise<AiPool> {
    const [pool] = await this.withMembers([await this.load(ctx, id, 'viewer')]);
    return pool;
  }

  async create(ctx: RequestContext, args: CreateAiPoolArgs): Promise<AiPool> {
    const workspaceId = selectWorkspaceId(ctx, args.workspaceId);
    const principal = requireWorkspaceRole(ctx, workspaceId, 'member');
    const now = new Date();
    const pool: PoolEntity = {
      id: newId(ID_PREFIX.pool),
      workspaceId,
      name: requireName(args.name),
      strategy: parseStrategy(args.strategy),
      storeConversations: args.storeConversations ?? false,
      maxAttempts: intInRange(args.maxAttempts, 'maxAttempts', 1, 10) ?? 3,
      createdByUserId: principal.userId ?? null,
      createdAt: now,
      updatedAt: now,
    };
    const inputs = args.members ?? [];
    if (inputs.length > MAX_POOL_MEMBERS) throw new ValidationError(`members may list at most ${MAX_POOL_MEMBERS} members`, { field: 'members' });
    const members = await Promise.all(inputs.map((input, i) => this.memberRow(pool, input, `members[${i}]`, now)));
    const seen = new Set<string>();
    members.forEach((m, i) => {
      const key = m.upstreamId ?? `pm:${m.platformModelId}`;
      if (seen.has(key)) throw new ValidationError(`members[${i}] repeats a member`, { field: `members[${i}]` });
      seen.add(key);
    });
    const stored = await this.o.pools.insert(pool, members);
    await this.o.events.changed(workspaceId);
    this.o.logger.info('ai pool created', { poolId: pool.id, workspaceId, members: stored.length });
    const [answer] = await this.withMembers([pool], stored);
    return answer;
  }

  async delete(ctx: RequestContext, id: string): Promise<AiDeletedRecord> {
    const pool = await this.load(ctx, id, 'member');
    const outcome = await this.o.pools.deleteUnlessInUse(pool.id);
    if ('missing' in outcome) throw new NotFoundError('Pool', id);
    if (!outcome.deleted) {
      throw new ConflictError(`Pool ${pool.id} is used by ${outcome.activeKeys} gateway key${outcome.activeKeys === 1 ? '' : 's'}; revoke ${outcome.activeKeys === 1 ? 'it' : 'them'} first`, {
        poolId: pool.id,
        activeKeys: outcome.activeKeys,
      });
    }
    await this.o.events.changed(pool.workspaceId);
    this.o.logger.info('ai pool deleted', { poolId: pool.id, workspaceId: pool.workspaceId });
    return { id: pool.id, deleted: true };
  }

  async addMember(ctx: RequestContext, args: AddAiPoolMemberArgs): Promise<AiPool> {
    const pool = await this.load(ctx, args.id, 'member');
    const existing = await this.o.pools.membersOf([pool.id]);
    if (existing.length >= MAX_POOL_MEMBERS) throw new ConflictError(`Pool ${pool.id} already has ${MAX_POOL_MEMBERS} members`, { poolId: pool.id });
    const member = await this.memberRow(pool, args, '', new Date());
    try {
      await this.o.pools.addMember(member);
    } catch (err) {
      if ((err as { code?: string }).code === UNIQUE_VIOLATION) {
        const what = member.upstreamId ? `Upstream ${member.upstreamId}` : `Platform model ${member.platformModelId}`;
        throw new ConflictError(`${what} is already a member of pool ${pool.id}`, { poolId: pool.id, field: member.upstreamId ? 'upstreamId' : 'platformModelId' });
      }
      throw err;
    }
    await this.o.events.changed(pool.workspaceId);
    return this.get(ctx, pool.id);
  }

  async removeMember(ctx: RequestContext, args: RemoveAiPoolMemberArgs): Promise<AiPool> {
    return this.remove(ctx, args.id, { upstreamId: args.upstreamId }, `Upstream ${args.upstreamId} in pool`);
  }

  async removePlatformMember(ctx: RequestContext, args: RemoveAiPoolPlatformMemberArgs): Promise<AiPool> {
    return this.remove(ctx, args.id, { platformModelId: args.platformModelId }, `Platform model ${args.platformModelId} in pool`);
  }

  /** The pool row if the caller holds `role` in its workspace; 404 otherwise. */
  async load(ctx: RequestContext, id: string, role: WorkspaceRole): Promise<PoolEntity> {
    const pool = hasPrefix(id, ID_PREFIX.pool) ? await this.o.pools.findById(id) : null;
    if (!pool || !ctx.principal?.memberships[pool.workspaceId]) throw new NotFoundError('Pool', id);
    requireWorkspaceRole(ctx, pool.workspaceId, role);
    return pool;
  }

  /**
   * The pool row if it belongs to `workspaceId`; 404 otherwise, as for one that does not exist.
   * For the platform's own callers (a workflow step), which carry no principal.
   */
  async loadInWorkspace(workspaceId: string, id: string): Promise<PoolEntity> {
    const pool = hasPrefix(id, ID_PREFIX.pool) ? await this.o.pools.findById(id) : null;
    if (!pool || pool.workspaceId !== workspaceId) throw new NotFoundError('Pool', id);
    return pool;
  }

  private async remove(ctx: RequestContext, poolId: string, member: { upstreamId: string } | { platformModelId: string }, what: string): Promise<AiPool> {
    const pool = await this.load(ctx, poolId, 'member');
    if (!(await this.o.pools.removeMember(pool.id, member))) throw new NotFoundError(what, pool.id);
    await this.o.events.changed(pool.workspaceId);
    return this.get(ctx, pool.id);
  }

  /**
   * A member row from its input: exactly one of upstreamId (an upstream of the pool's own
   * workspace, else 404) and platformModelId (one the operator configured, else 404).
   */
  private async memberRow(pool: PoolEntity, input: AiPoolMemberInput, path: string, now: Date): Promise<NewPoolMember> {
    const field = (name: string) => (path ? `${path}.${name}` : name);
    const upstreamId = optionalId(input.upstreamId);
    const platformModelId = optionalId(input.platformModelId);
    if (Boolean(upstreamId) === Boolean(platformModelId)) {
      throw new ValidationError('Give exactly one of upstreamId and platformModelId', { field: field(upstreamId ? 'platformModelId' : 'upstreamId') });
    }
    if (upstreamId) {
      const upstream = hasPrefix(upstreamId, ID_PREFIX.upstream) ? (await this.o.upstreamRows.findByIds([upstreamId]))[0] : undefined;
      if (!upstream || upstream.workspaceId !== pool.workspaceId) throw new NotFoundError('Upstream', upstreamId);
    } else if (!this.o.providers.platformModel(platformModelId!)) {
      throw new NotFoundError('Platform model', platformModelId);
    }
    return {
      poolId: pool.id,
      upstreamId: upstreamId ?? null,
      platformModelId: platformModelId ?? null,
      weight: intInRange(input.weight, field('weight'), ...WEIGHT_RANGE),
      priority: intInRange(input.priority, field('priority'), ...PRIORITY_RANGE) ?? 0,
      createdAt: now,
    };
  }

  /** Pools with their members and member upstreams: two queries for any number of pools. */
  private async withMembers(pools: PoolEntity[], known?: PoolMemberEntity[]): Promise<AiPool[]> {
    const members = known ?? (await this.o.pools.membersOf(pools.map((p) => p.id)));
    const upstreamIds = [...new Set(members.map((m) => m.upstreamId).filter((id): id is string => Boolean(id)))];
    const upstreams = new Map((await this.o.upstreamRows.findByIds(upstreamIds)).map((row) => [row.id, this.o.upstreams.toApi(row)]));
    return pools.map((pool) =>
      toAiPool(
        pool,
        members
          .filter((m) => m.poolId === pool.id)
          .map((m) => toAiPoolMember(m, m.upstreamId ? (upstreams.get(m.upstreamId) ?? null) : null, m.platformModelId ? (this.o.providers.platformModel(m.platformModelId) ?? null) : null)),
      ),
    );
  }
}

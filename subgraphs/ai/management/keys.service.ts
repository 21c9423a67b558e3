import { randomBytes } from 'node:crypto';
import { requireWorkspaceRole, selectWorkspaceId } from '../../../core/access';
import type { RequestContext } from '../../../core/context';
import { sha256 } from '../../../core/crypto';
import { NotFoundError, ValidationError } from '../../../core/errors';
import { hasPrefix, ID_PREFIX, newId } from '../../../core/ids';
import type { Logger } from '../../../core/logger';
import { pageResult, toPage, type PageResult } from '../../../core/pagination';
import type { WorkspaceRole } from '../../../core/principal';
import type { GatewayKeyEntity } from '../model/entities';
import { GATEWAY_KEY_PREFIX } from '../model/shared';
import type { AiConfigEvents } from './events';
import type { KeyRepository } from './keys.repository';
import type { AiCreatedKey, AiKey, CreateAiKeyArgs, ListAiKeysArgs } from './keys.types';
import { toAiKey } from './mapper';
import type { PoolService } from './pools.service';
import type { AiDeletedRecord } from './upstreams.types';
import { intInRange, parseIsoDate, requireName } from './validation';

/** Characters of the key kept in clear (`keyPrefix`): `wcp_ai_` and five of the random part. */
export const KEY_PREFIX_LENGTH = 12;
const MAX_BUDGET_USD = 1_000_000_000;

/** A new gateway key: `wcp_ai_` and 32 random bytes (base64url). */
export function newGatewayKey(): string {
  return `${GATEWAY_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
}

export interface KeyServiceOptions {
  keys: KeyRepository;
  pools: PoolService;
  events: AiConfigEvents;
  logger: Logger;
}

/**
 * Gateway keys: created against a pool of the same workspace, stored as SHA-256, shown once;
 * DELETE revokes (the row stays, with revokedAt, so usage keeps its key). Viewer to read,
 * member to create and revoke; another workspace's key is 404.
 */
export class KeyService {
  constructor(private readonly o: KeyServiceOptions) {}

  async list(ctx: RequestContext, args: ListAiKeysArgs): Promise<PageResult<AiKey>> {
    const workspaceId = selectWorkspaceId(ctx, args.workspaceId);
    requireWorkspaceRole(ctx, workspaceId, 'viewer');
    const page = toPage(args);
    const [rows, total] = await this.o.keys.listByWorkspace(workspaceId, page);
    return pageResult(rows.map(toAiKey), total, page);
  }

  async create(ctx: RequestContext, args: CreateAiKeyArgs): Promise<AiCreatedKey> {
    const name = requireName(args.name);
    const pool = await this.o.pools.load(ctx, args.poolId, 'member');
    // An explicit workspace (argument or X-Workspace-ID) must be the pool's own.
    const explicit = args.workspaceId || ctx.workspaceHeader;
    if (explicit && explicit !== pool.workspaceId) throw new NotFoundError('Pool', args.poolId);
    const principal = requireWorkspaceRole(ctx, pool.workspaceId, 'member');
    if (args.monthlyBudgetUsd != null && (!Number.isFinite(args.monthlyBudgetUsd) || args.monthlyBudgetUsd < 0 || args.monthlyBudgetUsd > MAX_BUDGET_USD)) {
      throw new ValidationError(`monthlyBudgetUsd must be from 0 to ${MAX_BUDGET_USD}`, { field: 'monthlyBudgetUsd' });
    }
    const now = new Date();
    const expiresAt = parseIsoDate(args.expiresAt, 'expiresAt') ?? null;
    if (expiresAt && expiresAt <= now) throw new ValidationError('expiresAt must be in the future', { field: 'expiresAt' });
    const key = newGatewayKey();
    const row: GatewayKeyEntity = {
      id: newId(ID_PREFIX.gatewayKey),
      workspaceId: pool.workspaceId,
      name,
      poolId: pool.id,
      keyHash: sha256(key),
      keyPrefix: key.slice(0, KEY_PREFIX_LENGTH),
      requestsPerMinute: intInRange(args.requestsPerMinute, 'requestsPerMinute', 1, 1_000_000),
      tokensPerMinute: intInRange(args.tokensPerMinute, 'tokensPerMinute', 1, 2_000_000_000),
      monthlyBudgetUsd: args.monthlyBudgetUsd == null ? null : args.monthlyBudgetUsd.toFixed(4),
      storeConversations: args.storeConversations ?? false,
      expiresAt,
      revokedAt: null,
      createdByUserId: principal.userId ?? null,
      createdAt: now,
      lastUsedAt: null,
    };
    if (!(await this.o.keys.insertForPool(row))) throw new NotFoundError('Pool', args.poolId);
    await this.o.events.changed(row.workspaceId);
    this.o.logger.info('ai gateway key created', { keyId: row.id, workspaceId: row.workspaceId, poolId: row.poolId });
    return { ...toAiKey(row), key };
  }

  /** Revokes the key (idempotent); the proxy refuses it from the next request on. */
  async delete(ctx: RequestContext, id: string): Promise<AiDeletedRecord> {
    const row = await this.load(ctx, id, 'member');
    await this.o.keys.revoke(row.id, new Date());
    await this.o.events.changed(row.workspaceId);
    this.o.logger.info('ai gateway key revoked', { keyId: row.id, workspaceId: row.workspaceId });
    return { id: row.id, deleted: true };
  }

  private async load(ctx: RequestContext, id: string, role: WorkspaceRole): Promise<GatewayKeyEntity> {
    const row = hasPrefix(id, ID_PREFIX.gatewayKey) ? await this.o.keys.findById(id) : null;
    if (!row || !ctx.principal?.memberships[row.workspaceId]) throw new NotFoundError('Gateway key', id);
    requireWorkspaceRole(ctx, row.workspaceId, role);
    return row;
  }
}

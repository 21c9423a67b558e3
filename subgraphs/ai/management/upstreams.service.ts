import { requireWorkspaceRole, selectWorkspaceId } from '../../../core/access';
import type { RequestContext } from '../../../core/context';
import { NotFoundError, ValidationError } from '../../../core/errors';
import { hasPrefix, ID_PREFIX, newId } from '../../../core/ids';
import type { Logger } from '../../../core/logger';
import { pageResult, toPage, type PageResult } from '../../../core/pagination';
import type { WorkspaceRole } from '../../../core/principal';
import type { UpstreamEntity } from '../model/entities';
import type { CredentialVault } from './credentials';
import type { AiConfigEvents } from './events';
import { toAiUpstream } from './mapper';
import { probeUpstream } from './upstream-probe';
import type { UpstreamPatch, UpstreamRepository } from './upstreams.repository';
import type { AiDeletedRecord, AiUpstream, AiUpstreamTestResult, CreateAiUpstreamArgs, ListAiUpstreamsArgs, TestAiUpstreamArgs, UpdateAiUpstreamArgs } from './upstreams.types';
import { intInRange, parseApiKey, parseBaseUrl, parseModelMap, parseModels, parseProvider, PROVIDER_APIS, requireName } from './validation';

export const WEIGHT_RANGE = [1, 1000] as const;
export const TIMEOUT_RANGE_MS = [1000, 600_000] as const;

export interface UpstreamServiceOptions {
  upstreams: UpstreamRepository;
  vault: CredentialVault;
  events: AiConfigEvents;
  logger: Logger;
}

/** What an OAuth completion stores as a new upstream. */
export interface OAuthUpstreamInput {
  workspaceId: string;
  userId: string | null;
  name: string;
  provider: keyof typeof PROVIDER_APIS;
  baseUrl: string;
  accessToken: string;
  refreshToken: string | null;
  expiresAt: Date | null;
}

/**
 * A workspace's upstreams: viewer to read, member to change; an upstream of a workspace the
 * caller is not in is 404. Credentials go in sealed and come out only as a hint.
 */
export class UpstreamService {
  constructor(private readonly o: UpstreamServiceOptions) {}

  async list(ctx: RequestContext, args: ListAiUpstreamsArgs): Promise<PageResult<AiUpstream>> {
    const workspaceId = selectWorkspaceId(ctx, args.workspaceId);
    requireWorkspaceRole(ctx, workspaceId, 'viewer');
    const page = toPage(args);
    const [rows, total] = await this.o.upstreams.listByWorkspace(workspaceId, page);
    return pageResult(rows.map((row) => this.toApi(row)), total, page);
  }

  async get(ctx: RequestContext, id: string): Promise<AiUpstream> {
    return this.toApi(await this.load(ctx, id, 'viewer'));
  }

  async create(ctx: RequestContext, args: CreateAiUpstreamArgs): Promise<AiUpstream> {
    const workspaceId = selectWorkspaceId(ctx, args.workspaceId);
    const principal = requireWorkspaceRole(ctx, workspaceId, 'member');
    const provider = parseProvider(args.provider);
    const id = newId(ID_PREFIX.upstream);
    const now = new Date();
    const row: UpstreamEntity = {
      id,
      workspaceId,
      name: requireName(args.name),
      api: PROVIDER_APIS[provider],
      baseUrl: parseBaseUrl(args.baseUrl),
      authKind: 'api_key',
      credentialCiphertext: this.o.vault.seal(id, parseApiKey(args.apiKey)),
      refreshTokenCiphertext: null,
      credentialExpiresAt: null,
      models: parseModels(args.models),
      modelMap: parseModelMap(args.modelMap),
      weight: intInRange(args.weight, 'weight', ...WEIGHT_RANGE) ?? 1,
      timeoutMs: intInRange(args.timeoutMs, 'timeoutMs', ...TIMEOUT_RANGE_MS) ?? 60_000,
      enabled: args.enabled ?? true,
      createdByUserId: principal.userId ?? null,
      createdAt: now,
      updatedAt: now,
    };
    await this.o.upstreams.insert(row);
    await this.o.events.changed(workspaceId);
    this.o.logger.info('ai upstream created', { upstreamId: id, workspaceId, provider });
    return this.toApi(row);
  }

  /** An upstream whose credential came from an OAuth authorization (oauth.service.ts). */
  async createFromOAuth(input: OAuthUpstreamInput): Promise<AiUpstream> {
    const id = newId(ID_PREFIX.upstream);
    const now = new Date();
    const row: UpstreamEntity = {
      id,
      workspaceId: input.workspaceId,
      name: input.name,
      api: PROVIDER_APIS[input.provider],
      baseUrl: input.baseUrl,
      authKind: 'oauth',
      credentialCiphertext: this.o.vault.seal(id, input.accessToken),
      refreshTokenCiphertext: input.refreshToken ? this.o.vault.seal(id, input.refreshToken, 'refresh_token') : null,
      credentialExpiresAt: input.expiresAt,
      models: [],
      modelMap: {},
      weight: 1,
      timeoutMs: 60_000,
      enabled: true,
      createdByUserId: input.userId,
      createdAt: now,
      updatedAt: now,
    };
    await this.o.upstreams.insert(row);
    await this.o.events.changed(input.workspaceId);
    this.o.logger.info('ai upstream created from oauth', { upstreamId: id, workspaceId: input.workspaceId, provider: input.provider });
    return this.toApi(row);
  }

  async update(ctx: RequestContext, args: UpdateAiUpstreamArgs): Promise<AiUpstream> {
    const row = await this.load(ctx, args.id, 'member');
    const patch: UpstreamPatch = {};
    if (args.name != null) patch.name = requireName(args.name);
    if (args.baseUrl != null) patch.baseUrl = parseBaseUrl(args.baseUrl);
    if (args.apiKey != null) {
      // A key replaces whatever credential there was, OAuth tokens included.
      Object.assign(patch, { authKind: 'api_key', credentialCiphertext: this.o.vault.seal(row.id, parseApiKey(args.apiKey)), refreshTokenCiphertext: null, credentialExpiresAt: null });
    }
    if (args.models != null) patch.models = parseModels(args.models);
    if (args.modelMap != null) patch.modelMap = parseModelMap(args.modelMap);
    if (args.weight != null) patch.weight = intInRange(args.weight, 'weight', ...WEIGHT_RANGE)!;
    if (args.timeoutMs != null) patch.timeoutMs = intInRange(args.timeoutMs, 'timeoutMs', ...TIMEOUT_RANGE_MS)!;
    if (args.enabled != null) patch.enabled = args.enabled;
    if (!Object.keys(patch).length) throw new ValidationError('Give at least one of name, baseUrl, apiKey, models, modelMap, weight, timeoutMs, enabled', { field: 'name' });
    return this.applyPatch(row, patch);
  }

  /** Stores a patch and answers the record as it is now (also used by the OAuth refresh). */
  async applyPatch(row: UpstreamEntity, patch: UpstreamPatch): Promise<AiUpstream> {
    const updatedAt = new Date();
    await this.o.upstreams.update(row.id, patch, updatedAt);
    await this.o.events.changed(row.workspaceId);
    return this.toApi(Object.assign(row, patch, { updatedAt }));
  }

  async delete(ctx: RequestContext, id: string): Promise<AiDeletedRecord> {
    const row = await this.load(ctx, id, 'member');
    if (!(await this.o.upstreams.delete(row.id))) throw new NotFoundError('Upstream', id);
    await this.o.events.changed(row.workspaceId);
    this.o.logger.info('ai upstream deleted', { upstreamId: row.id, workspaceId: row.workspaceId });
    return { id: row.id, deleted: true };
  }

  /** A live call to the upstream with its credential (member role: it spends the credential's quota). */
  async test(ctx: RequestContext, args: TestAiUpstreamArgs): Promise<AiUpstreamTestResult> {
    const row = await this.load(ctx, args.id, 'member');
    let credential: string;
    try {
      credential = this.o.vault.open(row.id, row.credentialCiphertext);
    } catch {
      this.o.logger.error('ai upstream credential failed to decrypt', { upstreamId: row.id });
      return { ok: false, status: null, latencyMs: 0, error: 'The stored credential cannot be read: set apiKey again', models: [] };
    }
    return probeUpstream({ api: row.api, baseUrl: row.baseUrl, authKind: row.authKind, credential }, args.model ?? undefined);
  }

  /**
   * The upstream row (with its credential's ciphertext) if the caller holds `role` in its
   * workspace; 404 when it does not exist or the caller is not a member there.
   */
  async load(ctx: RequestContext, id: string, role: WorkspaceRole, options: { withRefreshToken?: boolean } = {}): Promise<UpstreamEntity> {
    const row = hasPrefix(id, ID_PREFIX.upstream) ? await this.o.upstreams.findById(id, options) : null;
    if (!row || !ctx.principal?.memberships[row.workspaceId]) throw new NotFoundError('Upstream', id);
    requireWorkspaceRole(ctx, row.workspaceId, role);
    return row;
  }

  /**
   * The upstream row if it belongs to `workspaceId`; 404 otherwise, as for one that does not
   * exist. For the platform's own callers (a workflow step), which carry no principal.
   */
  async loadInWorkspace(workspaceId: string, id: string): Promise<UpstreamEntity> {
    const row = hasPrefix(id, ID_PREFIX.upstream) ? await this.o.upstreams.findById(id) : null;
    if (!row || row.workspaceId !== workspaceId) throw new NotFoundError('Upstream', id);
    return row;
  }

  toApi(row: UpstreamEntity): AiUpstream {
    return toAiUpstream(row, this.o.vault.hint(row.id, row.credentialCiphertext));
  }
}

import { randomBytes } from 'node:crypto';
import { requireUser, requireWorkspaceRole, selectWorkspaceId } from '../../../core/access';
import type { RequestContext } from '../../../core/context';
import { NotFoundError } from '../../../core/errors';
import { ID_PREFIX, hasPrefix, newId } from '../../../core/ids';
import { pageResult, toPage, type PageResult } from '../../../core/pagination';
import type { WorkspaceRole } from '../../../core/principal';
import type { InstallationEntity } from '../model/entities';
import { trackSnippet } from '../script';
import type { InstallationPatch, InstallationRepository } from './installations.repository';
import type {
  AnalyticsInstallation,
  AnalyticsInstallationScript,
  CreateAnalyticsInstallationArgs,
  DeletedAnalyticsRecord,
  ListAnalyticsInstallationsArgs,
  UpdateAnalyticsInstallationArgs,
} from './installations.types';
import { toInstallation } from './mapper';
import { parseDomains, requireName } from './validation';

/** Edge paths of the public ingestion routes (REST base /v1 + /analytics/…). */
export const TRACK_SCRIPT_PATH = '/v1/analytics/track.js';
export const INGEST_API_PATH = '/v1/analytics';

export interface InstallationServiceOptions {
  installations: InstallationRepository;
  publicUrl?: string;
  /** Told after an installation's domains changed or it was deleted (ingestion drops its cached copy). */
  installationChanged(installationId: string): Promise<void>;
}

/** `pk_` + 24 url-safe characters (144 random bits). */
export function newPublicKey(): string {
  return `pk_${randomBytes(18).toString('base64url')}`;
}

/**
 * Installations of a workspace: viewer to read, member to change; an installation of a
 * workspace the caller is not in is 404. Reports and funnels reach their installation through
 * `load`, so they share this rule.
 */
export class InstallationService {
  constructor(private readonly o: InstallationServiceOptions) {}

  /** The installation, if the caller holds `role` in its workspace; 404 otherwise (403 for a member with too low a role). */
  async load(ctx: RequestContext, id: string, role: WorkspaceRole): Promise<InstallationEntity> {
    requireUser(ctx);
    if (!hasPrefix(id, ID_PREFIX.installation)) throw new NotFoundError('Installation', id);
    const row = await this.o.installations.findById(id);
    if (!row || !ctx.principal?.memberships[row.workspaceId]) throw new NotFoundError('Installation', id);
    requireWorkspaceRole(ctx, row.workspaceId, role);
    return row;
  }

  async list(ctx: RequestContext, args: ListAnalyticsInstallationsArgs): Promise<PageResult<AnalyticsInstallation>> {
    const workspaceId = selectWorkspaceId(ctx, args.workspaceId);
    requireWorkspaceRole(ctx, workspaceId, 'viewer');
    const page = toPage(args);
    const [rows, total] = await this.o.installations.listByWorkspace(workspaceId, args.includeHidden === true, page);
    return pageResult(rows.map(toInstallation), total, page);
  }

  async get(ctx: RequestContext, id: string): Promise<AnalyticsInstallation> {
    return toInstallation(await this.load(ctx, id, 'viewer'));
  }

  async create(ctx: RequestContext, args: CreateAnalyticsInstallationArgs): Promise<AnalyticsInstallation> {
    const workspaceId = selectWorkspaceId(ctx, args.workspaceId);
    const principal = requireWorkspaceRole(ctx, workspaceId, 'member');
    const name = requireName(args.name);
    const domains = parseDomains(args.domains);
    const now = new Date();
    const row: InstallationEntity = {
      id: newId(ID_PREFIX.installation),
      workspaceId,
      name,
      domains,
      publicKey: newPublicKey(),
      hidden: false,
      createdByUserId: principal.userId ?? null,
      createdAt: now,
      updatedAt: now,
    };
    await this.o.installations.insert(row);
    return toInstallation(row);
  }

  /** Renames it and/or replaces its domains; ingestion forgets its cached copy when the domains change. */
  async update(ctx: RequestContext, args: UpdateAnalyticsInstallationArgs): Promise<AnalyticsInstallation> {
    const row = await this.load(ctx, args.id, 'member');
    const patch: InstallationPatch = {};
    if (args.name !== undefined && args.name !== null) patch.name = requireName(args.name);
    if (args.domains !== undefined && args.domains !== null) patch.domains = parseDomains(args.domains);
    return this.save(row, patch, patch.domains !== undefined && patch.domains.join() !== row.domains.join());
  }

  async setHidden(ctx: RequestContext, id: string, hidden: boolean): Promise<AnalyticsInstallation> {
    const row = await this.load(ctx, id, 'member');
    return row.hidden === hidden ? toInstallation(row) : this.save(row, { hidden }, false);
  }

  /** Deletes it with its funnels, users, sessions and events (InstallationRepository.deleteWithData). */
  async delete(ctx: RequestContext, id: string): Promise<DeletedAnalyticsRecord> {
    const row = await this.load(ctx, id, 'member');
    const deleted = await this.o.installations.deleteWithData(row.id);
    if (!deleted) throw new NotFoundError('Installation', id);
    await this.o.installationChanged(row.id);
    return { id: row.id, deleted: true };
  }

  async script(ctx: RequestContext, id: string): Promise<AnalyticsInstallationScript> {
    const row = await this.load(ctx, id, 'viewer');
    const base = (this.o.publicUrl ?? '').replace(/\/$/, '');
    const scriptUrl = `${base}${TRACK_SCRIPT_PATH}`;
    return { installationId: row.id, publicKey: row.publicKey, scriptUrl, snippet: trackSnippet({ scriptUrl, apiUrl: `${base}${INGEST_API_PATH}`, publicKey: row.publicKey }) };
  }

  private async save(row: InstallationEntity, patch: InstallationPatch, domainsChanged: boolean): Promise<AnalyticsInstallation> {
    const updatedAt = new Date();
    await this.o.installations.update(row.id, patch, updatedAt);
    if (domainsChanged) await this.o.installationChanged(row.id);
    return toInstallation({ ...row, ...patch, updatedAt });
  }
}

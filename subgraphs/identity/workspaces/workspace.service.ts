import { requireUser, requireWorkspaceRole, roleAtLeast } from '../../../core/access';
import type { SubgraphContext } from '../../../core/context';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../../core/errors';
import { WORKSPACE_ROLES, type WorkspaceRole } from '../../../core/principal';
import type { IdentityEvents } from '../identity.events';
import type { IdentityLoaders } from '../identity.loaders';
import type { UserRepository } from '../users/user.repository';
import type { User } from '../users/user.types';
import { toWorkspace, toWorkspaceMember } from './workspace.mapper';
import type { WorkspaceMemberEntity } from './workspace-member.entity';
import type { LockedWorkspace, WorkspaceRepository } from './workspace.repository';
import { MembershipEventKind, type Workspace, type WorkspaceMember } from './workspace.types';

type Ctx = SubgraphContext<IdentityLoaders>;

export class WorkspaceService {
  constructor(
    private readonly workspaces: WorkspaceRepository,
    private readonly users: UserRepository,
    private readonly events: IdentityEvents,
  ) {}

  /** The caller's workspaces, oldest first. */
  async list(ctx: Ctx): Promise<Workspace[]> {
    const principal = requireUser(ctx);
    const rows = await this.workspaces.workspacesOfUser(principal.userId);
    return rows.map(({ workspace, role }) => toWorkspace(workspace, role));
  }

  /** One workspace of the caller's; any other answers 404. */
  async get(ctx: Ctx, input: { id: string }): Promise<Workspace> {
    const principal = requireWorkspaceRole(ctx, input.id);
    const row = await this.workspaces.findById(input.id);
    if (!row) throw new NotFoundError('Workspace', input.id);
    return toWorkspace(row, principal.memberships[input.id]);
  }

  /** A shared workspace; the caller becomes its owner. */
  async create(ctx: Ctx, input: { name: string }): Promise<Workspace> {
    const principal = requireUser(ctx);
    const row = await this.workspaces.createWithOwner(validateWorkspaceName(input.name), principal.userId);
    await this.events.principalChanged({ userId: principal.userId });
    return toWorkspace(row, 'owner');
  }

  /**
   * Workspace.members. The parent Workspace was answered to this caller by a checked call of
   * this service (possibly one that just created it, which the request's principal cannot know
   * yet), so it is the proof of access.
   */
  async members(ctx: Ctx, input: { workspace: Workspace }): Promise<WorkspaceMember[]> {
    requireUser(ctx);
    return ctx.loaders.workspaceMembers.load(input.workspace.id);
  }

  /** WorkspaceMember.user; the parent member was likewise answered by a checked call. */
  async memberUser(ctx: Ctx, input: { member: WorkspaceMember }): Promise<User> {
    requireUser(ctx);
    const user = await ctx.loaders.users.load(input.member.userId);
    if (!user) throw new NotFoundError('User', input.member.userId);
    return user;
  }

  /**
   * Adds a user, or changes the role of one already there (idempotent when the role is the
   * same). Needs admin or owner; only owners grant or take away the owner role, and the last
   * owner cannot be demoted.
   */
  async addMember(ctx: Ctx, input: { workspaceId: string; userId: string; role: WorkspaceRole }): Promise<WorkspaceMember> {
    const principal = requireWorkspaceRole(ctx, input.workspaceId, 'admin');
    if (!WORKSPACE_ROLES.includes(input.role)) throw new ValidationError(`role must be one of ${WORKSPACE_ROLES.join(', ')}`, { field: 'role' });
    const user = await this.users.findById(input.userId);
    if (!user || user.disabledAt) throw new NotFoundError('User', input.userId);
    const result = await this.workspaces.withLockedWorkspace(input.workspaceId, async (locked) => {
      // The principal may be a moment stale; the locked rows are the truth.
      const actor = actingMember(locked, principal.userId, input.workspaceId, 'admin');
      if (input.role === 'owner' && actor.role !== 'owner') throw new ForbiddenError('Only owners may grant the owner role');
      const existing = locked.members.find((m) => m.userId === input.userId);
      if (!existing) return { member: await locked.insertMember(input.userId, input.role), kind: MembershipEventKind.ADDED };
      if (existing.role === input.role) return { member: existing, kind: null };
      if (existing.role === 'owner' && actor.role !== 'owner') throw new ForbiddenError("Only owners may change an owner's role");
      if (existing.role === 'owner' && ownerCount(locked.members) === 1) throw new ConflictError('A workspace must keep at least one owner');
      return { member: await locked.updateRole(existing, input.role), kind: MembershipEventKind.ROLE_CHANGED };
    });
    if (!result) throw new NotFoundError('Workspace', input.workspaceId);
    if (result.kind) await this.events.membershipChanged(result.kind, input.workspaceId, input.userId, input.role);
    return toWorkspaceMember(result.member);
  }

  /**
   * Removes a member. Admins and owners remove others (only owners remove owners); anyone may
   * leave. The last owner cannot be removed (409).
   */
  async removeMember(ctx: Ctx, input: { workspaceId: string; userId: string }): Promise<boolean> {
    const principal = requireWorkspaceRole(ctx, input.workspaceId);
    const removed = await this.workspaces.withLockedWorkspace(input.workspaceId, async (locked) => {
      const self = input.userId === principal.userId;
      const actor = actingMember(locked, principal.userId, input.workspaceId, self ? 'viewer' : 'admin');
      const target = locked.members.find((m) => m.userId === input.userId);
      if (!target) throw new NotFoundError('WorkspaceMember', input.userId);
      if (target.role === 'owner' && !self && actor.role !== 'owner') throw new ForbiddenError('Only owners may remove an owner');
      if (target.role === 'owner' && ownerCount(locked.members) === 1) throw new ConflictError('Cannot remove the last owner of a workspace');
      await locked.deleteMember(target);
      return true;
    });
    if (!removed) throw new NotFoundError('Workspace', input.workspaceId);
    await this.events.membershipChanged(MembershipEventKind.REMOVED, input.workspaceId, input.userId, null);
    return true;
  }

  /** Batch function of the `workspaceMembers` loader. */
  async loadMembersOfWorkspaces(workspaceIds: readonly string[]): Promise<WorkspaceMember[][]> {
    const rows = await this.workspaces.membersOfWorkspaces(workspaceIds);
    const byWorkspace = new Map<string, WorkspaceMember[]>(workspaceIds.map((id) => [id, []]));
    for (const row of rows) byWorkspace.get(row.workspaceId)?.push(toWorkspaceMember(row));
    return workspaceIds.map((id) => byWorkspace.get(id) ?? []);
  }
}

function actingMember(locked: LockedWorkspace, userId: string, workspaceId: string, minRole: WorkspaceRole): WorkspaceMemberEntity {
  const actor = locked.members.find((m) => m.userId === userId);
  if (!actor) throw new NotFoundError('Workspace', workspaceId);
  if (!roleAtLeast(actor.role, minRole)) throw new ForbiddenError(`This needs the ${minRole} role in workspace ${workspaceId}`);
  return actor;
}

function ownerCount(members: WorkspaceMemberEntity[]): number {
  return members.filter((m) => m.role === 'owner').length;
}

function validateWorkspaceName(name: string): string {
  const trimmed = typeof name === 'string' ? name.trim() : '';
  if (!trimmed || trimmed.length > 100) throw new ValidationError('name must be 1 to 100 characters', { field: 'name' });
  return trimmed;
}

/** Access check of the membership subscription (a decorator option, so not a method). */
export function authorizeMembershipWatch(ctx: Ctx, input: { workspaceId: string }): void {
  requireWorkspaceRole(ctx, input.workspaceId);
}

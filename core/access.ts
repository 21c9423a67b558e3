import type { RequestContext } from './context';
import { ForbiddenError, NotFoundError, UnauthenticatedError } from './errors';
import type { Principal, WorkspaceRole } from './principal';

const RANK: Record<WorkspaceRole, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };

export function requireUser(ctx: RequestContext): Principal {
  if (!ctx.principal) throw new UnauthenticatedError();
  return ctx.principal;
}

export function requireAdmin(ctx: RequestContext): Principal {
  const principal = requireUser(ctx);
  if (!principal.isAdmin) throw new ForbiddenError('Only platform administrators may do this');
  return principal;
}

/**
 * The workspace a request acts in: the explicit one (body, query or path), else the
 * X-Workspace-ID header, else the caller's personal workspace (ARCHITECTURE.md, "Workspace").
 */
export function selectWorkspaceId(ctx: RequestContext, explicit?: string | null): string {
  const principal = requireUser(ctx);
  return explicit || ctx.workspaceHeader || principal.defaultWorkspaceId;
}

/**
 * Checks that the caller holds at least `minRole` in the workspace. A workspace the caller is
 * not a member of answers 404 (its existence is not disclosed); a member with too low a role
 * gets 403.
 */
export function requireWorkspaceRole(ctx: RequestContext, workspaceId: string, minRole: WorkspaceRole = 'viewer'): Principal {
  const principal = requireUser(ctx);
  const role = principal.memberships[workspaceId];
  if (!role) throw new NotFoundError('Workspace', workspaceId);
  if (RANK[role] < RANK[minRole]) throw new ForbiddenError(`This needs the ${minRole} role in workspace ${workspaceId}`);
  return principal;
}

/** The subset of `workspaceIds` the caller may read; batches like a DataLoader. */
export function allowedWorkspaces(ctx: RequestContext, workspaceIds: Iterable<string>): Set<string> {
  const memberships = ctx.principal?.memberships ?? {};
  return new Set([...workspaceIds].filter((id) => id in memberships));
}

export function roleAtLeast(role: WorkspaceRole | undefined, minRole: WorkspaceRole): boolean {
  return role !== undefined && RANK[role] >= RANK[minRole];
}

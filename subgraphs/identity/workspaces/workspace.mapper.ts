import type { WorkspaceRole } from '../../../core/principal';
import type { WorkspaceMembership } from '../users/user.types';
import type { WorkspaceEntity } from './workspace.entity';
import type { WorkspaceMemberEntity } from './workspace-member.entity';
import type { MembershipRow } from './workspace.repository';
import type { Workspace, WorkspaceMember } from './workspace.types';

/** The one place workspace rows become API shapes. */
export function toWorkspace(row: WorkspaceEntity, myRole: WorkspaceRole): Workspace {
  return {
    id: row.id,
    name: row.name,
    personal: row.personal,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    myRole,
  };
}

export function toWorkspaceMember(row: WorkspaceMemberEntity): WorkspaceMember {
  return { id: row.id, workspaceId: row.workspaceId, userId: row.userId, role: row.role, createdAt: row.createdAt.toISOString() };
}

export function toWorkspaceMembership(row: MembershipRow): WorkspaceMembership {
  return { workspaceId: row.workspaceId, name: row.name, role: row.role };
}

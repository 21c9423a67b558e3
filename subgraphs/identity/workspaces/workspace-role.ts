import { registerEnumType } from 'type-graphql';
import type { WorkspaceRole } from '../../../core/principal';

/** core/principal.ts WORKSPACE_ROLES as a GraphQL enum; values are the lower-case role names. */
export const WorkspaceRoleEnum: { [R in WorkspaceRole]: R } = {
  owner: 'owner',
  admin: 'admin',
  member: 'member',
  viewer: 'viewer',
};

registerEnumType(WorkspaceRoleEnum, { name: 'WorkspaceRole', description: 'A role in a workspace, strongest first.' });

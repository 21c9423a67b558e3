import DataLoader from 'dataloader';
import type { User, WorkspaceMembership } from './users/user.types';
import type { WorkspaceMember } from './workspaces/workspace.types';
import type { IdentityServices } from './identity.services';

/** Per-request loaders: each batches one request's lookups into one query. */
export interface IdentityLoaders extends Record<string, unknown> {
  /** Users by id: one `WHERE id = ANY($1)` per batch (User references, member users). */
  users: DataLoader<string, User | null>;
  /** Memberships of users (User.workspaces). */
  userWorkspaces: DataLoader<string, WorkspaceMembership[]>;
  /** Members of workspaces (Workspace.members). */
  workspaceMembers: DataLoader<string, WorkspaceMember[]>;
  /** Whether users have TOTP enabled (User.totpEnabled). */
  totpEnabled: DataLoader<string, boolean>;
}

export function createIdentityLoaders(services: IdentityServices): IdentityLoaders {
  return {
    users: new DataLoader((ids) => services.users.loadByIds(ids)),
    userWorkspaces: new DataLoader((ids) => services.users.loadWorkspacesOfUsers(ids)),
    workspaceMembers: new DataLoader((ids) => services.workspaces.loadMembersOfWorkspaces(ids)),
    totpEnabled: new DataLoader((ids) => services.totp.enabledForUsers(ids)),
  };
}

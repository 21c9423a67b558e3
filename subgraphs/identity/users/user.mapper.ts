import type { UserEntity } from './user.entity';
import type { User, WorkspaceMembership } from './user.types';

/** The one place a users row becomes the API's User. */
export function toUser(row: UserEntity, workspaces?: WorkspaceMembership[]): User {
  return {
    id: row.id,
    username: row.username,
    isAdmin: row.isAdmin,
    defaultWorkspaceId: row.defaultWorkspaceId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    ...(workspaces ? { preloadedWorkspaces: workspaces } : {}),
  };
}

import { Arg, Ctx, FieldResolver, ID, Mutation, Resolver, Root } from 'type-graphql';
import type { WorkspaceRole } from '../../../core/principal';
import type { IdentityContext } from '../identity.context';
import { User } from '../users/user.types';
import { WorkspaceRoleEnum } from './workspace-role';
import type { WorkspaceService } from './workspace.service';
import { WorkspaceMember } from './workspace.types';

@Resolver(() => WorkspaceMember)
export class WorkspaceMemberResolver {
  constructor(private readonly service: WorkspaceService) {}

  @Mutation(() => WorkspaceMember, { description: 'Adds a user, or changes the role of a member. Needs admin or owner.' })
  addWorkspaceMember(
    @Arg('workspaceId', () => ID) workspaceId: string,
    @Arg('userId', () => ID) userId: string,
    @Arg('role', () => WorkspaceRoleEnum) role: WorkspaceRole,
    @Ctx() ctx: IdentityContext,
  ): Promise<WorkspaceMember> {
    return this.service.addMember(ctx, { workspaceId, userId, role });
  }

  @Mutation(() => Boolean, { description: 'Removes a member (or leaves); the last owner cannot go.' })
  removeWorkspaceMember(@Arg('workspaceId', () => ID) workspaceId: string, @Arg('userId', () => ID) userId: string, @Ctx() ctx: IdentityContext): Promise<boolean> {
    return this.service.removeMember(ctx, { workspaceId, userId });
  }

  @FieldResolver(() => User)
  user(@Root() member: WorkspaceMember, @Ctx() ctx: IdentityContext): Promise<User> {
    return this.service.memberUser(ctx, { member });
  }
}

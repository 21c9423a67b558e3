import { Arg, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { IdentityContext } from '../identity.context';
import type { WorkspaceService } from './workspace.service';
import { Workspace, WorkspaceMember } from './workspace.types';

@Resolver(() => Workspace)
export class WorkspaceResolver {
  constructor(private readonly service: WorkspaceService) {}

  @Query(() => [Workspace], { description: "The caller's workspaces." })
  workspaces(@Ctx() ctx: IdentityContext): Promise<Workspace[]> {
    return this.service.list(ctx);
  }

  @Query(() => Workspace, { description: 'One of the caller’s workspaces; others answer NOT_FOUND.' })
  workspace(@Arg('id', () => ID) id: string, @Ctx() ctx: IdentityContext): Promise<Workspace> {
    return this.service.get(ctx, { id });
  }

  @Mutation(() => Workspace, { description: 'A shared workspace; the caller becomes its owner.' })
  createWorkspace(@Arg('name', () => String) name: string, @Ctx() ctx: IdentityContext): Promise<Workspace> {
    return this.service.create(ctx, { name });
  }

  @FieldResolver(() => [WorkspaceMember])
  members(@Root() workspace: Workspace, @Ctx() ctx: IdentityContext): Promise<WorkspaceMember[]> {
    return this.service.members(ctx, { workspace });
  }
}

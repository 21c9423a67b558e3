import { Arg, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { IdentityContext } from '../identity.context';
import type { UserService } from './user.service';
import { User, WorkspaceMembership } from './user.types';

@Resolver(() => User)
export class UserResolver {
  constructor(private readonly service: UserService) {}

  @Query(() => User, { description: 'The caller.' })
  profile(@Ctx() ctx: IdentityContext): Promise<User> {
    return this.service.profile(ctx);
  }

  @Query(() => User, { description: 'A user: administrators read anyone, others only themselves.' })
  user(@Arg('id', () => ID) id: string, @Ctx() ctx: IdentityContext): Promise<User> {
    return this.service.get(ctx, { id });
  }

  @Mutation(() => User, { description: 'Administrators only. The user gets a personal workspace.' })
  createUser(
    @Arg('username', () => String) username: string,
    @Arg('password', () => String) password: string,
    @Ctx() ctx: IdentityContext,
  ): Promise<User> {
    return this.service.create(ctx, { username, password });
  }

  @FieldResolver(() => Boolean, {
    nullable: true,
    description: 'Whether a TOTP second factor is enabled. Only the user and administrators see it; null for anyone else.',
  })
  totpEnabled(@Root() user: User, @Ctx() ctx: IdentityContext): Promise<boolean> | null {
    const principal = ctx.principal;
    const self = user.signingIn || principal?.userId === user.id;
    if (!self && !principal?.isAdmin) return null;
    return ctx.loaders.totpEnabled.load(user.id);
  }

  @FieldResolver(() => [WorkspaceMembership])
  workspaces(@Root() user: User, @Ctx() ctx: IdentityContext): Promise<WorkspaceMembership[]> {
    return this.service.workspacesOf(ctx, user);
  }
}

import { Args, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../../core/context';
import type { PoolService } from './pools.service';
import { AddAiPoolMemberArgs, AiPool, AiPoolIdArgs, AiPoolList, CreateAiPoolArgs, ListAiPoolsArgs, RemoveAiPoolMemberArgs, RemoveAiPoolPlatformMemberArgs } from './pools.types';
import { AiDeletedRecord } from './upstreams.types';

/** One line per field: the logic is in PoolService. */
@Resolver(() => AiPool)
export class AiPoolResolver {
  constructor(private readonly service: PoolService) {}

  @Query(() => AiPoolList, { description: 'Pools of a workspace with their members, newest first.' })
  aiPools(@Ctx() ctx: RequestContext, @Args(() => ListAiPoolsArgs) args: ListAiPoolsArgs) {
    return this.service.list(ctx, args);
  }

  @Query(() => AiPool)
  aiPool(@Ctx() ctx: RequestContext, @Args(() => AiPoolIdArgs) args: AiPoolIdArgs) {
    return this.service.get(ctx, args.id);
  }

  @Mutation(() => AiPool, { description: 'Creates a pool, with its first members if given.' })
  createAiPool(@Ctx() ctx: RequestContext, @Args(() => CreateAiPoolArgs) args: CreateAiPoolArgs) {
    return this.service.create(ctx, args);
  }

  @Mutation(() => AiDeletedRecord, { description: 'Deletes the pool; refused (409) while gateway keys that are not revoked use it.' })
  deleteAiPool(@Ctx() ctx: RequestContext, @Args(() => AiPoolIdArgs) args: AiPoolIdArgs) {
    return this.service.delete(ctx, args.id);
  }

  @Mutation(() => AiPool, { description: 'Adds an upstream of the workspace or a platform model (exactly one); 409 when it is already a member.' })
  addAiPoolMember(@Ctx() ctx: RequestContext, @Args(() => AddAiPoolMemberArgs) args: AddAiPoolMemberArgs) {
    return this.service.addMember(ctx, args);
  }

  @Mutation(() => AiPool, { description: 'Removes an upstream from the pool.' })
  removeAiPoolMember(@Ctx() ctx: RequestContext, @Args(() => RemoveAiPoolMemberArgs) args: RemoveAiPoolMemberArgs) {
    return this.service.removeMember(ctx, args);
  }

  @Mutation(() => AiPool, { description: 'Removes a platform model from the pool.' })
  removeAiPoolPlatformMember(@Ctx() ctx: RequestContext, @Args(() => RemoveAiPoolPlatformMemberArgs) args: RemoveAiPoolPlatformMemberArgs) {
    return this.service.removePlatformMember(ctx, args);
  }
}

import { Args, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../../core/context';
import type { KeyService } from './keys.service';
import { AiCreatedKey, AiKey, AiKeyIdArgs, AiKeyList, CreateAiKeyArgs, ListAiKeysArgs } from './keys.types';
import { AiDeletedRecord } from './upstreams.types';

/** One line per field: the logic is in KeyService. */
@Resolver(() => AiKey)
export class AiKeyResolver {
  constructor(private readonly service: KeyService) {}

  @Query(() => AiKeyList, { description: 'Gateway keys of a workspace (revoked ones included), newest first. Never the keys themselves.' })
  aiKeys(@Ctx() ctx: RequestContext, @Args(() => ListAiKeysArgs) args: ListAiKeysArgs) {
    return this.service.list(ctx, args);
  }

  @Mutation(() => AiCreatedKey, { description: 'Creates a gateway key for a pool; the answer carries the key, shown this once.' })
  createAiKey(@Ctx() ctx: RequestContext, @Args(() => CreateAiKeyArgs) args: CreateAiKeyArgs) {
    return this.service.create(ctx, args);
  }

  @Mutation(() => AiDeletedRecord, { description: 'Revokes the key (the record stays, with revokedAt).' })
  deleteAiKey(@Ctx() ctx: RequestContext, @Args(() => AiKeyIdArgs) args: AiKeyIdArgs) {
    return this.service.delete(ctx, args.id);
  }
}

import { Args, Ctx, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../../core/context';
import type { ConversationService } from './conversations.service';
import { AiConversation, AiConversationArgs, AiConversationList, ListAiConversationsArgs } from './conversations.types';

/** One line per field: the logic is in ConversationService. */
@Resolver(() => AiConversation)
export class AiConversationResolver {
  constructor(private readonly service: ConversationService) {}

  @Query(() => AiConversationList, { description: 'Stored conversations of a workspace, newest first, without bodies.' })
  aiConversations(@Ctx() ctx: RequestContext, @Args(() => ListAiConversationsArgs) args: ListAiConversationsArgs) {
    return this.service.list(ctx, args);
  }

  @Query(() => AiConversation, { description: 'One stored conversation with its bodies and usage.' })
  aiConversation(@Ctx() ctx: RequestContext, @Args(() => AiConversationArgs) args: AiConversationArgs) {
    return this.service.get(ctx, args.requestId);
  }
}

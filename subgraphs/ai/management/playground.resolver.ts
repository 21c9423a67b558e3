import { Args, Ctx, Mutation, Resolver } from 'type-graphql';
import type { RequestContext } from '../../../core/context';
import type { PlaygroundService } from './playground.service';
import { AiPlaygroundChatArgs, AiPlaygroundChatResult, AiPlaygroundEmbeddingsArgs, AiPlaygroundEmbeddingsResult } from './playground.types';

/** One line per field: the logic is in PlaygroundService. */
@Resolver()
export class AiPlaygroundResolver {
  constructor(private readonly service: PlaygroundService) {}

  @Mutation(() => AiPlaygroundChatResult, { description: 'Sends a chat through a pool or to one upstream (metered like any request).' })
  aiPlaygroundChat(@Ctx() ctx: RequestContext, @Args(() => AiPlaygroundChatArgs) args: AiPlaygroundChatArgs) {
    return this.service.chat(ctx, args);
  }

  @Mutation(() => AiPlaygroundEmbeddingsResult, { description: 'Embeds a string or strings through a pool or with one upstream.' })
  aiPlaygroundEmbeddings(@Ctx() ctx: RequestContext, @Args(() => AiPlaygroundEmbeddingsArgs) args: AiPlaygroundEmbeddingsArgs) {
    return this.service.embeddings(ctx, args);
  }
}

import { Args, Ctx, Mutation, Resolver } from 'type-graphql';
import type { RequestContext } from '../../../core/context';
import type { AiOAuthService } from './oauth.service';
import { AiOAuthStart, CompleteAiOAuthArgs, RefreshAiOAuthArgs, StartAiOAuthArgs } from './oauth.types';
import { AiUpstream } from './upstreams.types';

/** One line per field: the logic is in AiOAuthService. REST: POST /ai-gateway/oauth/vendor-x/{start,complete,refresh}. */
@Resolver()
export class AiOAuthResolver {
  constructor(private readonly service: AiOAuthService) {}

  @Mutation(() => AiOAuthStart, { description: 'Starts an OAuth authorization of an upstream credential (PKCE S256).' })
  startAiOAuth(@Ctx() ctx: RequestContext, @Args(() => StartAiOAuthArgs) args: StartAiOAuthArgs) {
    return this.service.start(ctx, args);
  }

  @Mutation(() => AiUpstream, { description: 'Exchanges the code of the redirect and creates the upstream (authKind oauth).' })
  completeAiOAuth(@Ctx() ctx: RequestContext, @Args(() => CompleteAiOAuthArgs) args: CompleteAiOAuthArgs) {
    return this.service.complete(ctx, args);
  }

  @Mutation(() => AiUpstream, { description: "Refreshes an OAuth upstream's access token; 409 when the provider refuses." })
  refreshAiOAuth(@Ctx() ctx: RequestContext, @Args(() => RefreshAiOAuthArgs) args: RefreshAiOAuthArgs) {
    return this.service.refresh(ctx, args);
  }
}

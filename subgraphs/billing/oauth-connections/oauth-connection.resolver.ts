import { Args, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../../core/context';
import type { OAuthConnectionService } from './oauth-connection.service';
import {
  CreateOAuthConnectionUrlArgs,
  DeletedOAuthConnection,
  ExchangeOAuthConnectionCodeArgs,
  ListOAuthConnectionsArgs,
  OAuthAuthorizationUrl,
  OAuthConnection,
  OAuthConnectionArgs,
  OAuthConnectionList,
} from './oauth-connection.types';

/** One line per field: the logic is in OAuthConnectionService. */
@Resolver(() => OAuthConnection)
export class OAuthConnectionResolver {
  constructor(private readonly service: OAuthConnectionService) {}

  @Query(() => OAuthConnectionList, { description: "A workspace's connections to a provider, newest first (no tokens). Needs the viewer role." })
  oauthConnections(@Ctx() ctx: RequestContext, @Args(() => ListOAuthConnectionsArgs) args: ListOAuthConnectionsArgs): Promise<OAuthConnectionList> {
    return this.service.list(ctx, args);
  }

  @Mutation(() => OAuthAuthorizationUrl, { description: 'Starts connecting a provider account: the URL to send the user to. Needs the admin role.' })
  createOAuthConnectionUrl(@Ctx() ctx: RequestContext, @Args(() => CreateOAuthConnectionUrlArgs) args: CreateOAuthConnectionUrlArgs): Promise<OAuthAuthorizationUrl> {
    return this.service.createAuthorizationUrl(ctx, args);
  }

  @Mutation(() => OAuthConnection, { description: 'Finishes connecting: exchanges the code from the redirect and stores the tokens encrypted. Needs the admin role.' })
  exchangeOAuthConnectionCode(@Ctx() ctx: RequestContext, @Args(() => ExchangeOAuthConnectionCodeArgs) args: ExchangeOAuthConnectionCodeArgs): Promise<OAuthConnection> {
    return this.service.exchangeCode(ctx, args);
  }

  @Mutation(() => DeletedOAuthConnection, { description: "Removes a connection and revokes its tokens at the provider (best effort). Needs the admin role." })
  deleteOAuthConnection(@Ctx() ctx: RequestContext, @Args(() => OAuthConnectionArgs) args: OAuthConnectionArgs): Promise<DeletedOAuthConnection> {
    return this.service.delete(ctx, args);
  }
}

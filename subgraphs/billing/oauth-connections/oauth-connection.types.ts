import { ArgsType, Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import type { IdpName } from '../../../core/config';
import { PageArgs, PaginatedList } from '../../../core/pagination';
import { User, type UserReference } from '../user.types';
import type { OAuthConnectionStatus } from './oauth-connection.entity';

/**
 * The identity providers as a GraphQL enum. Enum value names cannot contain `-`, so the names
 * are IDP_A / IDP_B and the values resolvers see are the platform's names `idp-a` / `idp-b`.
 */
export const OAuthProviderEnum: { IDP_A: 'idp-a'; IDP_B: 'idp-b' } = { IDP_A: 'idp-a', IDP_B: 'idp-b' };
registerEnumType(OAuthProviderEnum, {
  name: 'OAuthProvider',
  description: 'An identity provider a workspace can connect to (the REST paths name them idp-a and idp-b).',
  valuesConfig: { IDP_A: { description: 'idp-a' }, IDP_B: { description: 'idp-b' } },
});

/** Lower-case values, like WorkspaceRole. */
export const OAuthConnectionStatusEnum: { [S in OAuthConnectionStatus]: S } = { active: 'active', reauthorization_required: 'reauthorization_required' };
registerEnumType(OAuthConnectionStatusEnum, {
  name: 'OAuthConnectionStatus',
  description: 'Whether a connection can still hand out access tokens.',
  valuesConfig: {
    active: { description: 'Tokens are usable; the access token is refreshed when due.' },
    reauthorization_required: { description: 'The provider refused to refresh (revoked or expired grant): connect the account again.' },
  },
});

const PROVIDER_ARG = { defaultValue: OAuthProviderEnum.IDP_A, description: 'The identity provider. Default IDP_A (the REST routes are those of idp-a).' };

/** A connection's metadata. The tokens stay in billing: no field returns them. */
@ObjectType({ description: "A workspace's connection to an account at an identity provider. Its tokens are never returned." })
export class OAuthConnection {
  @Field(() => ID)
  id: string;

  @Field(() => ID)
  workspaceId: string;

  @Field(() => OAuthProviderEnum)
  provider: IdpName;

  @Field(() => OAuthConnectionStatusEnum)
  status: OAuthConnectionStatus;

  @Field(() => String, { description: "The account's id at the provider (the sub claim)." })
  subject: string;

  @Field(() => String, { nullable: true, description: "The account's email, as the provider gave it, for display." })
  email: string | null;

  @Field(() => String, { nullable: true, description: "The account's name, as the provider gave it, for display." })
  name: string | null;

  @Field(() => [String], { description: 'Scopes granted to the connection.' })
  scopes: string[];

  @Field(() => String, { nullable: true, description: 'ISO 8601; when the current access token expires (null when the provider did not say).' })
  accessTokenExpiresAt: string | null;

  @Field(() => String, { description: 'ISO 8601.' })
  createdAt: string;

  @Field(() => String, { description: 'ISO 8601; changes on re-connection, refresh and status change.' })
  updatedAt: string;

  @Field(() => String, { nullable: true, description: 'ISO 8601; the last time the access token was refreshed (null until then).' })
  lastRefreshedAt: string | null;

  @Field(() => User, { description: 'The user who first connected the account.' })
  createdBy: UserReference;
}

@ObjectType({ description: 'A page of OAuth connections.' })
export class OAuthConnectionList extends PaginatedList(OAuthConnection) {}

@ObjectType({ description: 'Where to send the user to authorise a workspace connection.' })
export class OAuthAuthorizationUrl {
  @Field(() => String, { description: "The provider's authorization URL (state, PKCE challenge and scopes included)." })
  url: string;

  @Field(() => String, { description: 'Comes back on the redirect; pass it with the code to the exchange. Single use.' })
  state: string;

  @Field(() => String, { description: 'Where the provider will redirect with the code.' })
  redirectUri: string;

  @Field(() => [String])
  scopes: string[];

  @Field(() => String, { description: 'ISO 8601; the exchange refuses the state after this.' })
  expiresAt: string;
}

@ObjectType({ description: 'What deleting an OAuth connection answers.' })
export class DeletedOAuthConnection {
  @Field(() => ID)
  id: string;

  @Field(() => Boolean)
  deleted: boolean;
}

@ArgsType()
export class ListOAuthConnectionsArgs extends PageArgs {
  @Field(() => ID)
  workspaceId: string;

  @Field(() => OAuthProviderEnum, PROVIDER_ARG)
  provider: IdpName;
}

@ArgsType()
export class CreateOAuthConnectionUrlArgs {
  @Field(() => ID)
  workspaceId: string;

  @Field(() => OAuthProviderEnum, PROVIDER_ARG)
  provider: IdpName;

  @Field(() => String, { nullable: true, description: "Where the provider redirects with the code; it must be registered with the provider. Default: the platform's configured connection redirect URI." })
  redirectUri?: string | null;

  @Field(() => [String], { nullable: true, description: "Scopes to ask for. Default: the provider's configured connection scopes (with offline_access for OIDC)." })
  scopes?: string[] | null;
}

@ArgsType()
export class ExchangeOAuthConnectionCodeArgs {
  @Field(() => ID)
  workspaceId: string;

  @Field(() => OAuthProviderEnum, PROVIDER_ARG)
  provider: IdpName;

  @Field(() => String, { description: 'The code from the redirect.' })
  code: string;

  @Field(() => String, { description: 'The state from the redirect, as auth-url answered it.' })
  state: string;

  @Field(() => String, { nullable: true, description: "The redirect's iss parameter (RFC 9207), checked when given." })
  iss?: string | null;
}

@ArgsType()
export class OAuthConnectionArgs {
  @Field(() => ID)
  workspaceId: string;

  @Field(() => OAuthProviderEnum, PROVIDER_ARG)
  provider: IdpName;

  @Field(() => ID)
  connectionId: string;
}

import { requireUser } from '../../core/access';
import { defineSubgraph, startSubgraph, type PlatformRuntime } from '../../core/subgraph';
import { ApiKeyEntity } from './api-keys/api-key.entity';
import { ApiKeyResolver } from './api-keys/api-key.resolver';
import { AuthResolver } from './auth/auth.resolver';
import { RefreshTokenEntity } from './auth/refresh-token.entity';
import type { IdentityContext } from './identity.context';
import { IdpResolver } from './idp/idp.resolver';
import { idpInternalRoutes } from './idp/idp.routes';
import { UserIdentityEntity } from './idp/user-identity.entity';
import { createIdentityLoaders, type IdentityLoaders } from './identity.loaders';
import { createIdentityServices, type IdentityServices } from './identity.services';
import { CreateIdentitySchema1767225600000 } from './migrations/1767225600000-CreateIdentitySchema';
import { AddTotp1767312000000 } from './migrations/1767312000000-AddTotp';
import { AddUserIdentities1767398400000 } from './migrations/1767398400000-AddUserIdentities';
import { TotpRecoveryCodeEntity } from './totp/totp-recovery-code.entity';
import { TotpResolver } from './totp/totp.resolver';
import { UserTotpEntity } from './totp/user-totp.entity';
import { UserEntity } from './users/user.entity';
import { UserResolver } from './users/user.resolver';
import { MembershipEventsResolver } from './workspaces/membership-events.resolver';
import { WorkspaceMemberEntity } from './workspaces/workspace-member.entity';
import { WorkspaceMemberResolver } from './workspaces/workspace-member.resolver';
import { WorkspaceEntity } from './workspaces/workspace.entity';
import { WorkspaceResolver } from './workspaces/workspace.resolver';

/** The identity domain: users, sign-in and tokens, TOTP second factor, API keys, workspaces and their members. */
export const identitySubgraph = defineSubgraph<IdentityServices, IdentityLoaders>({
  name: 'identity',
  resolvers: [UserResolver, AuthResolver, TotpResolver, IdpResolver, ApiKeyResolver, WorkspaceResolver, WorkspaceMemberResolver, MembershipEventsResolver],
  entities: [UserEntity, WorkspaceEntity, WorkspaceMemberEntity, RefreshTokenEntity, ApiKeyEntity, UserTotpEntity, TotpRecoveryCodeEntity, UserIdentityEntity],
  migrations: [CreateIdentitySchema1767225600000, AddTotp1767312000000, AddUserIdentities1767398400000],
  createServices: createIdentityServices,
  createResolvers: (services) => [
    new UserResolver(services.users),
    new AuthResolver(services.auth),
    new TotpResolver(services.totp),
    new IdpResolver(services.idp),
    new ApiKeyResolver(services.apiKeys),
    new WorkspaceResolver(services.workspaces),
    new WorkspaceMemberResolver(services.workspaces),
    new MembershipEventsResolver(),
  ],
  createLoaders: createIdentityLoaders,
  referenceResolvers: {
    User: {
      // Any signed-in caller; batched per request, so N references cost one users query.
      __resolveReference: (reference: { id: string }, ctx: IdentityContext) => {
        requireUser(ctx);
        return ctx.loaders.users.load(reference.id);
      },
    },
  },
  internalRoutes: (services) => ({
    /** The gateway's principal lookup: `{ userId }` (verified JWT) or `{ apiKey }`. */
    principal: async ({ body }) => services.principals.resolve(body),
    /** Browser sign-in through identity providers: `idp/start`, `idp/callback` (gateway/idp-login.ts). */
    ...idpInternalRoutes(services.idp),
  }),
  onStart: async (services, deps) => {
    await services.users.bootstrapAdmin({ username: deps.config.adminUsername, password: deps.config.adminPassword });
  },
});

export function start(runtime: PlatformRuntime, port?: number) {
  return startSubgraph(identitySubgraph, runtime, port);
}

export { purgeExpiredRefreshTokens } from './auth/refresh-token.maintenance';
export { PASSWORD_HASH_PARAMS } from './users/password';

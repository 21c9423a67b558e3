import { OAuthClients } from '../../core/oauth-client';
import type { SubgraphDeps } from '../../core/subgraph';
import { ApiKeyRepository } from './api-keys/api-key.repository';
import { ApiKeyService } from './api-keys/api-key.service';
import { AuthService } from './auth/auth.service';
import { LoginThrottle } from './auth/login-throttle';
import { PrincipalService } from './auth/principal.service';
import { RefreshTokenRepository } from './auth/refresh-token.repository';
import { IdentityEvents } from './identity.events';
import { IdpFlowStore } from './idp/idp-flow.store';
import { IdpService } from './idp/idp.service';
import { ProviderSignIn } from './idp/provider-sign-in';
import { UserIdentityRepository } from './idp/user-identity.repository';
import { MfaChallengeStore } from './totp/mfa-challenge.store';
import { TotpThrottle } from './totp/totp-throttle';
import { TotpRepository } from './totp/totp.repository';
import { TotpService } from './totp/totp.service';
import { UserRepository } from './users/user.repository';
import { UserService } from './users/user.service';
import { WorkspaceRepository } from './workspaces/workspace.repository';
import { WorkspaceService } from './workspaces/workspace.service';

export interface IdentityServices {
  users: UserService;
  workspaces: WorkspaceService;
  auth: AuthService;
  apiKeys: ApiKeyService;
  principals: PrincipalService;
  idp: IdpService;
  totp: TotpService;
}

/** Builds the identity domain once per process: repositories, then the services over them. */
export function createIdentityServices(deps: SubgraphDeps): IdentityServices {
  const users = new UserRepository(deps.dataSource);
  const workspaces = new WorkspaceRepository(deps.dataSource);
  const apiKeys = new ApiKeyRepository(deps.dataSource);
  const refreshTokens = new RefreshTokenRepository(deps.dataSource);
  const events = new IdentityEvents(deps.pubsub);
  const auth = new AuthService({ users, workspaces, refreshTokens, throttle: new LoginThrottle(deps.redis, deps.config), config: deps.config, logger: deps.logger });
  const totp = new TotpService({
    totp: new TotpRepository(deps.dataSource),
    users,
    sessions: auth,
    challenges: new MfaChallengeStore(deps.redis, deps.config),
    throttle: new TotpThrottle(deps.redis, deps.config),
    config: deps.config,
    logger: deps.logger,
  });
  auth.setMfaGate(totp);
  return {
    users: new UserService(users, workspaces, events, deps.logger),
    workspaces: new WorkspaceService(workspaces, users, events),
    auth,
    apiKeys: new ApiKeyService(apiKeys, events),
    principals: new PrincipalService(users, workspaces, apiKeys),
    idp: new IdpService({
      users,
      identities: new UserIdentityRepository(deps.dataSource),
      flows: new IdpFlowStore(deps.redis, deps.config),
      providers: new ProviderSignIn(new OAuthClients(deps.config)),
      auth,
      config: deps.config,
      logger: deps.logger,
    }),
    totp,
  };
}

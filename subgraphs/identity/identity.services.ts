import type { SubgraphDeps } from '../../core/subgraph';
import { ApiKeyRepository } from './api-keys/api-key.repository';
import { ApiKeyService } from './api-keys/api-key.service';
import { AuthService } from './auth/auth.service';
import { LoginThrottle } from './auth/login-throttle';
import { PrincipalService } from './auth/principal.service';
import { RefreshTokenRepository } from './auth/refresh-token.repository';
import { IdentityEvents } from './identity.events';
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
}

/** Builds the identity domain once per process: repositories, then the services over them. */
export function createIdentityServices(deps: SubgraphDeps): IdentityServices {
  const users = new UserRepository(deps.dataSource);
  const workspaces = new WorkspaceRepository(deps.dataSource);
  const apiKeys = new ApiKeyRepository(deps.dataSource);
  const refreshTokens = new RefreshTokenRepository(deps.dataSource);
  const events = new IdentityEvents(deps.pubsub);
  return {
    users: new UserService(users, workspaces, events, deps.logger),
    workspaces: new WorkspaceService(workspaces, users, events),
    auth: new AuthService({ users, workspaces, refreshTokens, throttle: new LoginThrottle(deps.redis, deps.config), config: deps.config, logger: deps.logger }),
    apiKeys: new ApiKeyService(apiKeys, events),
    principals: new PrincipalService(users, workspaces, apiKeys),
  };
}

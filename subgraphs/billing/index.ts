import { requestContextOf } from '../../core/context';
import { OAuthClients } from '../../core/oauth-client';
import type { Envelope } from '../../core/principal';
import { defineSubgraph, startSubgraph, type PlatformRuntime, type SubgraphDeps } from '../../core/subgraph';
import { serviceInfoResolver } from '../../core/subgraph/service-info';
import { CreateSecrets1763744400000 } from './migrations/1763744400000-create-secrets';
import { CreateWorkspaceRateLimits1763830800000 } from './migrations/1763830800000-create-workspace-rate-limits';
import { CreateOAuthConnections1763917200000 } from './migrations/1763917200000-create-oauth-connections';
import { OAuthConnectionEntity } from './oauth-connections/oauth-connection.entity';
import { OAuthConnectionProviders } from './oauth-connections/oauth-connection.provider';
import { OAuthConnectionRepository } from './oauth-connections/oauth-connection.repository';
import { OAuthConnectionResolver } from './oauth-connections/oauth-connection.resolver';
import { OAuthConnectionService } from './oauth-connections/oauth-connection.service';
import { OAuthConnectionStateStore } from './oauth-connections/oauth-connection.state';
import { WorkspaceRateLimitEntity } from './rate-limits/rate-limit.entity';
import { RateLimitRepository } from './rate-limits/rate-limit.repository';
import { RateLimitResolver } from './rate-limits/rate-limit.resolver';
import { RateLimitService } from './rate-limits/rate-limit.service';
import { RateLimitUsageReader } from './rate-limits/rate-limit.usage';
import { SecretEntity } from './secrets/secret.entity';
import { SecretRepository } from './secrets/secret.repository';
import { SecretResolver } from './secrets/secret.resolver';
import { SecretService } from './secrets/secret.service';
import { User } from './user.types';

const BillingServiceInfoResolver = serviceInfoResolver('billing');

export interface BillingServices {
  secrets: SecretService;
  rateLimits: RateLimitService;
  oauthConnections: OAuthConnectionService;
}

export function createBillingServices(deps: SubgraphDeps): BillingServices {
  const logger = deps.logger.child({ domain: 'secrets' });
  return {
    secrets: new SecretService({ repository: new SecretRepository(deps.dataSource), encryptionKey: deps.config.secretsEncryptionKey, logger }),
    rateLimits: new RateLimitService({
      repository: new RateLimitRepository(deps.dataSource),
      usage: new RateLimitUsageReader(deps.redis, deps.config.redisPrefix),
      config: deps.config,
      pubsub: deps.pubsub,
      logger: deps.logger.child({ domain: 'rate-limits' }),
    }),
    oauthConnections: new OAuthConnectionService({
      repository: new OAuthConnectionRepository(deps.dataSource),
      states: new OAuthConnectionStateStore(deps.redis, deps.config),
      providers: new OAuthConnectionProviders(new OAuthClients(deps.config), deps.logger.child({ domain: 'oauth-connections' })),
      encryptionKey: deps.config.secretsEncryptionKey,
      logger: deps.logger.child({ domain: 'oauth-connections' }),
    }),
  };
}

/** The billing domain: for now, workspace secrets, rate limits and OAuth connections. */
export const billingSubgraph = defineSubgraph<BillingServices>({
  name: 'billing',
  resolvers: [BillingServiceInfoResolver, SecretResolver, RateLimitResolver, OAuthConnectionResolver],
  orphanedTypes: [User],
  entities: [SecretEntity, WorkspaceRateLimitEntity, OAuthConnectionEntity],
  migrations: [CreateSecrets1763744400000, CreateWorkspaceRateLimits1763830800000, CreateOAuthConnections1763917200000],
  createServices: createBillingServices,
  createResolvers: (services) => [new BillingServiceInfoResolver(), new SecretResolver(services.secrets), new RateLimitResolver(services.rateLimits), new OAuthConnectionResolver(services.oauthConnections)],
  internalRoutes: (services) => ({
    /** `{ workspaceId, keys }` → `{ values: { [key]: plaintext } }`; the one way a value leaves billing. */
    'secrets/resolve': async ({ body, envelope }) => services.secrets.resolveValues(requestContextOf(envelope), body),
    /** `{ workspaceId }` → `{ workspaceId, limits }`: what the gateway enforces (it caches the answer). */
    'rate-limits/effective': async ({ body, envelope }) => services.rateLimits.effective(requestContextOf(envelope), body),
    /** `{ workspaceId, connectionId }` → `{ accessToken, expiresAt }`, refreshed first when it expires within 60 s; the one way a token leaves billing. */
    'oauth-connections/access-token': async ({ body, envelope }) => services.oauthConnections.issueAccessToken(requestContextOf(envelope), body),
  }),
});

export function start(runtime: PlatformRuntime, port?: number) {
  return startSubgraph(billingSubgraph, runtime, port);
}

import type { SubgraphDeps } from '../../../core/subgraph';
import { AiConversationResolver } from './conversations.resolver';
import { ConversationRepository } from './conversations.repository';
import { ConversationService } from './conversations.service';
import { CredentialVault } from './credentials';
import { AiConfigEvents } from './events';
import { AiKeyResolver } from './keys.resolver';
import { KeyRepository } from './keys.repository';
import { KeyService } from './keys.service';
import { AiOAuthResolver } from './oauth.resolver';
import { AiOAuthService } from './oauth.service';
import { AiOAuthStates, VendorTokenClient } from './oauth.tokens';
import type { PlaygroundEngine } from './playground';
import { AiPlaygroundResolver } from './playground.resolver';
import { PlaygroundService } from './playground.service';
import { AiPoolResolver } from './pools.resolver';
import { PoolRepository } from './pools.repository';
import { PoolService } from './pools.service';
import { AiProviderResolver } from './providers.resolver';
import { ProviderService } from './providers.service';
import { AiUpstreamResolver } from './upstreams.resolver';
import { UpstreamRepository } from './upstreams.repository';
import { UpstreamService } from './upstreams.service';
import { RealtimeUsageReader, UsageRepository } from './usage.repository';
import { AiUsageResolver } from './usage.resolver';
import { UsageService } from './usage.service';

export type { PlaygroundEngine, PlaygroundResult, PlaygroundRouting } from './playground';
export { newGatewayKey } from './keys.service';

export interface ManagementServices {
  providers: ProviderService;
  upstreams: UpstreamService;
  pools: PoolService;
  keys: KeyService;
  usage: UsageService;
  conversations: ConversationService;
  playground: PlaygroundService;
  oauth: AiOAuthService;
}

export interface ManagementDeps extends SubgraphDeps {
  /** The proxy engine the playground sends through (in-process). */
  playground: PlaygroundEngine;
}

/** The resolver classes of the management API, for `defineSubgraph({ resolvers })`. */
export const MANAGEMENT_RESOLVERS = [AiProviderResolver, AiUpstreamResolver, AiPoolResolver, AiKeyResolver, AiUsageResolver, AiConversationResolver, AiPlaygroundResolver, AiOAuthResolver];

/** The services of the management API (upstreams, pools, keys, usage, conversations, playground, OAuth). */
export function createManagementServices(deps: ManagementDeps): ManagementServices {
  const logger = deps.logger.child({ domain: 'ai-management' });
  const vault = new CredentialVault(deps.config.secretsEncryptionKey);
  const events = new AiConfigEvents(deps.pubsub);
  const upstreamRows = new UpstreamRepository(deps.dataSource);
  const providers = new ProviderService(deps.config.ai);
  const upstreams = new UpstreamService({ upstreams: upstreamRows, vault, events, logger });
  const pools = new PoolService({ pools: new PoolRepository(deps.dataSource), upstreamRows, upstreams, providers, events, logger });
  return {
    providers,
    upstreams,
    pools,
    keys: new KeyService({ keys: new KeyRepository(deps.dataSource), pools, events, logger }),
    usage: new UsageService({ usage: new UsageRepository(deps.dataSource), realtime: new RealtimeUsageReader(deps.redis, deps.config.redisPrefix), upstreams }),
    conversations: new ConversationService(new ConversationRepository(deps.dataSource)),
    playground: new PlaygroundService({ engine: deps.playground, pools, upstreams }),
    oauth: new AiOAuthService({ oauth: deps.config.ai.oauth, states: new AiOAuthStates(deps.redis, deps.config), tokens: new VendorTokenClient(), upstreams, vault, logger }),
  };
}

/** One instance per resolver class in MANAGEMENT_RESOLVERS, for `defineSubgraph({ createResolvers })`. */
export function createManagementResolvers(services: ManagementServices): object[] {
  return [
    new AiProviderResolver(services.providers),
    new AiUpstreamResolver(services.upstreams, services.usage),
    new AiPoolResolver(services.pools),
    new AiKeyResolver(services.keys),
    new AiUsageResolver(services.usage),
    new AiConversationResolver(services.conversations),
    new AiPlaygroundResolver(services.playground),
    new AiOAuthResolver(services.oauth),
  ];
}

/** Everything the ai subgraph needs of the management API: its services, resolver classes, and their instances. */
export function createManagement(deps: ManagementDeps): { services: ManagementServices; resolvers: typeof MANAGEMENT_RESOLVERS; createResolvers(services: ManagementServices): object[] } {
  return { services: createManagementServices(deps), resolvers: MANAGEMENT_RESOLVERS, createResolvers: createManagementResolvers };
}

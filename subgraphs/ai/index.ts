import { requestContextOf } from '../../core/context';
import { defineSubgraph, startSubgraph, type PlatformRuntime } from '../../core/subgraph';
import { serviceInfoResolver } from '../../core/subgraph/service-info';
import { createManagementResolvers, createManagementServices, MANAGEMENT_RESOLVERS, type ManagementServices } from './management';
import { createVendorProxy } from './proxy';
import { AI_ENTITIES, AI_MIGRATIONS } from './schema';

const AiServiceInfoResolver = serviceInfoResolver('ai');

export interface AiServices {
  /** The vendor-compatible proxy (raw routes under /vendor/) and the engine the playground uses. */
  proxy: ReturnType<typeof createVendorProxy>;
  management: ManagementServices;
}

/**
 * The ai domain: the AI gateway. Management (upstreams, pools, keys, usage, conversations,
 * playground, OAuth) is GraphQL; the vendor-compatible routes are raw HTTP (`/vendor/…`), which
 * the edge forwards byte for byte from `/v1/ai-gateway/vendor-*` (README.md in this folder).
 */
export const aiSubgraph = defineSubgraph<AiServices>({
  name: 'ai',
  resolvers: [AiServiceInfoResolver, ...MANAGEMENT_RESOLVERS],
  entities: AI_ENTITIES,
  migrations: AI_MIGRATIONS,
  createServices: (deps) => {
    const proxy = createVendorProxy(deps);
    return { proxy, management: createManagementServices({ ...deps, playground: proxy.playground }) };
  },
  createResolvers: (services) => [new AiServiceInfoResolver(), ...createManagementResolvers(services.management)],
  internalRoutes: (services) => ({
    /**
     * `{ workspaceId, poolId | upstreamId, model, system?, prompt, maxTokens? }` → `{ text, inputTokens, outputTokens }`:
     * a workflow's ai-chat step (the worker, no principal), sent and metered like a playground chat.
     */
    'workflows/chat': async ({ body, envelope, signal }) => services.management.playground.workflowChat(requestContextOf(envelope), body, signal),
  }),
  rawHttp: (services) => services.proxy.routes,
  onStop: (services) => services.proxy.close(),
});

export function start(runtime: PlatformRuntime, port?: number) {
  return startSubgraph(aiSubgraph, runtime, port);
}

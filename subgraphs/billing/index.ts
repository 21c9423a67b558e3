import type { RequestContext } from '../../core/context';
import type { Envelope } from '../../core/principal';
import { defineSubgraph, startSubgraph, type PlatformRuntime, type SubgraphDeps } from '../../core/subgraph';
import { serviceInfoResolver } from '../../core/subgraph/service-info';
import { CreateSecrets1763744400000 } from './migrations/1763744400000-create-secrets';
import { SecretEntity } from './secrets/secret.entity';
import { SecretRepository } from './secrets/secret.repository';
import { SecretResolver } from './secrets/secret.resolver';
import { SecretService } from './secrets/secret.service';
import { User } from './user.types';

const BillingServiceInfoResolver = serviceInfoResolver('billing');

export interface BillingServices {
  secrets: SecretService;
}

export function createBillingServices(deps: SubgraphDeps): BillingServices {
  const logger = deps.logger.child({ domain: 'secrets' });
  return {
    secrets: new SecretService({ repository: new SecretRepository(deps.dataSource), encryptionKey: deps.config.secretsEncryptionKey, logger }),
  };
}

/** The request an internal route acts for, as the gateway or a worker signed it. */
function requestContextOf(envelope: Envelope): RequestContext {
  return { principal: envelope.principal, requestId: envelope.requestId, clientIp: envelope.clientIp, workspaceHeader: envelope.workspaceHeader };
}

/** The billing domain: for now, workspace secrets. */
export const billingSubgraph = defineSubgraph<BillingServices>({
  name: 'billing',
  resolvers: [BillingServiceInfoResolver, SecretResolver],
  orphanedTypes: [User],
  entities: [SecretEntity],
  migrations: [CreateSecrets1763744400000],
  createServices: createBillingServices,
  createResolvers: (services) => [new BillingServiceInfoResolver(), new SecretResolver(services.secrets)],
  internalRoutes: (services) => ({
    /** `{ workspaceId, keys }` → `{ values: { [key]: plaintext } }`; the one way a value leaves billing. */
    'secrets/resolve': async ({ body, envelope }) => services.secrets.resolveValues(requestContextOf(envelope), body),
  }),
});

export function start(runtime: PlatformRuntime, port?: number) {
  return startSubgraph(billingSubgraph, runtime, port);
}

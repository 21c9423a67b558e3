import { Directive, Field, ObjectType, Query, Resolver } from 'type-graphql';
import type { SubgraphName } from '../config';
import { defineSubgraph, type SubgraphDefinition } from './define';

/** What a subgraph says about itself; shared by every subgraph, so @shareable. */
@Directive('@shareable')
@ObjectType({ description: 'A subgraph of the platform and its status.' })
export class ServiceInfo {
  @Field(() => String)
  name: string;

  @Field(() => String)
  status: string;
}

/**
 * A `<domain>Service` query, so a subgraph whose domain has not been built yet still starts,
 * composes and answers.
 */
export function serviceInfoResolver(name: string) {
  @Resolver()
  class ServiceInfoResolver {
    @Query(() => ServiceInfo, { name: `${name}Service`, description: `Status of the ${name} subgraph.` })
    info(): ServiceInfo {
      return { name, status: 'ok' };
    }
  }
  Object.defineProperty(ServiceInfoResolver, 'name', { value: `${name[0].toUpperCase()}${name.slice(1)}ServiceInfoResolver` });
  return ServiceInfoResolver;
}

/**
 * A subgraph whose domain has not been built yet: it has its own schema and migrations folder,
 * starts, composes and answers `<name>Service`. The domain's issue replaces it.
 */
export function placeholderSubgraph(name: SubgraphName): SubgraphDefinition<Record<string, never>> {
  const ServiceInfoResolver = serviceInfoResolver(name);
  return defineSubgraph({
    name,
    resolvers: [ServiceInfoResolver],
    entities: [],
    migrations: [],
    createServices: () => ({}),
    createResolvers: () => [new ServiceInfoResolver()],
  });
}

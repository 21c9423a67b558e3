import { Directive, Field, ObjectType, Query, Resolver } from 'type-graphql';

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

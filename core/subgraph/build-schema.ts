import { buildSubgraphSchema } from '@apollo/subgraph';
import { printSchemaWithDirectives, type IResolvers } from '@graphql-tools/utils';
import type { GraphQLSchema } from 'graphql';
import gql from 'graphql-tag';
import merge from 'lodash.merge';
import { buildSchema, createResolversMap, type BuildSchemaOptions } from 'type-graphql';

/** Federation 2 directives the subgraphs may use. */
const FEDERATION_LINK =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key", "@shareable", "@external", "@requires", "@provides", "@inaccessible", "@interfaceObject"])';

/**
 * type-graphql resolvers → a Federation 2 subgraph schema: the type-graphql schema is printed
 * with its directives (`@Directive('@key(fields: "id")')`) and rebuilt by @apollo/subgraph,
 * which adds `_service` and `_entities`; the resolvers are carried over with the
 * `__resolveReference` functions merged in.
 */
export async function buildFederatedSchema(options: Omit<BuildSchemaOptions, 'skipCheck'>, referenceResolvers?: IResolvers): Promise<GraphQLSchema> {
  const schema = await buildSchema({ ...options, skipCheck: true });
  return buildSubgraphSchema({
    typeDefs: gql`
      ${FEDERATION_LINK}
      ${printSchemaWithDirectives(schema)}
    `,
    resolvers: merge(createResolversMap(schema), referenceResolvers ?? {}) as never,
  });
}

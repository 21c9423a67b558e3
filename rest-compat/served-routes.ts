import type { GraphQLSchema } from 'graphql';
import { routeArguments, type RouteArgument } from './request-input';
import type { HttpMethod, RouteDefinition } from './routes';

/** A served route of the table, checked against the API schema at startup. */
export interface ServedRoute {
  method: HttpMethod;
  /** Spec form, `/workspaces/{workspaceId}/secrets`. */
  path: string;
  /** sofa/feTS form, `/workspaces/:workspaceId/secrets`. */
  sofaPath: string;
  /** `Query` or `Mutation` as the table writes it. */
  rootName: 'Query' | 'Mutation';
  operation: 'query' | 'mutation';
  fieldName: string;
  /** `Query.secrets` with the schema's own root type name, as sofa keys its `routes`. */
  sofaKey: string;
  status: number;
  public: boolean;
  /** The resource area, used as the OpenAPI tag: `auth`, `secrets`… */
  tag: string;
  description: string;
  args: RouteArgument[];
  /** Arguments the path fixes; a request may not set them. */
  fixedArgs: string[];
  /** POST, PUT and PATCH read a flat JSON body. */
  readsBody: boolean;
}

export class RouteTableError extends Error {
  override name = 'RouteTableError';
}

const PARAM = /\{([^}]+)\}/g;

/**
 * Resolves every served route of the table against the API schema and fails fast, listing every
 * problem at once: a field missing from the schema, a path parameter that is not an argument of
 * the field, a field served by two routes (sofa keys routes by field), a served route without a
 * method or with a wildcard.
 */
export function resolveServedRoutes(schema: GraphQLSchema, table: readonly RouteDefinition[]): ServedRoute[] {
  const problems: string[] = [];
  const served: ServedRoute[] = [];
  const byField = new Map<string, string>();

  for (const route of table) {
    const label = `${route.method} ${route.path}`;
    const kinds = [route.field, route.pending, route.raw].filter(Boolean).length;
    if (kinds > 1) problems.push(`${label} must be exactly one of served (a field), raw (a handler) or pending`);
    if (!route.field) {
      if (kinds === 0) problems.push(`${label} has neither a field nor a pending reason`);
      continue;
    }
    if (route.method === '*' || route.path.includes('*')) {
      problems.push(`${label}: a served route needs one method and no wildcard`);
      continue;
    }
    const [rootName, fieldName] = route.field.split('.') as ['Query' | 'Mutation', string];
    const rootType = rootName === 'Query' ? schema.getQueryType() : schema.getMutationType();
    const field = rootType?.getFields()[fieldName];
    if (!rootType || !field) {
      problems.push(`${label} → ${route.field}: the API schema has no such field`);
      continue;
    }
    const previous = byField.get(route.field);
    if (previous) problems.push(`${label} → ${route.field}: already served by ${previous} (one route per field)`);
    byField.set(route.field, label);

    const pathParams = new Set([...route.path.matchAll(PARAM)].map((m) => m[1]));
    for (const fixed of route.fixedArgs ?? []) {
      const arg = field.args.find((a) => a.name === fixed);
      if (!arg || arg.defaultValue === undefined) problems.push(`${label} → ${route.field}: fixed argument "${fixed}" must be an argument with a default`);
    }
    for (const param of pathParams) {
      if (!field.args.some((arg) => arg.name === param)) problems.push(`${label} → ${route.field}: path parameter {${param}} is not an argument of the field`);
    }
    served.push({
      method: route.method,
      path: route.path,
      sofaPath: route.path.replace(PARAM, ':$1'),
      rootName,
      operation: rootName === 'Query' ? 'query' : 'mutation',
      fieldName,
      sofaKey: `${rootType.name}.${fieldName}`,
      status: route.status ?? 200,
      public: route.public ?? false,
      tag: tagOf(route.path),
      description: field.description ?? '',
      args: routeArguments(field.args, pathParams),
      fixedArgs: route.fixedArgs ?? [],
      readsBody: route.method === 'POST' || route.method === 'PUT' || route.method === 'PATCH',
    });
  }
  if (problems.length > 0) {
    throw new RouteTableError(`rest-compat: the route table does not fit the API schema:\n  - ${problems.join('\n  - ')}`);
  }
  return served;
}

/** `/auth/login` → auth; `/workspaces/{workspaceId}/secrets/…` → secrets. */
function tagOf(path: string): string {
  const segments = path.split('/');
  return segments[1] === 'workspaces' && segments[3] ? segments[3] : segments[1];
}

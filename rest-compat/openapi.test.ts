import { loadConfig } from '../core/config';
import { createLogger } from '../core/logger';
import { createRestHandler } from './index';
import { ROUTES } from './routes';
import { createLocalGraph } from './testing/local-graph';

type Json = Record<string, any>;

const graph = createLocalGraph();
const handler = createRestHandler({ config: loadConfig({ NODE_ENV: 'test' }), logger: createLogger('silent'), schema: graph.schema, execute: graph.execute });
const doc = handler.openapi as Json;
const served = ROUTES.filter((r) => r.field);
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Every `$ref` in the document, with where it was found. */
function refs(node: unknown, at = '#'): Array<[string, string]> {
  if (!node || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) => (key === '$ref' ? [[at, value as string] as [string, string]] : refs(value, `${at}/${key}`)));
}

function resolve(ref: string): unknown {
  return ref
    .replace(/^#\//, '')
    .split('/')
    .reduce<any>((node, key) => node?.[key], doc);
}

describe('OpenAPI document', () => {
  it('is an OpenAPI 3 document with info, the /v1 server and both security schemes', () => {
    expect(doc.openapi).toMatch(/^3\.0\.\d$/);
    expect(doc.info).toMatchObject({ title: expect.any(String), version: expect.any(String) });
    expect(doc.servers).toEqual([{ url: '/v1' }]);
    expect(doc.components.securitySchemes).toEqual({
      ApiKeyAuth: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
      BearerAuth: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
    expect(doc.security).toEqual([{ ApiKeyAuth: [] }, { BearerAuth: [] }]);
  });

  it('has every served route with its method and the spec path, and nothing else', () => {
    const documented = Object.entries(doc.paths as Json).flatMap(([path, item]) => Object.keys(item).filter((k) => METHODS.includes(k)).map((m) => `${m.toUpperCase()} ${path}`));
    expect(documented.sort()).toEqual(served.map((r) => `${r.method} ${r.path}`).sort());
  });

  it('gives each operation a unique id, its success status, the error responses and its path parameters', () => {
    const ids = new Set<string>();
    for (const route of served) {
      const op = doc.paths[route.path][route.method.toLowerCase()];
      expect(ids.has(op.operationId)).toBe(false);
      ids.add(op.operationId);
      const status = String(route.status ?? 200);
      expect(op.responses[status].content['application/json'].schema).toBeDefined();
      for (const code of ['400', '401', '404', '413', '429', '500']) expect(op.responses[code]).toEqual({ $ref: `#/components/responses/Error${code}` });
      const pathParams = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      expect((op.parameters ?? []).filter((p: Json) => p.in === 'path')).toEqual(pathParams.map((name) => expect.objectContaining({ name, in: 'path', required: true })));
      if (route.public) expect(op.security).toEqual([]);
      else expect(op.security).toBeUndefined();
    }
  });

  it('describes flat request bodies: the non-path arguments, required ones marked', () => {
    const create = doc.paths['/workspaces/{workspaceId}/secrets'].post;
    expect(create.requestBody).toMatchObject({ required: true, content: { 'application/json': { schema: { type: 'object', required: ['key', 'value'] } } } });
    expect(Object.keys(create.requestBody.content['application/json'].schema.properties)).toEqual(['key', 'value', 'kind']);
    expect(doc.paths['/workspaces/{workspaceId}/secrets/{secretId}'].patch.requestBody.required).toBe(false);
    expect(doc.paths['/workspaces/{workspaceId}/secrets/{secretId}'].delete.requestBody).toBeUndefined();
    expect(doc.paths['/workspaces/{workspaceId}/secrets'].get.parameters.map((p: Json) => `${p.in}:${p.name}`)).toEqual(['path:workspaceId', 'query:page', 'query:limit']);
  });

  it('resolves every $ref, and describes the platform error body', () => {
    for (const [at, ref] of refs(doc)) expect({ at, ref, resolved: resolve(ref) !== undefined }).toEqual({ at, ref, resolved: true });
    expect(doc.components.schemas.Error.properties.error.required).toEqual(['code', 'message', 'requestId']);
    expect(doc.components.responses.Error429.headers['Retry-After']).toBeDefined();
  });

  it('promises only what the generated selections return', () => {
    const { schemas } = doc.components;
    // Workspace.owner is past sofa's depth limit in every selection, membership needs an argument.
    expect(Object.keys(schemas.Workspace.properties)).toEqual(['id', 'name']);
    expect(schemas.User.properties.membership).toBeUndefined();
    for (const [name, schema] of Object.entries(schemas as Record<string, Json>)) {
      for (const field of schema.required ?? []) expect({ name, field, present: field in schema.properties }).toEqual({ name, field, present: true });
    }
    expect(schemas.Query).toBeUndefined();
    expect(schemas.Secret.properties.createdAt).toEqual({ type: 'string', format: 'date-time' });
  });

  it('lists the operation each route sends', () => {
    expect(handler.operations['GET /workspaces/{workspaceId}/secrets']).toMatch(/^query secrets_query\(\$workspaceId: ID!, \$page: Int, \$limit: Int\)/);
    expect(Object.keys(handler.operations)).toHaveLength(served.length);
  });
});

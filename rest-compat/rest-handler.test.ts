import http, { type Server } from 'node:http';
import { Script, createContext } from 'node:vm';
import type { AddressInfo } from 'node:net';
import { buildSchema, print } from 'graphql';
import { loadConfig } from '../core/config';
import { NotFoundError } from '../core/errors';
import { createLogger } from '../core/logger';
import { createRestHandler, type RestExecutor } from './index';
import { ROUTES, type RouteDefinition } from './routes';
import { createLocalGraph, LOCAL_SDL, type LocalGraph } from './testing/local-graph';

/** The real table plus three test-only routes over fields of the local schema. */
const TABLE: RouteDefinition[] = [
  ...ROUTES,
  { method: 'GET', path: '/test/search', field: 'Query.search' },
  { method: 'POST', path: '/test/burst', field: 'Mutation.burst' },
  { method: 'POST', path: '/test/explode', field: 'Mutation.explode' },
];

const config = loadConfig({ NODE_ENV: 'test' }, { maxBodyBytes: 4096 });
const logger = createLogger('silent');

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any;
}

async function listen(execute: RestExecutor, schema = createLocalGraph().schema, table: readonly RouteDefinition[] = TABLE): Promise<{ server: Server; base: string }> {
  const handler = createRestHandler({ config, logger, schema, execute }, table);
  let n = 0;
  const server = http.createServer((req, res) => void handler.handle(req, res, `req_${++n}`));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('REST handler over a local graph', () => {
  let graph: LocalGraph;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    graph = createLocalGraph();
    ({ server, base } = await listen(graph.execute, graph.schema));
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  async function call(method: string, path: string, body?: string | object, headers: Record<string, string> = { 'x-api-key': 'test-key' }): Promise<Reply> {
    const response = await fetch(base + path, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: Object.fromEntries(response.headers), text, json };
  }

  function expectError(reply: Reply, status: number, code: string): void {
    expect({ status: reply.status, code: reply.json?.error?.code }).toEqual({ status, code });
    expect(reply.json.error.requestId).toBe(reply.headers['x-request-id']);
    expect(reply.headers['x-request-id']).toMatch(/^req_\d+$/);
    expect(typeof reply.json.error.message).toBe('string');
  }

  describe('served routes', () => {
    it('logs in with a flat body and answers the field unwrapped, nested user included', async () => {
      const reply = await call('POST', '/v1/auth/login', { username: 'admin', password: 'pw' }, {});
      expect(reply.status).toBe(200);
      expect(reply.json).toMatchObject({ accessToken: 'test-token', refreshToken: 'refresh', tokenType: 'Bearer', expiresIn: 900, user: { id: 'usr_1', username: 'admin', workspaces: [{ id: 'wsp_1' }] } });
      expect(reply.json.data).toBeUndefined();
      expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(reply.headers['x-ratelimit-remaining']).toBe('99');
    });

    it('answers 201 on create, with path parameters and body keys as arguments', async () => {
      const reply = await call('POST', '/v1/workspaces/wsp_1/secrets', { key: 'API_TOKEN', value: 's3cret' });
      expect(reply.status).toBe(201);
      expect(reply.json).toMatchObject({ id: expect.stringMatching(/^sec_/), workspaceId: 'wsp_1', key: 'API_TOKEN', kind: 'PLAIN', createdBy: { id: 'usr_1' } });
      expect(reply.json.value).toBeUndefined();
      expect((await call('POST', '/v1/auth/api-keys', { name: 'ci', expiresInDays: 30 })).status).toBe(201);
    });

    it('lists with query parameters coerced to Int, in the list shape', async () => {
      await call('POST', '/v1/workspaces/wsp_list/secrets', { key: 'A', value: '1' });
      await call('POST', '/v1/workspaces/wsp_list/secrets', { key: 'B', value: '2' });
      const reply = await call('GET', '/v1/workspaces/wsp_list/secrets?page=2&limit=1');
      expect(reply.status).toBe(200);
      expect(reply.json).toMatchObject({ data: [{ key: 'B' }], total: 2, page: 2, limit: 1 });
      expect(graph.calls.at(-1)?.variables).toEqual({ workspaceId: 'wsp_list', page: 2, limit: 1 });
    });

    it('gets, patches and deletes one record by path parameters', async () => {
      const created = (await call('POST', '/v1/workspaces/wsp_2/secrets', { key: 'K', value: 'v' })).json;
      expect((await call('GET', `/v1/workspaces/wsp_2/secrets/${created.id}`)).json).toMatchObject({ id: created.id, key: 'K' });
      expect((await call('PATCH', `/v1/workspaces/wsp_2/secrets/${created.id}`, { key: 'K2' })).json).toMatchObject({ key: 'K2' });
      const deleted = await call('DELETE', `/v1/workspaces/wsp_2/secrets/${created.id}`);
      expect(deleted).toMatchObject({ status: 200, json: true });
      expectError(await call('GET', `/v1/workspaces/wsp_2/secrets/${created.id}`), 404, 'NOT_FOUND');
    });

    it('decodes percent-encoded path parameters', async () => {
      await call('GET', '/v1/workspaces/wsp%203/secrets');
      expect(graph.calls.at(-1)?.variables).toMatchObject({ workspaceId: 'wsp 3' });
    });

    it('passes the request and its id to the executor, with the operation sofa built', async () => {
      const reply = await call('GET', '/v1/auth/profile', undefined, { authorization: 'Bearer test-token' });
      expect(reply.status).toBe(200);
      const op = graph.calls.at(-1)!;
      expect(op.requestId).toBe(reply.headers['x-request-id']);
      expect(op.req.headers.authorization).toBe('Bearer test-token');
      expect(op.operationName).toBe('profile_query');
      expect(print(op.document)).toContain('workspaces {');
      // Fields with required arguments are left out of generated selections.
      expect(print(op.document)).not.toContain('membership');
    });

    it('coerces Boolean, Float, enum and list query parameters', async () => {
      const reply = await call('GET', '/v1/test/search?kind=FILE&exact=false&score=2.5&tags=a&tags=b');
      expect(reply.json).toEqual({ kind: 'FILE', exact: false, score: 2.5, tags: ['a', 'b'], page: 1 });
    });
  });

  describe('caller mistakes', () => {
    it('answers 400 BAD_REQUEST to malformed JSON and to a body that is not an object', async () => {
      expectError(await call('POST', '/v1/auth/login', '{"username":'), 400, 'BAD_REQUEST');
      expectError(await call('POST', '/v1/auth/login', '["admin","pw"]'), 400, 'BAD_REQUEST');
      expectError(await call('POST', '/v1/auth/login', 'null'), 400, 'BAD_REQUEST');
    });

    it('answers 400 VALIDATION_FAILED naming the field: wrong type, missing, unknown enum value', async () => {
      const wrongType = await call('POST', '/v1/auth/login', { username: 'admin', password: 42 });
      expectError(wrongType, 400, 'VALIDATION_FAILED');
      expect(wrongType.json.error.details).toEqual({ field: 'password' });

      const missing = await call('POST', '/v1/workspaces/wsp_1/secrets', { key: 'A' });
      expectError(missing, 400, 'VALIDATION_FAILED');
      expect(missing.json.error).toMatchObject({ message: '"value" is required', details: { field: 'value' } });

      const badEnum = await call('POST', '/v1/workspaces/wsp_1/secrets', { key: 'A', value: 'b', kind: 'SECRETIVE' });
      expectError(badEnum, 400, 'VALIDATION_FAILED');
      expect(badEnum.json.error.details).toEqual({ field: 'kind' });

      const badQuery = await call('GET', '/v1/workspaces/wsp_1/secrets?limit=ten');
      expectError(badQuery, 400, 'VALIDATION_FAILED');
      expect(badQuery.json.error.details).toEqual({ field: 'limit' });

      expectError(await call('GET', '/v1/test/search?exact=yes'), 400, 'VALIDATION_FAILED');
    });

    it('answers 413 PAYLOAD_TOO_LARGE past maxBodyBytes, declared or streamed', async () => {
      expectError(await call('POST', '/v1/auth/login', { username: 'x'.repeat(5000), password: 'pw' }), 413, 'PAYLOAD_TOO_LARGE');

      const streamed = await new Promise<Reply>((resolve, reject) => {
        const req = http.request(`${base}/v1/auth/login`, { method: 'POST', headers: { 'transfer-encoding': 'chunked' } }, (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text, json: JSON.parse(text) }));
        });
        req.on('error', reject);
        req.write('{"username":"');
        req.end(`${'y'.repeat(6000)}"}`);
      });
      expectError(streamed, 413, 'PAYLOAD_TOO_LARGE');
    });

    it('answers 404 ROUTE_NOT_FOUND to an unknown path, /v1 itself and paths outside the table', async () => {
      for (const path of ['/v1/nope', '/v1', '/v1/', '/v1/auth/login/extra', '/v1/workspaces/wsp_1/secrets/']) {
        expectError(await call('GET', path), 404, 'ROUTE_NOT_FOUND');
      }
    });

    it('answers 404 ROUTE_NOT_FOUND saying "not yet available" to a pending route', async () => {
      // A raw route whose handler was not given (GET /auth/idp-a here) counts as pending too.
      for (const [method, path] of [['GET', '/v1/apps'], ['GET', '/v1/auth/idp-a'], ['POST', '/v1/webhooks/v1/wf_1/node_1'], ['GET', '/v1/v1/vendor-proxy/status'], ['POST', '/v1/ai-gateway/vendor-a/v1/chat/completions']]) {
        const reply = await call(method, path);
        expectError(reply, 404, 'ROUTE_NOT_FOUND');
        expect(reply.json.error.message).toMatch(/not yet available/);
      }
    });

    it('answers 400 VALIDATION_FAILED when a request sets an argument its path fixes', async () => {
      for (const [method, path, body] of [
        ['POST', '/v1/workspaces/wsp_1/oauth-connections/idp-a/auth-url', { provider: 'IDP_B' }],
        ['GET', '/v1/workspaces/wsp_1/oauth-connections/idp-a?provider=IDP_B', undefined],
      ] as const) {
        const reply = await call(method, path, body);
        expectError(reply, 400, 'VALIDATION_FAILED');
        expect(reply.json.error.details).toMatchObject({ field: 'provider' });
      }
    });

    it('answers 404 ROUTE_NOT_FOUND with Allow to a wrong method on a known path', async () => {
      const reply = await call('PUT', '/v1/workspaces/wsp_1/secrets/sec_1');
      expectError(reply, 404, 'ROUTE_NOT_FOUND');
      expect(reply.headers.allow).toBe('GET, PATCH, DELETE');
      expect((await call('GET', '/v1/auth/login')).headers.allow).toBe('POST');
      // Pending methods are not offered.
      const pendingOnly = await call('POST', '/v1/notebooks/nb_1');
      expectError(pendingOnly, 404, 'ROUTE_NOT_FOUND');
      expect(pendingOnly.headers.allow).toBeUndefined();
    });

    it('answers 400 to bad percent-encoding in a path parameter', async () => {
      expectError(await call('GET', '/v1/workspaces/%E0%A4%A/secrets'), 400, 'BAD_REQUEST');
    });
  });

  describe('errors from the graph', () => {
    it('maps UNAUTHENTICATED to 401 with WWW-Authenticate', async () => {
      const reply = await call('GET', '/v1/auth/profile', undefined, {});
      expectError(reply, 401, 'UNAUTHENTICATED');
      expect(reply.headers['www-authenticate']).toBe('Bearer');
    });

    it('maps RATE_LIMITED to 429 with Retry-After and keeps the executor headers', async () => {
      const reply = await call('POST', '/v1/test/burst');
      expectError(reply, 429, 'RATE_LIMITED');
      expect(reply.headers['retry-after']).toBe('3');
      expect(reply.headers['x-ratelimit-remaining']).toBe('99');
      expect(reply.json.error.details).toEqual({ retryAfterSeconds: 2.5 });
    });

    it('maps NOT_FOUND to 404 and VALIDATION_FAILED from the domain to 400, with details', async () => {
      const notFound = await call('GET', '/v1/workspaces/wsp_1/secrets/sec_missing');
      expectError(notFound, 404, 'NOT_FOUND');
      expect(notFound.json.error.details).toEqual({ resource: 'Secret', id: 'sec_missing' });
      expectError(await call('GET', '/v1/workspaces/wsp_1/secrets?limit=500'), 400, 'VALIDATION_FAILED');
    });

    it('answers 500 INTERNAL without internals', async () => {
      const reply = await call('POST', '/v1/test/explode');
      expectError(reply, 500, 'INTERNAL');
      expect(reply.text).not.toContain('hunter2');
    });
  });

  describe('published schema', () => {
    it('serves the OpenAPI document, the docs page and the SDL without credentials', async () => {
      const openapi = await call('GET', '/v1/openapi.json', undefined, {});
      expect(openapi.status).toBe(200);
      expect(openapi.json.openapi).toMatch(/^3\./);
      expect(openapi.json.paths['/workspaces/{workspaceId}/secrets'].post.responses['201']).toBeDefined();

      const docs = await call('GET', '/v1/docs', undefined, {});
      expect(docs.status).toBe(200);
      expect(docs.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(docs.headers['content-security-policy']).toContain("default-src 'none'");
      expect(docs.text).toContain('/v1/openapi.json');
      // Loads nothing from elsewhere.
      expect(docs.text).not.toMatch(/<script[^>]+src=|<link[^>]+href=|https?:\/\//);
      // Its script renders one section per operation from the document (on a minimal fake DOM).
      const script = /<script>([\s\S]*)<\/script>/.exec(docs.text)![1];
      const rendered = await renderDocs(script, openapi.json);
      expect(rendered.filter((n) => n.tag === 'details')).toHaveLength(ROUTES.filter((r) => r.field).length + 3);
      expect(rendered.some((n) => n.tag === 'span' && n.text === '/workspaces/{workspaceId}/secrets')).toBe(true);

      const sdl = await call('GET', '/v1/schema.graphql', undefined, {});
      expect(sdl.status).toBe(200);
      expect(sdl.text).toContain('type Query');
      expect(sdl.headers['x-request-id']).toMatch(/^req_/);

      expect((await call('POST', '/v1/openapi.json')).headers.allow).toBe('GET');
    });
  });
});

describe('REST handler edge cases', () => {
  const servers: Server[] = [];
  afterAll(() => Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve)))));

  async function start(execute: RestExecutor): Promise<string> {
    const { server, base } = await listen(execute);
    servers.push(server);
    return base;
  }

  it('answers 500 INTERNAL when the executor throws, and a DomainError it throws with its code', async () => {
    let thrown: Error = new Error('socket hang up at 10.0.0.7');
    const base = await start(async () => {
      throw thrown;
    });
    const reply = await fetch(`${base}/v1/auth/profile`);
    expect(reply.status).toBe(500);
    const body = await reply.json();
    expect(body).toEqual({ error: { code: 'INTERNAL', message: 'Internal server error', requestId: reply.headers.get('x-request-id') } });

    thrown = new NotFoundError('User', 'usr_9');
    expect((await fetch(`${base}/v1/auth/profile`)).status).toBe(404);
  });

  it('serves raw routes with their handlers (table and extra routes), and gives their domain errors the platform shape', async () => {
    const handler = createRestHandler({
      config,
      logger,
      schema: createLocalGraph().schema,
      execute: async () => ({}),
      rawHandlers: {
        idpLogin: async (_req, res, ctx) => {
          if (ctx.query.get('fail')) throw new NotFoundError('Thing', 'x');
          res.writeHead(302, { location: `https://idp.example${ctx.path}` }).end();
        },
      },
      extraRawRoutes: [{ method: 'GET', path: '/auth/idp-a/callback', handler: async (_req, res, ctx) => void res.writeHead(200).end(ctx.requestId) }],
    });
    const server = http.createServer((req, res) => void handler.handle(req, res, 'req_raw'));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const redirect = await fetch(`${base}/v1/auth/idp-b`, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')).toBe('https://idp.example/auth/idp-b');
    expect(await (await fetch(`${base}/v1/auth/idp-a/callback?code=1`)).text()).toBe('req_raw');
    const failed = await fetch(`${base}/v1/auth/idp-a?fail=1`, { redirect: 'manual' });
    expect(failed.status).toBe(404);
    expect((await failed.json()).error).toMatchObject({ code: 'NOT_FOUND', requestId: 'req_raw' });
  });

  it('lets the first error decide and never answers a success with errors', async () => {
    const base = await start(async () => ({
      data: { profile: { id: 'usr_1' } },
      errors: [
        { message: 'No', extensions: { code: 'FORBIDDEN' } },
        { message: 'Later', extensions: { code: 'NOT_FOUND' } },
      ],
    }));
    const reply = await fetch(`${base}/v1/auth/profile`);
    expect(reply.status).toBe(403);
    expect((await reply.json()).error).toMatchObject({ code: 'FORBIDDEN', message: 'No' });
  });

  it('treats an unknown error code as INTERNAL and hides its message', async () => {
    const base = await start(async () => ({ data: null, errors: [{ message: 'Cannot query field "x"', extensions: { code: 'SOMETHING_ELSE' } }] }));
    const reply = await fetch(`${base}/v1/auth/profile`);
    expect(reply.status).toBe(500);
    expect((await reply.json()).error.message).toBe('Internal server error');
  });

  it('fails fast when a served route names a field the schema lacks, listing each', () => {
    const schema = buildSchema(LOCAL_SDL.replace(/deleteSecret\(.*\n/, '').replace(/profile: User!\n/, ''));
    expect(() => createRestHandler({ config, logger, schema, execute: async () => ({}) })).toThrow(
      /GET \/auth\/profile → Query\.profile: the API schema has no such field[\s\S]*DELETE \/workspaces\/\{workspaceId\}\/secrets\/\{secretId\} → Mutation\.deleteSecret: the API schema has no such field/,
    );
  });

  it('fails fast on a path parameter that is not an argument, and on a field served twice', () => {
    const schema = createLocalGraph().schema;
    const table: RouteDefinition[] = [
      { method: 'GET', path: '/auth/profile/{who}', field: 'Query.profile' },
      { method: 'GET', path: '/me', field: 'Query.profile' },
      { method: 'GET', path: '/later', pending: 'later' },
      { method: 'GET', path: '/nothing' },
    ];
    expect(() => createRestHandler({ config, logger, schema, execute: async () => ({}) }, table)).toThrow(
      /\{who\} is not an argument[\s\S]*already served by GET \/auth\/profile\/\{who\}[\s\S]*GET \/nothing has neither a field nor a pending reason/,
    );
  });
});

interface FakeNode {
  tag: string;
  text: string;
  children: FakeNode[];
  attributes: Record<string, string>;
}

/** Runs the docs page script against a fake DOM and a fetch that returns `openapi`; returns every node created. */
async function renderDocs(script: string, openapi: unknown): Promise<FakeNode[]> {
  const created: FakeNode[] = [];
  const node = (tag: string): FakeNode & Record<string, unknown> => {
    const n = {
      tag,
      children: [] as FakeNode[],
      attributes: {} as Record<string, string>,
      value: '',
      className: '',
      set textContent(v: string) {
        this.text = v;
        this.children = [];
      },
      get textContent() {
        return this.text;
      },
      text: '',
      appendChild(child: FakeNode) {
        this.children.push(child);
        return child;
      },
      setAttribute(k: string, v: string) {
        this.attributes[k] = v;
      },
      addEventListener() {},
    };
    created.push(n);
    return n;
  };
  const byId = new Map<string, FakeNode>();
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const context = createContext({
    document: {
      createElement: node,
      createTextNode: (text: string) => ({ ...node('#text'), text }),
      getElementById: (id: string) => byId.get(id) ?? byId.set(id, node(`#${id}`)).get(id),
    },
    localStorage: { getItem: () => null, setItem() {} },
    fetch: async () => ({ json: async () => openapi }),
    performance: { now: () => 0 },
    JSON,
    Object,
    Date,
    encodeURIComponent,
    setTimeout,
  });
  new Script(script).runInContext(context);
  setTimeout(done, 50);
  await finished;
  expect(byId.get('ops')?.text).not.toMatch(/Could not load/);
  return created;
}

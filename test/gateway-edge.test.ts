import { composeServices } from '@apollo/composition';
import { printSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import { SignJWT } from 'jose';
import { Arg, Ctx, Field, Int, ObjectType, Query, Resolver } from 'type-graphql';
import { SUBGRAPH_NAMES, loadConfig, type SubgraphName } from '../core/config';
import type { SubgraphContext } from '../core/context';
import { ConflictError } from '../core/errors';
import { ENVELOPE_HEADER, signEnvelope } from '../core/principal';
import { defineSubgraph, startSubgraph, type PlatformRuntime, type RunningSubgraph } from '../core/subgraph';
import { signAccessToken } from '../core/tokens';
import { startGateway, type RunningGateway } from '../gateway';
import { createTestDatabase, createTestRuntime, type TestDatabase } from './services';

@ObjectType()
class Node {
  @Field(() => Int)
  level: number;

  @Field(() => Node, { nullable: true })
  child(): Node {
    return { level: this.level + 1 } as Node;
  }
}

@ObjectType()
class Item {
  @Field(() => String)
  a: string;
}

@Resolver()
class EdgeProbeResolver {
  @Query(() => String, { nullable: true })
  boom(): string {
    throw new Error('connection to db-internal.example:5432 failed at /srv/app/secret.ts');
  }

  @Query(() => String, { nullable: true })
  domainBoom(): string {
    throw new ConflictError('That name is taken', { field: 'name' });
  }

  @Query(() => Node)
  deep(): Node {
    return Object.assign(new Node(), { level: 0 });
  }

  @Query(() => [Item])
  items(@Arg('limit', () => Int, { nullable: true }) limit: number): Item[] {
    return Array.from({ length: Math.min(limit ?? 1, 5) }, () => ({ a: 'x' }));
  }

  @Query(() => String)
  whoami(@Ctx() ctx: SubgraphContext): string {
    return `${ctx.principal?.userId ?? 'anonymous'}|${ctx.requestId}|${ctx.workspaceHeader ?? '-'}`;
  }
}

const probeSubgraph = defineSubgraph({
  name: 'compute',
  resolvers: [EdgeProbeResolver],
  orphanedTypes: [],
  entities: [],
  migrations: [],
  createServices: () => ({}),
  createResolvers: () => [new EdgeProbeResolver()],
});

describe('gateway edge', () => {
  let database: TestDatabase;
  let runtime: PlatformRuntime;
  let subgraph: RunningSubgraph;
  let gateway: RunningGateway;
  let identityStub: import('node:http').Server;
  let identityCalls = 0;

  beforeAll(async () => {
    database = await createTestDatabase('t_edge');
    runtime = createTestRuntime({ databaseUrl: database.url, prefix: database.name, env: { LOG_LEVEL: 'silent' } });
    subgraph = await startSubgraph(probeSubgraph, runtime, 0);
    // A stand-in identity internal API: knows one user.
    const http = await import('node:http');
    identityStub = http.createServer((req, res) => {
      identityCalls++;
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const { userId } = JSON.parse(body);
        const principal =
          userId === 'usr_alice'
            ? { userId, username: 'alice', isAdmin: false, via: 'jwt', defaultWorkspaceId: 'ws_alice', memberships: { ws_alice: 'owner' } }
            : null;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ data: principal }));
      });
    });
    await new Promise<void>((resolve) => identityStub.listen(0, '127.0.0.1', resolve));
    const identityPort = (identityStub.address() as import('node:net').AddressInfo).port;
    const composed = composeServices([{ name: 'compute', url: subgraph.url, typeDefs: parse(printSubgraphSchema(subgraph.schema)) }]);
    if (composed.errors) throw new Error(composed.errors.map((e) => e.message).join('\n'));
    const subgraphUrls = Object.fromEntries(SUBGRAPH_NAMES.map((n) => [n, 'http://127.0.0.1:9/graphql'])) as Record<SubgraphName, string>;
    subgraphUrls.compute = subgraph.url;
    subgraphUrls.identity = `http://127.0.0.1:${identityPort}/graphql`;
    gateway = await startGateway(runtime, { subgraphUrls, port: 0, supergraphSdl: composed.supergraphSdl, rest: false });
  });

  afterAll(async () => {
    await gateway?.stop();
    await subgraph?.stop();
    await runtime?.pubsub.close();
    await new Promise((resolve) => identityStub?.close(resolve));
    await database?.drop();
  });

  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${gateway.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });

  it('masks unexpected errors as INTERNAL without internals', async () => {
    const response = await post({ query: '{ boom }' });
    const text = await response.text();
    expect(text).not.toMatch(/db-internal|secret\.ts|5432|stack/);
    const json = JSON.parse(text);
    expect(json.errors[0].extensions.code).toBe('INTERNAL');
    expect(json.errors[0].message).toBe('Internal server error');
  });

  it('keeps the code, message and details of domain errors', async () => {
    const json = await (await post({ query: '{ domainBoom }' })).json();
    expect(json.errors[0]).toMatchObject({ message: 'That name is taken', extensions: { code: 'CONFLICT', details: { field: 'name' } } });
  });

  it('refuses queries past the depth limit', async () => {
    const selection = (n: number): string => (n === 0 ? 'level' : `level child { ${selection(n - 1)} }`);
    const ok = await (await post({ query: `{ deep { ${selection(8)} } }` })).json();
    expect(ok.errors).toBeUndefined();
    const response = await post({ query: `{ deep { ${selection(20)} } }` });
    expect(response.status).toBe(400);
    const json = await response.json();
    expect(json.errors[0].extensions.code).toBe('VALIDATION_FAILED');
    expect(json.errors[0].message).toMatch(/depth/);
  });

  it('refuses queries past the cost limit', async () => {
    const aliases = Array.from({ length: 30 }, (_, i) => `i${i}: items(limit: 1000) { a }`).join(' ');
    const response = await post({ query: `{ ${aliases} }` });
    expect(response.status).toBe(400);
    const json = await response.json();
    expect(json.errors[0].extensions.code).toBe('VALIDATION_FAILED');
    expect(json.errors[0].message).toMatch(/cost/);
  });

  it('prevents CSRF: simple requests without a preflight header are refused', async () => {
    const plain = await fetch(`${gateway.url}/graphql`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ query: '{ whoami }' }) });
    expect(plain.status).toBe(400);
    const get = await fetch(`${gateway.url}/graphql?query=${encodeURIComponent('{ whoami }')}`);
    expect(get.status).toBe(400);
    const preflighted = await fetch(`${gateway.url}/graphql?query=${encodeURIComponent('{ whoami }')}`, { headers: { 'apollo-require-preflight': 'true' } });
    expect(preflighted.status).toBe(200);
  });

  it('puts a request id on every response and echoes a sane one', async () => {
    const responses = await Promise.all([
      post({ query: '{ whoami }' }),
      post({ query: '{ whoami }' }, { 'x-request-id': 'client-abc.123' }),
      post({ query: '{ whoami }' }, { 'x-request-id': 'bad id with spaces' }),
      fetch(`${gateway.url}/healthz`),
      fetch(`${gateway.url}/nope`),
      post('{not json'),
      post({ query: '{ whoami }' }, { authorization: 'Bearer nope' }),
    ]);
    for (const response of responses) expect(response.headers.get('x-request-id')).toMatch(/^[A-Za-z0-9._:-]+$/);
    expect(responses[1].headers.get('x-request-id')).toBe('client-abc.123');
    expect(responses[2].headers.get('x-request-id')).not.toBe('bad id with spaces');
    const who = await responses[1].json();
    expect(who.data.whoami).toBe('anonymous|client-abc.123|-');
    expect(responses[4].status).toBe(404);
    expect((await responses[4].json()).error.code).toBe('ROUTE_NOT_FOUND');
    expect(responses[5].status).toBe(400);
  });

  it('answers 413 for an oversized body', async () => {
    const response = await post({ query: '{ whoami }', variables: { pad: 'x'.repeat(runtime.config.maxBodyBytes + 10) } });
    expect(response.status).toBe(413);
  });

  describe('authentication', () => {
    const { jwtSecret } = loadConfig({ NODE_ENV: 'test' });

    it('accepts a valid access token and forwards the principal and workspace header', async () => {
      const token = await signAccessToken(jwtSecret, { sub: 'usr_alice' }, 60);
      const json = await (await post({ query: '{ whoami }' }, { authorization: `Bearer ${token}`, 'x-workspace-id': 'ws_alice', 'x-request-id': 'r1' })).json();
      expect(json.data.whoami).toBe('usr_alice|r1|ws_alice');
    });

    it('caches principals: many requests, one identity lookup', async () => {
      const token = await signAccessToken(jwtSecret, { sub: 'usr_alice' }, 60);
      const before = identityCalls;
      for (let i = 0; i < 5; i++) await post({ query: '{ whoami }' }, { authorization: `Bearer ${token}` });
      expect(identityCalls - before).toBeLessThanOrEqual(1);
    });

    const rejected = async (authorization: string) => {
      const response = await post({ query: '{ whoami }' }, { authorization });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      const json = await response.json();
      expect(json.errors[0].extensions.code).toBe('UNAUTHENTICATED');
      return json.errors[0].message as string;
    };

    it('rejects an expired token', async () => {
      const token = await new SignJWT({ typ: 'access' })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('usr_alice')
        .setIssuer('platform')
        .setAudience('platform-api')
        .setIssuedAt(Math.floor(Date.now() / 1000) - 3600)
        .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
        .sign(new TextEncoder().encode(jwtSecret));
      expect(await rejected(`Bearer ${token}`)).toMatch(/expired/);
    });

    it('rejects a tampered token', async () => {
      const token = await signAccessToken(jwtSecret, { sub: 'usr_alice' }, 60);
      const [header, payload, signature] = token.split('.');
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
      const forged = Buffer.from(JSON.stringify({ ...claims, sub: 'usr_admin' })).toString('base64url');
      await rejected(`Bearer ${header}.${forged}.${signature}`);
    });

    it('rejects alg:none and tokens signed with another key', async () => {
      const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
      const now = Math.floor(Date.now() / 1000);
      const payload = Buffer.from(JSON.stringify({ sub: 'usr_alice', typ: 'access', iss: 'platform', aud: 'platform-api', iat: now, exp: now + 60 })).toString('base64url');
      await rejected(`Bearer ${header}.${payload}.`);
      const other = await signAccessToken('another-secret-another-secret-12345', { sub: 'usr_alice' }, 60);
      await rejected(`Bearer ${other}`);
    });

    it('rejects malformed headers, unknown users and bad API keys', async () => {
      await rejected('Basic dXNlcjpwYXNz');
      await rejected('Bearer');
      await rejected(`Bearer ${await signAccessToken(jwtSecret, { sub: 'usr_ghost' }, 60)}`);
      const response = await post({ query: '{ whoami }' }, { 'x-api-key': 'not-a-platform-key' });
      expect(response.status).toBe(401);
    });
  });

  describe('subgraph signature', () => {
    const call = (headers: Record<string, string>) =>
      fetch(subgraph.url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query: '{ whoami }' }) });
    const envelope = (secret: string, iat = Math.floor(Date.now() / 1000)) =>
      signEnvelope(secret, { principal: null, requestId: 'direct', clientIp: '127.0.0.1', iat });

    it('answers 401 to a direct call without a valid gateway signature', async () => {
      expect((await call({})).status).toBe(401);
      expect((await call({ [ENVELOPE_HEADER]: envelope('not-the-gateway-secret-not-the-gateway') })).status).toBe(401);
      expect((await call({ [ENVELOPE_HEADER]: envelope(runtime.config.internalSigningSecret, Math.floor(Date.now() / 1000) - 3600) })).status).toBe(401);
      const good = envelope(runtime.config.internalSigningSecret);
      const tampered = `${Buffer.from(JSON.stringify({ principal: { userId: 'usr_admin', isAdmin: true }, requestId: 'x', clientIp: '', iat: Math.floor(Date.now() / 1000) })).toString('base64url')}.${good.split('.')[1]}`;
      expect((await call({ [ENVELOPE_HEADER]: tampered })).status).toBe(401);
      expect((await call({ [ENVELOPE_HEADER]: good })).status).toBe(200);
    });
  });
});

import { composeServices } from '@apollo/composition';
import { printSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { SUBGRAPH_NAMES, type SubgraphName } from '../core/config';
import { readBody, sendJson } from '../core/http';
import { ENVELOPE_HEADER } from '../core/principal';
import { defineSubgraph, startSubgraph, type PlatformRuntime, type RunningSubgraph } from '../core/subgraph';
import { serviceInfoResolver } from '../core/subgraph/service-info';
import { signAccessToken } from '../core/tokens';
import { createTestDatabase, createTestRuntime, type TestDatabase } from '../test/services';
import { startGateway, type RunningGateway } from './index';
import { matchPortProxyPath, withoutPlatformCookies } from './port-proxy';

/*
 * The gateway's half of the sandbox port proxy, against a stand-in compute subgraph whose
 * rawHttp routes echo what reaches them (the real compute proxy is tested in
 * subgraphs/compute/ports/port-proxy.test.ts): routing, credentials, envelope, upgrades.
 */

const ComputeInfoResolver = serviceInfoResolver('compute');

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  envelope: { userId: string | null; requestId: string } | null;
  body: string;
}
const seen: Seen[] = [];

const echoCompute = defineSubgraph({
  name: 'compute',
  resolvers: [ComputeInfoResolver],
  entities: [],
  migrations: [],
  createServices: () => ({}),
  createResolvers: () => [new ComputeInfoResolver()],
  rawHttp: () => ({
    prefix: '/proxy/',
    handle: async (req, res, envelope) => {
      const body = (await readBody(req, 1 << 20)).toString();
      const entry = { method: req.method!, url: req.url!, headers: req.headers, envelope: envelope && { userId: envelope.principal?.userId ?? null, requestId: envelope.requestId }, body };
      seen.push(entry);
      sendJson(res, 200, entry, { 'x-app': 'echo' });
    },
    upgrade: (req, socket, _head, envelope) => {
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nX-Url: ${req.url}\r\nX-User: ${envelope?.principal?.userId ?? 'anonymous'}\r\n\r\n`);
      socket.pipe(socket);
    },
  }),
});

let database: TestDatabase;
let runtime: PlatformRuntime;
let compute: RunningSubgraph;
let gateway: RunningGateway;
let identityStub: http.Server;

beforeAll(async () => {
  database = await createTestDatabase('t_gw_port_proxy');
  runtime = createTestRuntime({ databaseUrl: database.url, prefix: database.name, env: { LOG_LEVEL: 'silent' } });
  compute = await startSubgraph(echoCompute, runtime, 0);
  // A stand-in identity internal API that knows one user.
  identityStub = http.createServer((req, res) => {
    void readBody(req, 1 << 16).then((raw) => {
      const { userId } = JSON.parse(raw.toString());
      const principal = userId === 'usr_alice' ? { userId, username: 'alice', isAdmin: false, via: 'jwt', defaultWorkspaceId: 'ws_alice', memberships: { ws_alice: 'owner' } } : null;
      sendJson(res, 200, { data: principal });
    });
  });
  await new Promise<void>((resolve) => identityStub.listen(0, '127.0.0.1', resolve));
  const composed = composeServices([{ name: 'compute', url: compute.url, typeDefs: parse(printSubgraphSchema(compute.schema)) }]);
  if (composed.errors) throw new Error(composed.errors.map((e) => e.message).join('\n'));
  const subgraphUrls = Object.fromEntries(SUBGRAPH_NAMES.map((n) => [n, 'http://127.0.0.1:9/graphql'])) as Record<SubgraphName, string>;
  subgraphUrls.compute = compute.url;
  subgraphUrls.identity = `http://127.0.0.1:${(identityStub.address() as AddressInfo).port}/graphql`;
  gateway = await startGateway(runtime, { subgraphUrls, port: 0, supergraphSdl: composed.supergraphSdl, rest: false });
});

afterAll(async () => {
  await gateway?.stop();
  await compute?.stop();
  await runtime?.pubsub.close();
  await new Promise((resolve) => identityStub?.close(resolve));
  await database?.drop();
});

const token = () => signAccessToken(runtime.config.jwtSecret, { sub: 'usr_alice' }, 60);

/** Sends an upgrade request through the gateway; resolves with the answer head and the socket. */
function upgrade(path: string, headers: Record<string, string> = {}): Promise<{ head: string; socket: net.Socket }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(new URL(gateway.url).port), '127.0.0.1', () => {
      const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n${extra}\r\n`);
    });
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      const end = text.indexOf('\r\n\r\n');
      if (end === -1) return;
      socket.off('data', onData);
      resolve({ head: text.slice(0, end), socket });
    };
    socket.on('data', onData);
    socket.on('error', reject);
  });
}

describe('matchPortProxyPath', () => {
  it('matches the route with and without a tail, and maps it onto compute', () => {
    expect(matchPortProxyPath('/v1/sandboxes/sbx_1/ports/8080/proxy')).toEqual({ sandboxId: 'sbx_1', port: '8080', upstreamPath: '/proxy/sbx_1/8080/' });
    expect(matchPortProxyPath('/v1/sandboxes/sbx_1/ports/8080/proxy/')?.upstreamPath).toBe('/proxy/sbx_1/8080/');
    expect(matchPortProxyPath('/v1/sandboxes/sbx_1/ports/8080/proxy/a//b%20c?x=1&y')?.upstreamPath).toBe('/proxy/sbx_1/8080/a//b%20c?x=1&y');
    for (const miss of ['/v1/sandboxes/sbx_1/ports/8080', '/v1/sandboxes/sbx_1/ports/8080/proxyx', '/v1/sandboxes/sbx_1/ports', '/sandboxes/sbx_1/ports/8080/proxy']) {
      expect(matchPortProxyPath(miss)).toBeUndefined();
    }
  });

  it("drops the platform's cookies only", () => {
    expect(withoutPlatformCookies('wcp_idp_binding=abc; app=1;  other=2')).toBe('app=1; other=2');
    expect(withoutPlatformCookies('wcp_idp_binding=abc')).toBeUndefined();
    expect(withoutPlatformCookies(undefined)).toBeUndefined();
  });
});

describe('gateway port proxy', () => {
  it('proxies an anonymous request to compute with a signed envelope, its path and query', async () => {
    const res = await fetch(`${gateway.url}/v1/sandboxes/sbx_1/ports/8080/proxy/a/b?x=1`, { headers: { 'x-request-id': 'req_pp_1' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-app')).toBe('echo');
    const body = (await res.json()) as Seen;
    expect(body).toMatchObject({ method: 'GET', url: '/proxy/sbx_1/8080/a/b?x=1', envelope: { userId: null, requestId: 'req_pp_1' } });
    // Counted like the other raw routes.
    expect(res.headers.get('ratelimit-policy')).toMatch(/anonymous/);
  });

  it('serves every method and the route without a tail', async () => {
    const res = await fetch(`${gateway.url}/v1/sandboxes/sbx_1/ports/3000/proxy`, { method: 'DELETE' });
    expect(await res.json()).toMatchObject({ method: 'DELETE', url: '/proxy/sbx_1/3000/' });
    const posted = await fetch(`${gateway.url}/v1/sandboxes/sbx_1/ports/3000/proxy/api`, { method: 'PUT', body: 'payload', headers: { 'content-type': 'text/plain' } });
    expect(await posted.json()).toMatchObject({ method: 'PUT', url: '/proxy/sbx_1/3000/api', body: 'payload', headers: { 'content-type': 'text/plain' } });
  });

  it("authenticates the caller, and keeps the platform's credentials from the sandbox", async () => {
    const res = await fetch(`${gateway.url}/v1/sandboxes/sbx_1/ports/8080/proxy/`, {
      headers: { authorization: `Bearer ${await token()}`, cookie: 'wcp_idp_binding=secret; app_session=1', 'x-custom': 'kept', [ENVELOPE_HEADER]: 'forged' },
    });
    const body = (await res.json()) as Seen;
    expect(body.envelope?.userId).toBe('usr_alice');
    expect(body.headers.authorization).toBeUndefined();
    expect(body.headers.cookie).toBe('app_session=1');
    expect(body.headers['x-custom']).toBe('kept');

    const apiKey = await fetch(`${gateway.url}/v1/sandboxes/sbx_1/ports/8080/proxy/`, { headers: { 'x-api-key': 'wcp_key_nope' } });
    expect(apiKey.status).toBe(401);
  });

  it('answers 401 to invalid credentials without reaching compute', async () => {
    const before = seen.length;
    const res = await fetch(`${gateway.url}/v1/sandboxes/sbx_1/ports/8080/proxy/`, { headers: { authorization: 'Bearer not-a-token' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect((await res.json()).error.code).toBe('UNAUTHENTICATED');
    expect(seen.length).toBe(before);
  });

  it('proxies WebSocket upgrades on the gateway port, authenticated first', async () => {
    const { head, socket } = await upgrade('/v1/sandboxes/sbx_1/ports/9000/proxy/ws?room=1', { authorization: `Bearer ${await token()}` });
    try {
      expect(head).toMatch(/^HTTP\/1\.1 101 Switching Protocols\r\n/);
      expect(head.toLowerCase()).toContain('x-url: /proxy/sbx_1/9000/ws?room=1');
      expect(head.toLowerCase()).toContain('x-user: usr_alice');
      const echoed = new Promise<string>((resolve) => socket.once('data', (chunk: Buffer) => resolve(chunk.toString())));
      socket.write('hello');
      expect(await echoed).toBe('hello');
    } finally {
      socket.destroy();
    }

    const refused = await upgrade('/v1/sandboxes/sbx_1/ports/9000/proxy/ws', { authorization: 'Bearer not-a-token' });
    expect(refused.head).toMatch(/^HTTP\/1\.1 401 Unauthorized\r\n/);
    refused.socket.destroy();
  });
});

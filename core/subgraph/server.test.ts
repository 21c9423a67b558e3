import { createClient } from 'graphql-ws';
import net from 'node:net';
import WebSocket from 'ws';
import { createTestDatabase, createTestRuntime, type TestDatabase } from '../../test/services';
import { NotFoundError } from '../errors';
import { sendJson } from '../http';
import { ENVELOPE_HEADER, signEnvelope, type Envelope } from '../principal';
import { defineSubgraph } from './define';
import { startSubgraph, type RunningSubgraph } from './server';
import { serviceInfoResolver } from './service-info';
import type { PlatformRuntime } from './define';

/* The subgraph server's raw HTTP hook: routing by prefix, envelopes, upgrades by path. */

const ProbeInfoResolver = serviceInfoResolver('compute');
let closed = 0;

const probe = defineSubgraph({
  name: 'compute',
  resolvers: [ProbeInfoResolver],
  entities: [],
  migrations: [],
  createServices: () => ({ greeting: 'raw' }),
  createResolvers: () => [new ProbeInfoResolver()],
  rawHttp: (services) => ({
    prefix: '/raw/',
    handle: async (req, res, envelope) => {
      if (req.url === '/raw/missing') throw new NotFoundError('Thing', 'x');
      sendJson(res, 200, { greeting: services.greeting, method: req.method, url: req.url, envelope: envelope && { requestId: envelope.requestId, userId: envelope.principal?.userId ?? null } });
    },
    upgrade: (req, socket, _head, envelope) => {
      socket.end(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: probe\r\nConnection: Upgrade\r\nX-Url: ${req.url}\r\nX-Envelope: ${envelope?.requestId ?? 'none'}\r\n\r\n`);
    },
    close: () => {
      closed++;
    },
  }),
});

let database: TestDatabase;
let runtime: PlatformRuntime;
let subgraph: RunningSubgraph;
let base: string;

beforeAll(async () => {
  database = await createTestDatabase('t_subgraph_raw');
  runtime = createTestRuntime({ databaseUrl: database.url, prefix: database.name, env: { LOG_LEVEL: 'silent' } });
  subgraph = await startSubgraph(probe, runtime, 0);
  base = subgraph.url.replace(/\/graphql$/, '');
});

afterAll(async () => {
  await subgraph?.stop();
  await runtime?.pubsub.close();
  await database?.drop();
});

const envelope = (requestId: string): string =>
  signEnvelope(runtime.config.internalSigningSecret, {
    principal: { userId: 'usr_1', username: 'u', isAdmin: false, via: 'jwt', defaultWorkspaceId: 'ws_1', memberships: { ws_1: 'owner' } },
    requestId,
    clientIp: '127.0.0.1',
    iat: Math.floor(Date.now() / 1000),
  } satisfies Envelope);

/** Sends an upgrade request; resolves with what came back before the connection closed. */
function upgrade(path: string, headers: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const port = Number(new URL(base).port);
    const socket = net.connect(port, '127.0.0.1', () => {
      const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: probe\r\n${extra}\r\n`);
    });
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });
}

describe('subgraph rawHttp', () => {
  it('hands requests under the prefix to the routes, with a null envelope when none is signed', async () => {
    const res = await fetch(`${base}/raw/some/path?q=1`, { method: 'PATCH' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ greeting: 'raw', method: 'PATCH', url: '/raw/some/path?q=1', envelope: null });
  });

  it('passes the verified envelope, and null for a forged one', async () => {
    const signed = await fetch(`${base}/raw/x`, { headers: { [ENVELOPE_HEADER]: envelope('req_raw_1') } });
    expect((await signed.json()).envelope).toEqual({ requestId: 'req_raw_1', userId: 'usr_1' });
    const forged = await fetch(`${base}/raw/x`, { headers: { [ENVELOPE_HEADER]: `${envelope('req_raw_2').split('.')[0]}.bad` } });
    expect((await forged.json()).envelope).toBeNull();
  });

  it("answers a handler's DomainError with the platform error shape", async () => {
    const res = await fetch(`${base}/raw/missing`);
    expect(res.status).toBe(404);
    expect((await res.json()).error).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('leaves GraphQL and other paths as they were', async () => {
    expect((await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ computeService { name } }"}' })).status).toBe(401);
    expect((await fetch(`${base}/raw`)).status).toBe(404);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it('routes upgrades by path: the prefix to the routes, anything else but /graphql closed', async () => {
    const raw = await upgrade('/raw/ws?x=1', { [ENVELOPE_HEADER]: envelope('req_ws_1') });
    expect(raw).toMatch(/^HTTP\/1\.1 101 Switching Protocols\r\n/);
    expect(raw).toContain('X-Url: /raw/ws?x=1');
    expect(raw).toContain('X-Envelope: req_ws_1');
    expect(await upgrade('/raw/ws')).toContain('X-Envelope: none');
    expect(await upgrade('/elsewhere')).toBe('');
  });

  it('still serves graphql-ws on /graphql', async () => {
    const client = createClient({ url: subgraph.wsUrl, webSocketImpl: WebSocket, connectionParams: { envelope: envelope('req_ws_gql') }, retryAttempts: 0, lazy: false });
    try {
      const result = await new Promise<unknown>((resolve, reject) => {
        client.subscribe({ query: '{ computeService { name status } }' }, { next: resolve, error: reject, complete: () => undefined });
      });
      expect(result).toEqual({ data: { computeService: { name: 'compute', status: 'ok' } } });
    } finally {
      await client.dispose();
    }
  });

  // Last: stops the subgraph (afterAll's stop is then a no-op).
  it('closes the routes on stop', async () => {
    expect(closed).toBe(0);
    await subgraph.stop();
    expect(closed).toBe(1);
  });
});

import { connect as netConnect } from 'node:net';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { startTestPlatform, type TestPlatform } from '../harness';
import { createUserAndLogin, eventually, loginAdmin, rest } from '../helpers';
import { COMPUTE_TEST_ENV, TEST_IMAGE, createRunning, execIn, json, removeDeploymentContainers, waitForStatus, type Caller } from './support';

jest.setTimeout(60_000);

let platform: TestPlatform;
let alice: Caller;
let mallory: Caller;
const clients: Client[] = [];

/** Answers an HTTP Upgrade with 101, then echoes every byte (a stand-in WebSocket server). */
const ECHO_UPGRADE = 'while IFS= read -r line; do [ "$line" = "$(printf "\\r")" ] && break; done; printf "HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: echo\\r\\nConnection: Upgrade\\r\\n\\r\\n"; exec cat';
const WEB_APP = [
  'mkdir -p /www/api',
  'printf "hello from the sandbox" > /www/index.html',
  'printf "{\\"ok\\":true}" > /www/api/status.json',
  `printf '%s' '${ECHO_UPGRADE}' > /echo.sh`,
  '(nc -ll -p 9000 -e /bin/sh /echo.sh &)',
  'exec httpd -f -p 8080 -h /www',
].join(' && ');

beforeAll(async () => {
  platform = await startTestPlatform({ env: COMPUTE_TEST_ENV });
  const admin = await loginAdmin(platform);
  const a = await createUserAndLogin(platform, admin.auth, 'alice-ports');
  const m = await createUserAndLogin(platform, admin.auth, 'mallory-ports');
  alice = { auth: a.auth, workspaceId: a.defaultWorkspaceId };
  mallory = { auth: m.auth, workspaceId: m.defaultWorkspaceId };
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.dispose()));
  await removeDeploymentContainers(platform);
  await platform?.stop();
});

function connect(who: Caller): Client {
  const client = createClient({ url: platform.wsUrl, webSocketImpl: WebSocket, connectionParams: { authorization: who.auth.authorization }, retryAttempts: 0, lazy: false });
  clients.push(client);
  return client;
}

/** Collects a subscription's events until `until` says stop (or it completes), bounded in time. */
function collect(client: Client, query: string, variables: Record<string, unknown>, until: (events: any[]) => boolean, timeoutMs = 15_000): Promise<{ events: any[]; errors?: unknown }> {
  return new Promise((resolve) => {
    const events: any[] = [];
    let dispose: () => void = () => undefined;
    const timer = setTimeout(() => finish(), timeoutMs);
    const finish = (errors?: unknown) => {
      clearTimeout(timer);
      dispose();
      resolve({ events, errors });
    };
    dispose = client.subscribe(
      { query, variables },
      {
        next: (value) => {
          if (value.errors) return finish(value.errors);
          events.push(value.data);
          if (until(events)) finish();
        },
        error: (err) => finish(err),
        complete: () => finish(),
      },
    );
  });
}

describe('ports', () => {
  let sandbox: any;

  beforeAll(async () => {
    sandbox = await createRunning(platform, alice, { args: ['sh', '-c', WEB_APP] });
  });

  it('adds a port and proxies HTTP to it on the platform\'s own port, with path and query', async () => {
    const added = await rest(platform, 'POST', `/sandboxes/${sandbox.id}/ports`, { port: 8080 }, alice.auth);
    expect(added.status).toBe(201);
    const port = await json(added);
    expect(port).toMatchObject({ sandboxId: sandbox.id, port: 8080, protocol: 'http', public: false, path: `/v1/sandboxes/${sandbox.id}/ports/8080/proxy/` });
    expect(await json(await rest(platform, 'GET', `/sandboxes/${sandbox.id}/ports`, undefined, alice.auth))).toEqual([port]);

    const page = await fetch(`${platform.baseUrl}${port.path}`, { headers: alice.auth });
    expect(page.status).toBe(200);
    expect(await page.text()).toBe('hello from the sandbox');
    const nested = await fetch(`${platform.baseUrl}${port.path}api/status.json?x=1`, { headers: alice.auth });
    expect(await nested.json()).toEqual({ ok: true });
  });

  it('keeps a private port from callers without credentials or membership, and opens a public one', async () => {
    const path = `/v1/sandboxes/${sandbox.id}/ports/8080/proxy/`;
    expect((await fetch(`${platform.baseUrl}${path}`)).status).toBe(401);
    expect((await fetch(`${platform.baseUrl}${path}`, { headers: mallory.auth })).status).toBe(404);
    expect((await fetch(`${platform.baseUrl}${path}`, { headers: { authorization: 'Bearer not-a-token' } })).status).toBe(401);
    expect((await fetch(`${platform.baseUrl}/v1/sandboxes/${sandbox.id}/ports/8081/proxy/`, { headers: alice.auth })).status).toBe(404);
    await rest(platform, 'POST', `/sandboxes/${sandbox.id}/ports`, { port: 8080, public: true }, alice.auth);
    const open = await fetch(`${platform.baseUrl}${path}`);
    expect(open.status).toBe(200);
  });

  it('tunnels an upgraded connection (WebSocket path) both ways', async () => {
    await rest(platform, 'POST', `/sandboxes/${sandbox.id}/ports`, { port: 9000 }, alice.auth);
    const url = new URL(platform.baseUrl);
    const socket = netConnect(Number(url.port), url.hostname);
    const received: Buffer[] = [];
    socket.on('data', (chunk) => received.push(chunk));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      `GET /v1/sandboxes/${sandbox.id}/ports/9000/proxy/ HTTP/1.1\r\nHost: ${url.host}\r\nConnection: Upgrade\r\nUpgrade: echo\r\nAuthorization: ${alice.auth.authorization}\r\n\r\n`,
    );
    await eventually(() => Buffer.concat(received).toString().includes('\r\n\r\n'), 10_000, 'the 101 answer').catch((err) => { throw new Error(`${err.message}; received: ${JSON.stringify(Buffer.concat(received).toString())}`); });
    expect(Buffer.concat(received).toString()).toMatch(/^HTTP\/1\.1 101/);
    received.length = 0;
    socket.write('ping through the tunnel\n');
    await eventually(() => Buffer.concat(received).toString().includes('ping through the tunnel'), 10_000, 'the echo');
    socket.destroy();
  });

  it('refuses bad ports and ports of a stopped sandbox', async () => {
    for (const port of [0, 70000, 1.5]) {
      expect((await rest(platform, 'POST', `/sandboxes/${sandbox.id}/ports`, { port }, alice.auth)).status).toBe(400);
    }
    expect((await rest(platform, 'POST', `/sandboxes/${sandbox.id}/ports`, { port: 80, protocol: 'udp' }, alice.auth)).status).toBe(400);
    const other = await createRunning(platform, alice);
    await rest(platform, 'POST', `/sandboxes/${other.id}/stop`, undefined, alice.auth);
    await waitForStatus(platform, alice, other.id, 'stopped');
    const refused = await rest(platform, 'POST', `/sandboxes/${other.id}/ports`, { port: 80 }, alice.auth);
    expect(refused.status).toBe(409);
  });
});

describe('subscriptions', () => {
  it('streams status changes of a sandbox', async () => {
    const created = await json(await rest(platform, 'POST', '/sandboxes', { name: 'watched', workspaceId: alice.workspaceId, image: TEST_IMAGE, args: ['sleep', '3600'] }, alice.auth));
    await waitForStatus(platform, alice, created.id, 'running');
    const client = connect(alice);
    const watching = collect(client, 'subscription($id: ID!) { sandboxStatus(id: $id) { sandboxId fromStatus toStatus reason at } }', { id: created.id }, (e) => e.some((x) => x.sandboxStatus.toStatus === 'stopped'));
    await new Promise((r) => setTimeout(r, 300));
    await rest(platform, 'POST', `/sandboxes/${created.id}/stop`, undefined, alice.auth);
    const { events, errors } = await watching;
    expect(errors).toBeUndefined();
    expect(events.map((e) => e.sandboxStatus.toStatus)).toEqual(['stopping', 'stopped']);
  });

  it('streams a command\'s output as it comes, then its exit', async () => {
    const sandbox = await createRunning(platform, alice);
    const client = connect(alice);
    const started = Date.now();
    const { events, errors } = await collect(
      client,
      'subscription($id: ID!, $c: JSON!) { sandboxExecStream(id: $id, command: $c) { type data exitCode timedOut } }',
      { id: sandbox.id, c: 'echo one; sleep 1; echo two >&2; exit 5' },
      (e) => e.some((x) => x.sandboxExecStream.type === 'exit'),
    );
    expect(errors).toBeUndefined();
    const stream = events.map((e) => e.sandboxExecStream);
    expect(stream.filter((e) => e.type !== 'exit').map((e) => [e.type, e.data])).toEqual([
      ['stdout', 'one\n'],
      ['stderr', 'two\n'],
    ]);
    expect(stream.at(-1)).toMatchObject({ type: 'exit', exitCode: 5, timedOut: false });
    expect(Date.now() - started).toBeGreaterThan(900);
  });

  it('streams log lines live, and refuses another workspace\'s sandbox', async () => {
    const sandbox = await createRunning(platform, alice, { args: ['sh', '-c', 'i=0; while true; do i=$((i+1)); echo "tick $i"; sleep 0.3; done'] });
    const client = connect(alice);
    const { events, errors } = await collect(client, 'subscription($id: ID!) { sandboxLogStream(id: $id) { stream line at } }', { id: sandbox.id }, (e) => e.length >= 3);
    expect(errors).toBeUndefined();
    expect(events.map((e) => e.sandboxLogStream.line)).toEqual([expect.stringMatching(/^tick \d+$/), expect.stringMatching(/^tick \d+$/), expect.stringMatching(/^tick \d+$/)]);

    const foreign = await collect(connect(mallory), 'subscription($id: ID!) { sandboxLogStream(id: $id) { line } }', { id: sandbox.id }, () => true, 5000);
    expect(JSON.stringify(foreign.errors)).toContain('NOT_FOUND');
    const foreignExec = await collect(connect(mallory), 'subscription($id: ID!) { sandboxExecStream(id: $id, command: "id") { type } }', { id: sandbox.id }, () => true, 5000);
    expect(JSON.stringify(foreignExec.errors)).toContain('NOT_FOUND');
    expect((await execIn(platform, mallory, sandbox.id, { command: 'id' })).status).toBe(404);
  });
});

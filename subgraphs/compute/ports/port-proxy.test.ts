import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { NotFoundError } from '../../../core/errors';
import { createLogger } from '../../../core/logger';
import type { RawHttpRoutes } from '../../../core/subgraph';
import { DockerRuntime } from '../../../worker/runtime/docker';
import { createPortProxy } from './port-proxy';

/*
 * Against the local Docker engine with the prebuilt busybox image (never pulled). The container
 * runs busybox httpd on 8080 (no keep-alive), a keep-alive responder on 8081 that echoes the
 * request line, an upgrade responder on 9000 (101, then `cat`) and one on 9100 that never
 * answers. It carries platform.test=port-proxy and is removed in afterAll.
 */

jest.setTimeout(60_000);

const BUSYBOX = 'platform/busybox:latest';
const RUN = randomBytes(4).toString('hex');
const LABELS = { 'platform.test': 'port-proxy', 'platform.test-run': RUN };

/** Answers every request of a connection with 200 and `<request line> envelope=<yes|no>`. */
const KEEP_SH = `#!/bin/sh
CR=$(printf '\\r')
while IFS= read -r line; do
  line=\${line%"$CR"}
  env=no
  while IFS= read -r h; do
    h=\${h%"$CR"}
    [ -z "$h" ] && break
    case "$h" in [Xx]-[Pp]latform-[Ee]nvelope:*) env=yes;; esac
  done
  body="$line envelope=$env"
  printf 'HTTP/1.1 200 OK\\r\\nContent-Type: text/plain\\r\\nContent-Length: %d\\r\\n\\r\\n%s' "\${#body}" "$body"
done
`;

/** Reads the request head, switches protocols, then echoes bytes. */
const ECHO_SH = `#!/bin/sh
CR=$(printf '\\r')
while IFS= read -r h; do
  h=\${h%"$CR"}
  [ -z "$h" ] && break
done
printf 'HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n\\r\\n'
exec cat
`;

const SETUP = `set -e
mkdir -p /www
printf hello > /www/index.html
printf '%s' "$KEEP_SH" > /keep.sh
printf '%s' "$ECHO_SH" > /echo.sh
printf '#!/bin/sh\\nsleep 60\\n' > /slow.sh
chmod +x /keep.sh /echo.sh /slow.sh
nc -ll -p 8081 -e /keep.sh &
nc -ll -p 9000 -e /echo.sh &
nc -ll -p 9100 -e /slow.sh &
exec httpd -f -p 8080 -h /www
`;

const docker = new DockerRuntime();
let opens = 0;
/** The runtime as the proxy sees it, counting the port streams (nc execs) it opens. */
const runtime = {
  openPortStream: (containerId: string, port: number) => {
    opens++;
    return docker.openPortStream(containerId, port);
  },
};

let containerId: string;
let routes: RawHttpRoutes;
let server: http.Server;
let base: string;
let port: number;

beforeAll(async () => {
  ({ containerId } = await docker.createAndStart({
    name: `plat-test-${RUN}-port-proxy`,
    image: BUSYBOX,
    env: { KEEP_SH, ECHO_SH },
    args: ['sh', '-c', SETUP],
    labels: LABELS,
  }));
  const deadline = Date.now() + 10_000;
  for (;;) {
    const r = await docker.exec(containerId, { argv: ['sh', '-c', 'netstat -ltn | grep -cE ":(8080|8081|9000|9100) "'], timeoutMs: 5000, maxOutputBytes: 1024 });
    if (r.stdout.toString().trim() === '4') break;
    if (Date.now() > deadline) throw new Error(`the container's servers did not start: ${r.stdout}${r.stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  routes = createPortProxy({
    runtime,
    resolveTarget: async (_envelope, sandboxId) => {
      if (sandboxId !== 'sbx_1') throw new NotFoundError('Sandbox', sandboxId);
      return { containerId };
    },
    logger: createLogger('silent'),
    firstByteTimeoutMs: 2000,
  });
  server = http.createServer((req, res) => {
    routes.handle(req, res, null).catch((err) => {
      res.statusCode = 500;
      res.end(String(err));
    });
  });
  server.on('upgrade', (req, socket, head) => routes.upgrade!(req, socket, head, null));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await routes?.close?.();
  if (server) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  const mine = await docker.listByLabels({ 'platform.test-run': RUN });
  const stale = (await docker.docker.listContainers({ all: true, filters: { label: ['platform.test=port-proxy'] } })).filter(
    (c) => c.Created * 1000 < Date.now() - 10 * 60_000,
  );
  await Promise.all([...mine.map((c) => c.id), ...stale.map((c) => c.Id)].map((id) => docker.remove(id)));
});

/** A raw connection: writes `request`, resolves with everything up to the end of the head. */
function rawUpgrade(request: string): Promise<{ socket: net.Socket; head: string; rest: Buffer }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let buffered: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end === -1) return;
      socket.off('data', onData);
      socket.pause();
      resolve({ socket, head: buffered.subarray(0, end).toString(), rest: buffered.subarray(end + 4) });
    };
    socket.on('data', onData);
    socket.on('error', reject);
    socket.on('end', () => reject(new Error(`closed after ${JSON.stringify(buffered.toString())}`)));
  });
}

/** Forwarders (nc execs of the runtime) running in the container for a port. */
async function forwarders(port: number): Promise<number> {
  const r = await docker.exec(containerId, { argv: ['sh', '-c', 'for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < $f 2>/dev/null; echo; done'], timeoutMs: 5000, maxOutputBytes: 1 << 16 });
  return r.stdout.toString().split('\n').filter((line) => line.trim() === `nc 127.0.0.1 ${port}`).length;
}

async function waitFor(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function readUntil(socket: net.Socket, text: string, initial: Buffer = Buffer.alloc(0)): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered: Buffer = initial;
    const check = () => {
      if (!buffered.toString().includes(text)) return false;
      socket.off('data', onData);
      resolve(buffered.toString());
      return true;
    };
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      check();
    };
    if (check()) return;
    socket.on('data', onData);
    socket.once('error', reject);
    socket.resume();
  });
}

describe('createPortProxy', () => {
  it('proxies to a port inside the container, with its own path', async () => {
    const res = await fetch(`${base}/proxy/sbx_1/8080/index.html?x=1`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('hello');
    // No path after the port is the root.
    const root = await fetch(`${base}/proxy/sbx_1/8080`);
    expect(root.status).toBe(200);
    expect(await root.text()).toBe('hello');
  });

  it('forwards path and query unchanged, drops the envelope header, and reuses one connection (one nc exec)', async () => {
    const before = opens;
    const first = await fetch(`${base}/proxy/sbx_1/8081/a/b%20c?x=1&y=%2F`, { headers: { 'x-platform-envelope': 'secret' } });
    expect(first.status).toBe(200);
    expect(await first.text()).toBe('GET /a/b%20c?x=1&y=%2F HTTP/1.1 envelope=no');
    const second = await fetch(`${base}/proxy/sbx_1/8081/again`, { method: 'POST', body: 'ignored' });
    expect(await second.text()).toBe('POST /again HTTP/1.1 envelope=no');
    expect(opens - before).toBe(1);
  });

  it('answers 404 with the platform error body when resolveTarget refuses', async () => {
    const res = await fetch(`${base}/proxy/sbx_other/8080/`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'Sandbox sbx_other not found', details: { resource: 'Sandbox', id: 'sbx_other' }, requestId: 'none' } });
  });

  it('answers 400 to a port that is not one', async () => {
    const res = await fetch(`${base}/proxy/sbx_1/99999/`);
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe('VALIDATION_FAILED');
  });

  it('answers 502 UPSTREAM_UNAVAILABLE at once when nothing listens on the port', async () => {
    const started = Date.now();
    const res = await fetch(`${base}/proxy/sbx_1/7777/`);
    expect(res.status).toBe(502);
    expect((await res.json()).error).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', details: { port: 7777 } });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('answers 502 UPSTREAM_UNAVAILABLE when the upstream does not answer in time', async () => {
    const started = Date.now();
    const res = await fetch(`${base}/proxy/sbx_1/9100/`);
    expect(res.status).toBe(502);
    expect((await res.json()).error).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', message: expect.stringMatching(/did not answer within 2 s/) });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('ends the connection into the container when the client goes away before the answer', async () => {
    await waitFor(async () => (await forwarders(9100)) === 0, 5000, 'forwarders of earlier tests to end');
    const aborted = new AbortController();
    const pending = fetch(`${base}/proxy/sbx_1/9100/`, { signal: aborted.signal }).catch((err: Error) => err.name);
    await waitFor(async () => (await forwarders(9100)) === 1, 5000, 'the forwarder to start');
    aborted.abort();
    expect(await pending).toBe('AbortError');
    await waitFor(async () => (await forwarders(9100)) === 0, 1500, 'the forwarder to end');
  });

  it('proxies an upgrade (any protocol, not only WebSocket) and then bytes both ways', async () => {
    const { socket, head, rest } = await rawUpgrade('GET /proxy/sbx_1/9000/socket?x=1 HTTP/1.1\r\nHost: sandbox\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n');
    try {
      expect(head).toMatch(/^HTTP\/1\.1 101 Switching Protocols\r\n/);
      expect(head.toLowerCase()).toContain('upgrade: websocket');
      socket.write('ping\n');
      expect(await readUntil(socket, 'ping\n', rest)).toBe('ping\n');
      socket.write('pong\n');
      expect(await readUntil(socket, 'pong\n')).toBe('pong\n');
      expect(await forwarders(9000)).toBe(1);
    } finally {
      socket.destroy();
    }
    // The client going away ends the connection into the container.
    await waitFor(async () => (await forwarders(9000)) === 0, 5000, 'the forwarder of the upgrade to end');
  });

  it('closes idle pooled connections', async () => {
    const idle = createPortProxy({ runtime, resolveTarget: async () => ({ containerId }), logger: createLogger('silent'), idleTimeoutMs: 300 });
    const local = http.createServer((req, res) => void idle.handle(req, res, null));
    await new Promise<void>((resolve) => local.listen(0, '127.0.0.1', resolve));
    try {
      // The other proxy of this file may hold a pooled connection to 8081 too.
      const before = await forwarders(8081);
      const res = await fetch(`http://127.0.0.1:${(local.address() as AddressInfo).port}/proxy/sbx_1/8081/idle`);
      expect(await res.text()).toBe('GET /idle HTTP/1.1 envelope=no');
      // Pooled (keep-alive) right after the answer, gone once idle.
      expect(await forwarders(8081)).toBe(before + 1);
      await waitFor(async () => (await forwarders(8081)) <= before, 5000, 'the idle forwarder to end');
    } finally {
      await idle.close?.();
      local.closeAllConnections();
      await new Promise((resolve) => local.close(resolve));
    }
  });

  it('refuses an upgrade with a plain HTTP error response: unknown sandbox, nothing listening', async () => {
    const unknown = await rawUpgrade('GET /proxy/sbx_other/9000/ HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n');
    expect(unknown.head).toMatch(/^HTTP\/1\.1 404 Not Found\r\n/);
    expect(JSON.parse(await readUntil(unknown.socket, '}}', unknown.rest)).error.code).toBe('NOT_FOUND');
    unknown.socket.destroy();

    const closed = await rawUpgrade('GET /proxy/sbx_1/7777/ HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n');
    expect(closed.head).toMatch(/^HTTP\/1\.1 502 Bad Gateway\r\n/);
    closed.socket.destroy();
  });
});

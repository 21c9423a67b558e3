import httpProxy from 'http-proxy';
import { Agent, type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { BadRequestError, DomainError, InvalidStateError, UnavailableError, ValidationError } from '../../../core/errors';
import { sendError, sendUpgradeError } from '../../../core/http';
import type { Logger } from '../../../core/logger';
import { ENVELOPE_HEADER, type Envelope } from '../../../core/principal';
import type { RawHttpRoutes } from '../../../core/subgraph';
import { ContainerNotFoundError, ContainerNotRunningError, RuntimeUnavailableError } from '../../../worker/runtime/errors';
import type { ContainerRuntime } from '../../../worker/runtime/types';

export const PORT_PROXY_PREFIX = '/proxy/';

export interface PortProxyOptions {
  /** Only `openPortStream` is used: one exec of `nc` per upstream connection. */
  runtime: Pick<ContainerRuntime, 'openPortStream'>;
  /**
   * The container behind `sandboxId`, if the caller (null envelope: no signed caller) may reach
   * `port` of it; otherwise throws a DomainError (404 NOT_FOUND, 403, 409 not running, ...).
   */
  resolveTarget(envelope: Envelope | null, sandboxId: string, port: number): Promise<{ containerId: string }>;
  logger: Logger;
  /** Bound on the wait for the upstream's response head (or 101), connecting included. @defaultValue 30000 */
  firstByteTimeoutMs?: number;
  /** Idle pooled connections (nc execs) are closed after this long. @defaultValue 30000 */
  idleTimeoutMs?: number;
  /** Keep-alive agents kept, one per (container, port); the least recently used goes first. @defaultValue 256 */
  maxAgents?: number;
}

/** Connections (nc execs) open at once per (container, port); further requests wait for one. */
const MAX_SOCKETS_PER_TARGET = 32;
/** Idle connections kept per (container, port). */
const MAX_FREE_SOCKETS_PER_TARGET = 8;

/**
 * The compute side of `/v1/sandboxes/{id}/ports/{port}/proxy/*`: the gateway forwards (every
 * method, and upgrades: WebSocket or any protocol) to `/proxy/<sandboxId>/<port>/<rest>?<query>`
 * here, with a signed envelope; this proxies to `/<rest>?<query>` on 127.0.0.1:<port> inside the
 * sandbox's container, through a byte stream of the runtime (an exec of `nc`; no container
 * address).
 *
 * - Connections are pooled: a keep-alive agent per (container, port), so consecutive requests
 *   reuse one exec; idle ones close after `idleTimeoutMs`.
 * - `resolveTarget` failures answer the platform error shape (an upgrade: a plain HTTP error
 *   response, then the socket is closed).
 * - Nothing listening, a connection closed before an answer, or no answer head within
 *   `firstByteTimeoutMs`: 502 UPSTREAM_UNAVAILABLE. Once the upstream's answer has started, a
 *   failure can only cut the connection.
 * - The envelope header is removed before the request reaches the sandbox.
 */
export function createPortProxy(options: PortProxyOptions): RawHttpRoutes {
  const { runtime, logger } = options;
  const firstByteTimeoutMs = options.firstByteTimeoutMs ?? 30_000;
  const idleTimeoutMs = options.idleTimeoutMs ?? 30_000;
  const maxAgents = options.maxAgents ?? 256;

  const proxy = httpProxy.createProxyServer({ ws: true, xfwd: false });
  allowAnyUpgrade(proxy);
  // Every call passes its own error callback; this only keeps a stray event from crashing the process.
  proxy.on('error', (err) => logger.warn('port proxy error', { err }));

  /** Client sockets of upgrades (answered or pending), closed on stop. */
  const upgraded = new Set<Duplex>();
  /** Upgrades whose upstream answered (101 or an HTTP response): a later failure only cuts them. */
  const answered = new WeakSet<Duplex>();
  proxy.on('proxyReqWs', (proxyReq, _req, socket) => {
    proxyReq.once('response', () => answered.add(socket));
    proxyReq.once('upgrade', (_res, upstream: Duplex) => {
      answered.add(socket);
      // Either side gone ends the other (http-proxy's pipes only pass on a clean end).
      socket.once('close', () => upstream.destroy());
      upstream.once('close', () => socket.destroy());
    });
  });
  // A client that goes away mid-answer (a stream, say) must not leave the upstream connection open.
  proxy.on('proxyReq', (proxyReq, _req, res) => {
    res.once('close', () => {
      if (!res.writableFinished) proxyReq.destroy();
    });
  });
  // Connection is hop-by-hop: the upstream closing its (pooled) connection does not close the client's.
  proxy.on('proxyRes', (proxyRes) => {
    delete proxyRes.headers.connection;
  });

  /** Keep-alive agents by `containerId:port`; a Map keeps insertion order, refreshed on use (LRU). */
  const agents = new Map<string, PortAgent>();
  const agentFor = (containerId: string, port: number): PortAgent => {
    const key = `${containerId}:${port}`;
    let agent = agents.get(key);
    if (agent) {
      agents.delete(key);
    } else {
      agent = new PortAgent(() => runtime.openPortStream(containerId, port), { port, firstByteTimeoutMs, idleTimeoutMs });
      if (agents.size >= maxAgents) {
        const [oldestKey, oldest] = agents.entries().next().value as [string, PortAgent];
        agents.delete(oldestKey);
        // Requests in flight finish on their connections; idle ones go now, the rest when idle.
        oldest.closeIdle();
      }
    }
    agents.set(key, agent);
    return agent;
  };

  /** Parses `/proxy/<sandboxId>/<port>[/<rest>]`; the upstream path keeps its raw encoding. */
  const targetOf = (req: IncomingMessage): { sandboxId: string; port: number; path: string } => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q === -1 ? url : url.slice(0, q);
    const match = /^([^/]+)\/([^/]+)(\/.*)?$/.exec(pathname.slice(PORT_PROXY_PREFIX.length));
    if (!match) throw new DomainError('ROUTE_NOT_FOUND', `No route ${req.method} ${pathname}: expected ${PORT_PROXY_PREFIX}<sandboxId>/<port>/<path>`);
    let sandboxId: string;
    try {
      sandboxId = decodeURIComponent(match[1]);
    } catch {
      throw new BadRequestError('The sandbox id is not valid percent-encoding');
    }
    return { sandboxId, port: parsePort(match[2]), path: (match[3] ?? '/') + (q === -1 ? '' : url.slice(q)) };
  };

  /** Prepares the request for the sandbox: its own path, and nothing of the platform's. */
  const rewrite = (req: IncomingMessage, path: string) => {
    req.url = path;
    delete req.headers[ENVELOPE_HEADER];
    // The body is sent at once; a 100-continue from the upstream would not be relayed anyway.
    delete req.headers.expect;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, envelope: Envelope | null): Promise<void> => {
    const requestId = envelope?.requestId ?? 'none';
    let target: { sandboxId: string; port: number; path: string };
    let containerId: string;
    try {
      target = targetOf(req);
      ({ containerId } = await options.resolveTarget(envelope, target.sandboxId, target.port));
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      return sendError(res, err.code, err.message, requestId, err.details);
    }
    rewrite(req, target.path);
    proxy.web(req, res, { target: `http://127.0.0.1:${target.port}`, agent: agentFor(containerId, target.port) }, (err) => {
      const error = upstreamError(err, target);
      logger.debug('port proxy: upstream failed', { err, requestId, port: target.port });
      if (res.headersSent) return void res.destroy();
      sendError(res, error.code, error.message, requestId, error.details);
    });
  };

  const upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer, envelope: Envelope | null): void => {
    const requestId = envelope?.requestId ?? 'none';
    upgraded.add(socket);
    socket.once('close', () => upgraded.delete(socket));
    // A client that goes away must not crash anything; the pipes end with it.
    socket.on('error', () => socket.destroy());
    const fail = (err: unknown, target?: { sandboxId: string; port: number }) => {
      if (socket.destroyed) return;
      if (answered.has(socket)) return void socket.destroy();
      const error = err instanceof DomainError ? err : target ? upstreamError(err, target) : undefined;
      if (error) return sendUpgradeError(socket, error.code, error.message, requestId, error.details);
      logger.error('port proxy upgrade failed', { err, requestId });
      sendUpgradeError(socket, 'INTERNAL', 'Internal server error', requestId);
    };
    void (async () => {
      let target: { sandboxId: string; port: number; path: string };
      let containerId: string;
      try {
        target = targetOf(req);
        ({ containerId } = await options.resolveTarget(envelope, target.sandboxId, target.port));
      } catch (err) {
        return fail(err);
      }
      if (socket.destroyed) return;
      rewrite(req, target.path);
      proxy.ws(req, socket, head, { target: `http://127.0.0.1:${target.port}`, agent: agentFor(containerId, target.port) }, (err) => fail(err, target));
    })();
  };

  const close = () => {
    for (const socket of upgraded) socket.destroy();
    upgraded.clear();
    for (const agent of agents.values()) agent.destroy();
    agents.clear();
    proxy.close();
  };

  return { prefix: PORT_PROXY_PREFIX, handle, upgrade, close };
}

/** A port number 1–65535 from a path segment, else 400 VALIDATION_FAILED. */
export function parsePort(segment: string): number {
  const port = /^\d{1,5}$/.test(segment) ? Number(segment) : NaN;
  if (!(port >= 1 && port <= 65535)) throw new ValidationError(`"${segment}" is not a port (1-65535)`, { field: 'port' });
  return port;
}

/** What a failure to reach the sandbox's port answers. */
function upstreamError(err: unknown, target: { sandboxId: string; port: number }): DomainError {
  if (err instanceof DomainError) return err;
  if (err instanceof RuntimeUnavailableError) return new UnavailableError('The container engine is unavailable');
  if (err instanceof ContainerNotRunningError || err instanceof ContainerNotFoundError) return new InvalidStateError('sandbox', 'not running', 'reach a port of');
  return new DomainError('UPSTREAM_UNAVAILABLE', `Nothing answered on port ${target.port} of sandbox ${target.sandboxId}`, { sandboxId: target.sandboxId, port: target.port });
}

/**
 * A keep-alive agent whose connections are port streams of one (container, port). Each request
 * gets `firstByteTimeoutMs` for its answer head (or 101) to arrive, waiting for a connection
 * included; then it is destroyed with 502 UPSTREAM_UNAVAILABLE.
 */
class PortAgent extends Agent {
  constructor(
    private readonly open: () => Promise<Duplex>,
    private readonly limits: { port: number; firstByteTimeoutMs: number; idleTimeoutMs: number },
  ) {
    // `timeout` is the idle timeout of pooled connections (the agent destroys a free one on 'timeout').
    super({ keepAlive: true, timeout: limits.idleTimeoutMs, maxSockets: MAX_SOCKETS_PER_TARGET, maxFreeSockets: MAX_FREE_SOCKETS_PER_TARGET, scheduling: 'lifo' });
  }

  override createConnection(_options: unknown, callback?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    this.open().then(
      (stream) => callback!(null, asSocket(stream)),
      (err: unknown) => callback!(err instanceof Error ? err : new Error(String(err)), undefined as never),
    );
    return undefined;
  }

  /** Node calls this synchronously for every request of the agent: the place to bound its wait. */
  addRequest(req: ClientRequest, options: unknown): void {
    const timer = setTimeout(() => {
      req.destroy(new DomainError('UPSTREAM_UNAVAILABLE', `Port ${this.limits.port} did not answer within ${this.limits.firstByteTimeoutMs / 1000} s`, { port: this.limits.port }));
    }, this.limits.firstByteTimeoutMs);
    const clear = () => clearTimeout(timer);
    req.once('response', clear);
    req.once('upgrade', clear);
    req.once('close', clear);
    (Agent.prototype as unknown as { addRequest(req: ClientRequest, options: unknown): void }).addRequest.call(this, req, options);
  }

  /** Destroys the idle pooled connections; busy ones are left to finish. */
  closeIdle(): void {
    for (const sockets of Object.values(this.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
  }
}

/** The net.Socket methods Node's http client and http-proxy call, where a stream lacks them. */
function asSocket(stream: Duplex): Duplex {
  const socket = stream as Duplex & Record<string, unknown>;
  for (const name of ['setTimeout', 'setNoDelay', 'setKeepAlive', 'ref', 'unref']) {
    if (typeof socket[name] !== 'function') socket[name] = () => socket;
  }
  return socket;
}

/**
 * http-proxy passes only `GET` + `Upgrade: websocket`, destroying other upgrades without an
 * answer; an app in a sandbox may speak any protocol after an Upgrade, so the check goes.
 * (Node emits 'upgrade' only for requests that carry an Upgrade header.)
 */
function allowAnyUpgrade(proxy: httpProxy): void {
  const passes = proxy as unknown as { wsPasses: Array<{ name: string }> };
  passes.wsPasses = passes.wsPasses.filter((pass) => pass.name !== 'checkMethodAndHeader');
}

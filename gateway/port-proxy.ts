import httpProxy from 'http-proxy';
import { Agent, type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { DomainError, UnavailableError } from '../core/errors';
import { sendJson, sendUpgradeError } from '../core/http';
import type { Logger } from '../core/logger';
import { ENVELOPE_HEADER, signEnvelope } from '../core/principal';
import type { RawRouteHandler } from '../rest-compat';
import { toRestError } from '../rest-compat/errors';
import { requestIdOf, type GatewayContext } from './context';

/**
 * `/v1/sandboxes/<id>/ports/<port>/proxy` and `/v1/sandboxes/<id>/ports/<port>/proxy/<rest...>`:
 * every method, and upgrades (WebSocket or any protocol). Matched here, before the REST layer,
 * because the route takes any method, a trailing slash and empty segments in its tail, and
 * upgrades, none of which the REST route table expresses.
 */
const PORT_PROXY_PATH = /^\/v1\/sandboxes\/([^/]+)\/ports\/([^/]+)\/proxy(\/.*)?$/;

/** Cookies the platform sets itself start with this (`wcp_idp_binding`); they never reach a sandbox. */
export const PLATFORM_COOKIE_PREFIX = 'wcp_';

/** Matching connections (and so requests in flight) per gateway to compute's port proxy. */
const MAX_SOCKETS = 256;

export interface PortProxyPath {
  /** The id and port segments as sent (still percent-encoded; compute decodes and checks them). */
  sandboxId: string;
  port: string;
  /** Path on compute: `/proxy/<id>/<port><rest>?<query>` (the rest `/` when absent). */
  upstreamPath: string;
}

/** The port-proxy route a request URL (path and query) names, or undefined. */
export function matchPortProxyPath(url: string): PortProxyPath | undefined {
  const q = url.indexOf('?');
  const match = PORT_PROXY_PATH.exec(q === -1 ? url : url.slice(0, q));
  if (!match) return undefined;
  const [, sandboxId, port, rest] = match;
  return { sandboxId, port, upstreamPath: `/proxy/${sandboxId}/${port}${rest ?? '/'}${q === -1 ? '' : url.slice(q)}` };
}

export interface GatewayPortProxyOptions {
  /** Base URL of the compute subgraph (its GraphQL URL without /graphql). */
  computeUrl: string;
  signingSecret: string;
  /** buildContext: null principal without credentials; bad credentials throw (401). */
  authenticate(req: IncomingMessage, requestId: string): Promise<GatewayContext>;
  /** Wraps the HTTP handler, e.g. with the rate limiter (upgrades are not counted). */
  limit?(handler: RawRouteHandler): RawRouteHandler;
  logger: Logger;
  /**
   * Bound on the wait for compute's answer head; compute bounds the sandbox's own at 30 s and
   * answers 502 itself, so this only fires when compute hangs. @defaultValue 35000
   */
  firstByteTimeoutMs?: number;
}

export interface GatewayPortProxy {
  /** Whether a request path (no query) is a port-proxy route. */
  matches(pathname: string): boolean;
  /** Serves a matching request completely; never throws. */
  handle(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void>;
  /** Takes over a matching upgrade (the socket of the server's 'upgrade' event). */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Ends upgraded connections and pooled sockets. */
  close(): void;
}

/**
 * The gateway's half of the sandbox port proxy: authenticates the caller (none is fine: whether
 * a port is public is compute's call; present but invalid credentials are 401), signs an
 * envelope and proxies the request byte for byte to compute's `/proxy/<id>/<port>/<rest>`
 * (subgraphs/compute/ports/port-proxy.ts), which reaches the port inside the container.
 *
 * The platform's credentials stay here: Authorization, X-API-Key and the platform's own cookies
 * (`wcp_*`) are removed before the request leaves; every other header goes through unchanged.
 */
export function createGatewayPortProxy(options: GatewayPortProxyOptions): GatewayPortProxy {
  const { logger, computeUrl } = options;
  const proxy = httpProxy.createProxyServer({ ws: true, xfwd: false });
  allowAnyUpgrade(proxy);
  // Every call passes its own error callback; this only keeps a stray event from crashing the process.
  proxy.on('error', (err) => logger.warn('port proxy error', { err }));
  const agent = new BoundedAgent(options.firstByteTimeoutMs ?? 35_000);

  const upgraded = new Set<Duplex>();
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

  /** What leaves for compute: its path, the envelope, none of the platform's credentials. */
  const prepare = (req: IncomingMessage, ctx: GatewayContext, path: PortProxyPath) => {
    const headers = req.headers;
    delete headers.authorization;
    delete headers['x-api-key'];
    // The body goes out at once; a 100-continue from upstream would not be relayed.
    delete headers.expect;
    const cookies = withoutPlatformCookies(headers.cookie);
    if (cookies) headers.cookie = cookies;
    else delete headers.cookie;
    headers['x-request-id'] = ctx.requestId;
    headers[ENVELOPE_HEADER] = signEnvelope(options.signingSecret, {
      principal: ctx.principal,
      requestId: ctx.requestId,
      clientIp: ctx.clientIp,
      workspaceHeader: ctx.workspaceHeader,
      iat: Math.floor(Date.now() / 1000),
    });
    req.url = path.upstreamPath;
  };

  const proxyHttp: RawRouteHandler = async (req, res, route) => {
    const path = matchPortProxyPath(req.url ?? '/')!;
    const ctx = await options.authenticate(req, route.requestId);
    prepare(req, ctx, path);
    proxy.web(req, res, { target: computeUrl, agent }, (err) => {
      if (res.headersSent) return void res.destroy();
      const error = computeError(err);
      logger.warn('port proxy: compute failed', { err, requestId: route.requestId });
      send(res, route.requestId, error);
    });
  };
  const limited = options.limit ? options.limit(proxyHttp) : proxyHttp;

  const handle = async (req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> => {
    const url = req.url ?? '/';
    const path = matchPortProxyPath(url);
    try {
      if (!path) throw new DomainError('ROUTE_NOT_FOUND', `No route ${req.method} ${url.split('?')[0]}`);
      const q = url.indexOf('?');
      await limited(req, res, {
        params: { id: path.sandboxId, port: path.port },
        query: new URLSearchParams(q === -1 ? '' : url.slice(q + 1)),
        requestId,
        path: '/sandboxes/{id}/ports/{port}/proxy/*',
      });
    } catch (err) {
      if (res.headersSent) return void res.destroy();
      if (!(err instanceof DomainError)) logger.error('port proxy failed', { err, requestId });
      send(res, requestId, err);
    }
  };

  const upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const requestId = requestIdOf(req);
    upgraded.add(socket);
    socket.once('close', () => upgraded.delete(socket));
    socket.on('error', () => socket.destroy());
    const fail = (err: unknown) => {
      if (socket.destroyed) return;
      if (answered.has(socket)) return void socket.destroy();
      const error = err instanceof DomainError ? err : computeError(err);
      if (!(err instanceof DomainError)) logger.warn('port proxy upgrade: compute failed', { err, requestId });
      sendUpgradeError(socket, error.code, error.message, requestId, error.details, error.code === 'UNAUTHENTICATED' ? { 'www-authenticate': 'Bearer' } : {});
    };
    const path = matchPortProxyPath(req.url ?? '/');
    if (!path) return fail(new DomainError('ROUTE_NOT_FOUND', 'No such route'));
    void (async () => {
      let ctx: GatewayContext;
      try {
        ctx = await options.authenticate(req, requestId);
      } catch (err) {
        if (err instanceof DomainError) return fail(err);
        logger.error('port proxy upgrade: authentication failed', { err, requestId });
        return fail(new DomainError('INTERNAL', 'Internal server error'));
      }
      if (socket.destroyed) return;
      prepare(req, ctx, path);
      proxy.ws(req, socket, head, { target: computeUrl, agent }, fail);
    })();
  };

  return {
    matches: (pathname) => PORT_PROXY_PATH.test(pathname),
    handle,
    upgrade,
    close: () => {
      for (const socket of upgraded) socket.destroy();
      upgraded.clear();
      agent.destroy();
      proxy.close();
    },
  };
}

/** The Cookie header without the platform's own cookies; undefined when nothing is left. */
export function withoutPlatformCookies(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const kept = header
    .split(';')
    .map((part) => part.trim())
    .filter((part) => part && !part.startsWith(PLATFORM_COOKIE_PREFIX));
  return kept.length ? kept.join('; ') : undefined;
}

/** A failure to get an answer from compute (down, closed, too slow). */
function computeError(err: unknown): DomainError {
  if (err instanceof DomainError) return err;
  return new UnavailableError('The compute service is unavailable');
}

function send(res: ServerResponse, requestId: string, err: unknown): void {
  const error = toRestError([err], requestId);
  sendJson(res, error.status, error.body, { ...error.headers, 'x-request-id': requestId });
}

/** A keep-alive agent that destroys a request whose answer head has not come within `firstByteTimeoutMs`. */
class BoundedAgent extends Agent {
  constructor(private readonly firstByteTimeoutMs: number) {
    super({ keepAlive: true, timeout: 30_000, maxSockets: MAX_SOCKETS, scheduling: 'lifo' });
  }

  /** Node calls this synchronously for every request of the agent. */
  addRequest(req: ClientRequest, options: unknown): void {
    const timer = setTimeout(() => req.destroy(new UnavailableError(`The compute service did not answer within ${this.firstByteTimeoutMs / 1000} s`)), this.firstByteTimeoutMs);
    const clear = () => clearTimeout(timer);
    req.once('response', clear);
    req.once('upgrade', clear);
    req.once('close', clear);
    (Agent.prototype as unknown as { addRequest(req: ClientRequest, options: unknown): void }).addRequest.call(this, req, options);
  }
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

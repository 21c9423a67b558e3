import { Agent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { clientAddress, sendError } from '../core/http';
import type { Logger } from '../core/logger';
import { ENVELOPE_HEADER, signEnvelope, type Envelope } from '../core/principal';
import type { RawHttpRoutes } from '../core/subgraph';

/**
 * Forwards a family of edge paths byte for byte to a subgraph's raw routes, without
 * authentication at the edge: the envelope carries no principal, only the request id and the
 * client address (the subgraph authenticates what it must: gateway keys, webhook secrets).
 * Nothing is buffered: bodies stream both ways. When the subgraph runs in this process its raw
 * routes are called directly, skipping the loopback HTTP hop and the envelope's signing.
 */

/** Hop-by-hop headers, never forwarded (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'proxy-authorization', 'proxy-authenticate']);

export interface RawForwarder {
  matches(pathname: string): boolean;
  /** Serves a matching request completely; never throws. */
  handle(req: IncomingMessage, res: ServerResponse, requestId: string): void;
  close(): void;
}

export interface RawForwarderOptions {
  /** Edge paths this forwarder serves. */
  pattern: RegExp;
  /** The edge URL (path and query) → the subgraph's raw route URL. */
  rewrite(url: string): string;
  /** http://host:port of the subgraph. */
  targetUrl: string;
  signingSecret: string;
  logger: Logger;
  /** What the edge answers (503) when the subgraph cannot be reached. */
  unavailableMessage: string;
  /** Log label, e.g. `ai vendor route`. */
  label: string;
  /** The subgraph's raw routes when it runs in this process. */
  inProcess?: RawHttpRoutes;
}

export function createRawForwarder(options: RawForwarderOptions): RawForwarder {
  const target = new URL(options.targetUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: 1024, maxFreeSockets: 256, scheduling: 'lifo' });
  const { logger, inProcess, label } = options;

  const handleInProcess = (routes: RawHttpRoutes, req: IncomingMessage, res: ServerResponse, requestId: string): void => {
    req.url = options.rewrite(req.url!);
    const envelope: Envelope = { principal: null, requestId, clientIp: clientAddress(req), iat: Math.floor(Date.now() / 1000) };
    routes.handle(req, res, envelope).catch((err: unknown) => {
      if (res.headersSent) return void res.destroy();
      logger.error(`${label} failed`, { err, requestId });
      sendError(res, 'INTERNAL', 'Internal server error', requestId);
    });
  };

  const handle = (req: IncomingMessage, res: ServerResponse, requestId: string): void => {
    if (inProcess) return handleInProcess(inProcess, req, res, requestId);
    const headers: IncomingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = value;
    headers[ENVELOPE_HEADER] = signEnvelope(options.signingSecret, { principal: null, requestId, clientIp: clientAddress(req), iat: Math.floor(Date.now() / 1000) });
    headers.host = target.host;
    const upstream = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: options.rewrite(req.url!), headers, agent }, (answer) => {
      const out: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) out[name] = value;
      out['x-request-id'] = requestId;
      res.writeHead(answer.statusCode ?? 502, out);
      // Streams (SSE) must not wait for a buffer to fill.
      if (String(answer.headers['content-type'] ?? '').startsWith('text/event-stream')) res.flushHeaders();
      answer.pipe(res);
      answer.once('aborted', () => res.destroy());
    });
    upstream.on('error', (err) => {
      if (res.headersSent) return void res.destroy();
      logger.error(`${label}: subgraph unreachable`, { err, requestId });
      sendError(res, 'UNAVAILABLE', options.unavailableMessage, requestId);
    });
    // The client went away: the subgraph sees its connection close.
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  };

  return {
    matches: (pathname) => options.pattern.test(pathname),
    handle,
    close: () => agent.destroy(),
  };
}

import { Agent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { clientAddress, sendError } from '../core/http';
import type { Logger } from '../core/logger';
import { ENVELOPE_HEADER, signEnvelope, type Envelope } from '../core/principal';
import type { RawHttpRoutes } from '../core/subgraph';

/**
 * The vendor-compatible AI routes (`/v1/ai-gateway/vendor-a/v1/…`, `vendor-b/v1/…`,
 * `vendor-c/v1beta/…`) go byte for byte to the ai subgraph's raw route `/vendor/…`. The edge
 * does no authentication here: callers present *gateway keys*, which only the ai subgraph knows
 * (it enforces their limits too). The envelope carries no principal, only the request id and
 * client address. Nothing is buffered: bodies stream both ways, so a streamed completion's first
 * token leaves as soon as the upstream sends it.
 */
const VENDOR_PATH = /^\/v1\/ai-gateway\/(vendor-a\/v1|vendor-b\/v1|vendor-c\/v1beta)(\/|$)/;

/** Hop-by-hop headers, never forwarded (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'proxy-authorization', 'proxy-authenticate']);

export interface AiVendorForwarder {
  matches(pathname: string): boolean;
  /** Serves a matching request completely; never throws. */
  handle(req: IncomingMessage, res: ServerResponse, requestId: string): void;
  close(): void;
}

export interface AiVendorForwarderOptions {
  aiUrl: string;
  signingSecret: string;
  logger: Logger;
  /**
   * The ai subgraph's raw routes when it runs in this process (`npm start` runs every service in
   * one): requests are handed to it directly, skipping the loopback HTTP hop and the envelope's
   * signing and verification.
   */
  inProcess?: RawHttpRoutes;
}

export function createAiVendorForwarder(options: AiVendorForwarderOptions): AiVendorForwarder {
  const target = new URL(options.aiUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: 1024, maxFreeSockets: 256, scheduling: 'lifo' });
  const { logger, inProcess } = options;

  const handleInProcess = (routes: RawHttpRoutes, req: IncomingMessage, res: ServerResponse, requestId: string): void => {
    req.url = `/vendor${req.url!.slice('/v1/ai-gateway'.length)}`;
    const envelope: Envelope = { principal: null, requestId, clientIp: clientAddress(req), iat: Math.floor(Date.now() / 1000) };
    routes.handle(req, res, envelope).catch((err: unknown) => {
      if (res.headersSent) return void res.destroy();
      logger.error('ai vendor route failed', { err, requestId });
      sendError(res, 'INTERNAL', 'Internal server error', requestId);
    });
  };

  const handle = (req: IncomingMessage, res: ServerResponse, requestId: string): void => {
    if (inProcess) return handleInProcess(inProcess, req, res, requestId);
    const headers: IncomingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = value;
    headers[ENVELOPE_HEADER] = signEnvelope(options.signingSecret, { principal: null, requestId, clientIp: clientAddress(req), iat: Math.floor(Date.now() / 1000) });
    headers.host = target.host;
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: `/vendor${req.url!.slice('/v1/ai-gateway'.length)}`, headers, agent },
      (answer) => {
        const out: Record<string, string | string[]> = {};
        for (const [name, value] of Object.entries(answer.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) out[name] = value;
        out['x-request-id'] = requestId;
        res.writeHead(answer.statusCode ?? 502, out);
        // Streams (SSE) must not wait for a buffer to fill.
        if (String(answer.headers['content-type'] ?? '').startsWith('text/event-stream')) res.flushHeaders();
        answer.pipe(res);
        answer.once('aborted', () => res.destroy());
      },
    );
    upstream.on('error', (err) => {
      if (res.headersSent) return void res.destroy();
      logger.error('ai subgraph unreachable', { err, requestId });
      sendError(res, 'UNAVAILABLE', 'The AI gateway is temporarily unavailable', requestId);
    });
    // The client went away: the ai subgraph sees its connection close and records the request as 499.
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  };

  return {
    matches: (pathname) => VENDOR_PATH.test(pathname),
    handle,
    close: () => agent.destroy(),
  };
}

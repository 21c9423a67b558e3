import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { Agent, errors as undiciErrors } from 'undici';
import type { RouteMember } from './types';

/** One request to an upstream. */
export interface UpstreamCall {
  method: 'GET' | 'POST';
  /** Path and query, relative to the origin (the member's base path already prepended). */
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Bound on the wait for the response head, connecting included, ms. */
  timeoutMs: number;
}

export interface UpstreamAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Readable;
}

/** Why an attempt got no response head: it moves to the next member. */
export class UpstreamUnreachable extends Error {
  constructor(
    readonly reason: 'timeout' | 'connection' | 'aborted',
    message: string,
  ) {
    super(message);
    this.name = 'UpstreamUnreachable';
  }
}

/**
 * HTTP to upstreams through one undici Agent: a keep-alive connection pool per origin, no
 * buffering (bodies are streams both ways), no automatic decompression (the proxy never asks
 * for compressed bodies, so the usage tap reads plain bytes).
 */
export class UpstreamClient {
  private readonly agent = new Agent({
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 600_000,
    connect: { timeout: 10_000, noDelay: true },
    // A streamed completion can pause long between tokens; the head timeout is per call.
    bodyTimeout: 300_000,
    headersTimeout: 0,
  });

  /**
   * Sends a call; resolves at the response head. `controller` aborts it (and later its body);
   * the head timeout aborts it too and reads as reason 'timeout'.
   */
  async send(member: RouteMember, call: UpstreamCall, controller: AbortController): Promise<UpstreamAnswer> {
    let timedOut = false;
    const timeout = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, call.timeoutMs);
    try {
      const answer = await this.agent.request({
        origin: member.origin,
        path: call.path,
        method: call.method,
        headers: call.headers,
        body: call.body,
        signal: controller.signal,
      });
      return { status: answer.statusCode, headers: answer.headers as IncomingHttpHeaders, body: answer.body as unknown as Readable };
    } catch (err) {
      if (timedOut) throw new UpstreamUnreachable('timeout', `No answer within ${call.timeoutMs} ms`);
      if (controller.signal.aborted) throw new UpstreamUnreachable('aborted', 'The client went away');
      if (err instanceof undiciErrors.ConnectTimeoutError) throw new UpstreamUnreachable('timeout', 'Connecting timed out');
      throw new UpstreamUnreachable('connection', (err as Error)?.message || 'Connection failed');
    } finally {
      clearTimeout(timeout);
    }
  }

  async close(): Promise<void> {
    await this.agent.destroy().catch(() => undefined);
  }
}

/** The member's credential in its vendor's header (OAuth access tokens as Bearer everywhere). */
export function credentialHeaders(member: RouteMember, headers: Record<string, string>): Record<string, string> {
  if (member.authKind === 'oauth' || member.api === 'openai') headers.authorization = `Bearer ${member.credential}`;
  else if (member.api === 'anthropic') headers['x-api-key'] = member.credential;
  else headers['x-goog-api-key'] = member.credential;
  return headers;
}

/** Response headers passed to the client (the rest is the upstream's business: its rate limits, cookies, ids). */
export const PASSED_RESPONSE_HEADERS = ['content-type', 'retry-after', 'cache-control'] as const;

/** `retry-after` in ms (seconds or an HTTP date), or null. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | null {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return null;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(raw);
  return Number.isFinite(at) ? Math.max(0, at - now) : null;
}

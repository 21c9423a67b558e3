import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { PayloadTooLargeError } from './errors';
import { statusOf } from './errors/error-codes';

/** Reads a request body, refusing (413) past `limit` bytes without buffering the rest. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      reject(new PayloadTooLargeError(`Request body exceeds ${limit} bytes`, { limit }));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        reject(new PayloadTooLargeError(`Request body exceeds ${limit} bytes`, { limit }));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => !failed && resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    req.on('error', (err) => !failed && reject(err));
  });
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(payload), ...headers });
  res.end(payload);
}

/** The platform's error body: `{ error: { code, message, details?, requestId } }`. */
export interface ErrorBody {
  error: { code: string; message: string; details?: unknown; requestId: string };
}

export function errorBody(code: string, message: string, requestId: string, details?: unknown): ErrorBody {
  return { error: { code, message, ...(details !== undefined ? { details } : {}), requestId } };
}

export function sendError(res: ServerResponse, code: string, message: string, requestId: string, details?: unknown, headers: Record<string, string> = {}): void {
  sendJson(res, statusOf(code), errorBody(code, message, requestId, details), { 'x-request-id': requestId, ...headers });
}

/**
 * Refuses an HTTP upgrade (the socket of a server's 'upgrade' event) with a plain HTTP/1.1 error
 * response carrying the platform's error body, then closes the socket.
 */
export function sendUpgradeError(socket: Duplex, code: string, message: string, requestId: string, details?: unknown, headers: Record<string, string> = {}): void {
  if (socket.destroyed) return;
  const status = statusOf(code);
  const body = JSON.stringify(errorBody(code, message, requestId, details));
  const head = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(body)), 'x-request-id': requestId, ...headers, connection: 'close' };
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n${Object.entries(head).map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n${body}`);
  // A client that never reads must not hold the socket open.
  setTimeout(() => socket.destroy(), 1000).unref();
}

/**
 * A server's 'clientError': a request Node's parser refused before any handler saw it (request
 * line or headers past the 16 KiB limit, a malformed request). Answered in the platform's error
 * shape, instead of Node's bare status line, and the connection closed.
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex, newRequestId: () => string): void {
  if (socket.destroyed || !socket.writable || err.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    sendUpgradeError(socket, 'HEADERS_TOO_LARGE', 'The request line and headers may not exceed 16 KiB (long query strings: send the values in a body)', newRequestId());
  } else {
    sendUpgradeError(socket, 'BAD_REQUEST', 'The request is not valid HTTP/1.1', newRequestId());
  }
}

/** Aborts when the response's connection closes before the response was finished: the caller went away. */
export function callerGoneSignal(res: ServerResponse): AbortSignal {
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  return gone.signal;
}

/** The caller's address: the socket's peer (proxies are not trusted unless configured). */
export function clientAddress(req: IncomingMessage): string {
  return req.socket.remoteAddress ?? 'unknown';
}

import type { IncomingMessage, ServerResponse } from 'node:http';
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

/** The caller's address: the socket's peer (proxies are not trusted unless configured). */
export function clientAddress(req: IncomingMessage): string {
  return req.socket.remoteAddress ?? 'unknown';
}

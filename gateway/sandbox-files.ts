import { parse } from 'graphql';
import { ValidationError } from '../core/errors';
import { sendJson } from '../core/http';
import type { Logger } from '../core/logger';
import type { RawRouteHandler, RestExecutor } from '../rest-compat';
import { toRestError } from '../rest-compat/errors';

const FILE_CONTENT = parse(/* GraphQL */ `
  query SandboxFileContent($id: ID!, $path: String!) {
    sandboxFileContent(id: $id, path: $path) {
      path
      size
      mode
      contentBase64
    }
  }
`);

/** Content types by file extension; text types carry `; charset=utf-8`. Anything else is octet-stream. */
const CONTENT_TYPES: Record<string, string> = {
  txt: 'text/plain; charset=utf-8',
  html: 'text/html; charset=utf-8',
  htm: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  mjs: 'text/javascript; charset=utf-8',
  json: 'application/json; charset=utf-8',
  svg: 'image/svg+xml; charset=utf-8',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  pdf: 'application/pdf',
  wasm: 'application/wasm',
};

/** The Content-Type of a file by the extension of its name. */
export function contentTypeOf(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return 'application/octet-stream';
  return CONTENT_TYPES[name.slice(dot + 1).toLowerCase()] ?? 'application/octet-stream';
}

interface FileContent {
  path: string;
  size: number;
  /** Octal permission bits as the field answers them, e.g. 0644. */
  mode: string;
  contentBase64: string;
}

export interface SandboxFileContentOptions {
  /** The gateway's REST executor (authentication, rate limits and masking happen there). */
  execute: RestExecutor;
  logger: Logger;
}

/**
 * `GET /v1/sandboxes/{id}/file-content?path=/abs/path`: the file's raw bytes (the compute
 * subgraph's `sandboxFileContent` query, run through the gateway's pipeline), with Content-Type
 * guessed from the extension, Content-Length and X-File-Mode (octal permission bits, `0644`).
 * The bytes are the sandbox's, so the answer is never rendered as a page of the platform's
 * origin (CSP sandbox, nosniff) nor cached. Errors get the platform's shape and status.
 */
export function createSandboxFileContent(options: SandboxFileContentOptions): RawRouteHandler {
  return async (req, res, ctx) => {
    const path = ctx.query.get('path');
    if (!path) throw new ValidationError('"path" is required', { field: 'path' });
    const result = await options.execute({ document: FILE_CONTENT, variables: { id: ctx.params.id, path }, operationName: 'SandboxFileContent', req, requestId: ctx.requestId });
    const file = result.data?.sandboxFileContent as FileContent | null | undefined;
    if (result.errors?.length || !file) {
      const error = toRestError(result.errors?.length ? result.errors : [{ message: `No file ${path}`, extensions: { code: 'NOT_FOUND' } }], ctx.requestId);
      if (error.internal !== undefined) options.logger.error('sandbox file content failed', { requestId: ctx.requestId, err: error.internal });
      return sendJson(res, error.status, error.body, { ...result.headers, ...error.headers, 'x-request-id': ctx.requestId });
    }
    const content = Buffer.from(file.contentBase64, 'base64');
    res.writeHead(200, {
      ...result.headers,
      'content-type': contentTypeOf(file.path || path),
      'content-length': content.length,
      'x-file-mode': file.mode,
      'x-content-type-options': 'nosniff',
      'content-security-policy': 'sandbox',
      'cache-control': 'no-store',
      'x-request-id': ctx.requestId,
    });
    res.end(content);
  };
}

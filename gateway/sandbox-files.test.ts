import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { print } from 'graphql';
import { DomainError } from '../core/errors';
import { createLogger } from '../core/logger';
import type { RestOperation, RestOperationResult } from '../rest-compat';
import { toRestError } from '../rest-compat/errors';
import { contentTypeOf, createSandboxFileContent } from './sandbox-files';

describe('contentTypeOf', () => {
  it('guesses from the extension, text types in utf-8, else octet-stream', () => {
    expect(contentTypeOf('/a/readme.txt')).toBe('text/plain; charset=utf-8');
    expect(contentTypeOf('/www/INDEX.HTML')).toBe('text/html; charset=utf-8');
    expect(contentTypeOf('/x/app.js')).toBe('text/javascript; charset=utf-8');
    expect(contentTypeOf('/x/data.json')).toBe('application/json; charset=utf-8');
    expect(contentTypeOf('/x/logo.svg')).toBe('image/svg+xml; charset=utf-8');
    expect(contentTypeOf('/x/a.png')).toBe('image/png');
    expect(contentTypeOf('/x/a.jpg')).toBe('image/jpeg');
    expect(contentTypeOf('/x/a.gif')).toBe('image/gif');
    expect(contentTypeOf('/x/a.pdf')).toBe('application/pdf');
    expect(contentTypeOf('/x/m.wasm')).toBe('application/wasm');
    expect(contentTypeOf('/x/.bashrc')).toBe('application/octet-stream');
    expect(contentTypeOf('/x.d/binary')).toBe('application/octet-stream');
    expect(contentTypeOf('/x/archive.tar.gz')).toBe('application/octet-stream');
  });
});

describe('GET /sandboxes/{id}/file-content (raw handler)', () => {
  let answer: RestOperationResult;
  const calls: RestOperation[] = [];
  let server: http.Server;
  let base: string;

  beforeAll(async () => {
    const handler = createSandboxFileContent({
      execute: async (op) => {
        calls.push(op);
        return answer;
      },
      logger: createLogger('silent'),
    });
    // What the REST layer does around a raw route: params, query, DomainErrors in the platform shape.
    server = http.createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      const id = url.pathname.split('/')[3];
      handler(req, res, { params: { id }, query: url.searchParams, requestId: 'req_fc', path: '/sandboxes/{id}/file-content' }).catch((err) => {
        if (!(err instanceof DomainError)) throw err;
        const error = toRestError([err], 'req_fc');
        res.writeHead(error.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(error.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/sandboxes`;
  });

  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('answers the raw bytes with Content-Type, Content-Length and X-File-Mode', async () => {
    const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]);
    answer = { data: { sandboxFileContent: { path: '/work/logo.png', size: bytes.length, mode: '0644', contentBase64: bytes.toString('base64') } }, headers: { ratelimit: '"read";r=9;t=60' } };
    const res = await fetch(`${base}/sbx_1/file-content?path=${encodeURIComponent('/work/logo.png')}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('content-length')).toBe('6');
    expect(res.headers.get('x-file-mode')).toBe('0644');
    expect(res.headers.get('ratelimit')).toBe('"read";r=9;t=60');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await res.arrayBuffer())).toEqual(bytes);

    const op = calls.at(-1)!;
    expect(op.variables).toEqual({ id: 'sbx_1', path: '/work/logo.png' });
    expect(print(op.document)).toContain('sandboxFileContent(id: $id, path: $path)');
  });

  it('labels text with utf-8', async () => {
    answer = { data: { sandboxFileContent: { path: '/a/notes.txt', size: 5, mode: '0755', contentBase64: Buffer.from('héllo').toString('base64') } } };
    const res = await fetch(`${base}/sbx_1/file-content?path=/a/notes.txt`);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.headers.get('x-file-mode')).toBe('0755');
    expect(await res.text()).toBe('héllo');
  });

  it('answers 400 VALIDATION_FAILED without a path, before any operation', async () => {
    const before = calls.length;
    const res = await fetch(`${base}/sbx_1/file-content`);
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'path' } });
    expect(calls.length).toBe(before);
  });

  it('answers GraphQL errors with the status of their code and the platform body', async () => {
    answer = { data: null, errors: [{ message: 'Sandbox sbx_2 not found', extensions: { code: 'NOT_FOUND' } }] };
    const missing = await fetch(`${base}/sbx_2/file-content?path=/x`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'Sandbox sbx_2 not found', requestId: 'req_fc' } });

    answer = { errors: [{ message: 'Too many', extensions: { code: 'RATE_LIMITED', details: { retryAfterSeconds: 7 } } }] };
    const limited = await fetch(`${base}/sbx_1/file-content?path=/x`);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');

    answer = { errors: [{ message: 'File too large', extensions: { code: 'PAYLOAD_TOO_LARGE' } }] };
    expect((await fetch(`${base}/sbx_1/file-content?path=/x`)).status).toBe(413);
  });
});

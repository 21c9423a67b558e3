import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DomainError, UnavailableError } from './errors';
import { InternalClient } from './internal-client';
import { ENVELOPE_HEADER, verifyEnvelope } from './principal';

/* InternalClient against a real local HTTP server: answers, domain errors, per-call timeouts and aborts. */

const SECRET = 'internal-client-test-secret-0123456789';
const request = { requestId: 'req_client_test', clientIp: '127.0.0.1' };

let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const envelope = verifyEnvelope(SECRET, req.headers[ENVELOPE_HEADER] as string | undefined);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (!envelope) return send(401, { error: { code: 'UNAUTHENTICATED', message: 'no envelope', requestId: 'none' } });
    if (req.url === '/internal/echo') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => send(200, { data: { body: JSON.parse(Buffer.concat(chunks).toString('utf8')), principal: envelope.principal, requestId: envelope.requestId } }));
      return;
    }
    if (req.url === '/internal/missing') return send(404, { error: { code: 'NOT_FOUND', message: 'Sandbox sbx_x not found', details: { resource: 'Sandbox' }, requestId: 'none' } });
    if (req.url === '/internal/slow') return void setTimeout(() => send(200, { data: 'late' }), 2000).unref();
    send(404, { error: { code: 'ROUTE_NOT_FOUND', message: 'no route', requestId: 'none' } });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('InternalClient.call', () => {
  let client: InternalClient;

  beforeAll(() => {
    client = new InternalClient({ baseUrl, internalSigningSecret: SECRET, serviceName: 'compute service' });
  });

  it('signs an envelope without a principal and answers the data (no per-call options, as existing callers call it)', async () => {
    await expect(client.call('echo', { a: 1 }, request)).resolves.toEqual({ body: { a: 1 }, principal: null, requestId: 'req_client_test' });
  });

  it('throws the route\'s domain error again with its code, message and details', async () => {
    const err = await client.call('missing', {}, request).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ code: 'NOT_FOUND', message: 'Sandbox sbx_x not found', details: { resource: 'Sandbox' } });
  });

  it('gives up after the per-call timeout with a 503 naming the service', async () => {
    const started = Date.now();
    const err = await client.call('slow', {}, request, { timeoutMs: 200 }).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(1500);
    expect(err).toBeInstanceOf(UnavailableError);
    expect((err as Error).message).toBe('The compute service did not answer within 1 s');
  });

  it('stops when the caller\'s signal aborts, with the signal\'s reason, before the timeout', async () => {
    const controller = new AbortController();
    const reason = new Error('Execution was cancelled');
    setTimeout(() => controller.abort(reason), 100);
    const started = Date.now();
    await expect(client.call('slow', {}, request, { signal: controller.signal, timeoutMs: 10_000 })).rejects.toBe(reason);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('answers 503 naming the service when nothing listens', async () => {
    const closed = new InternalClient({ baseUrl: 'http://127.0.0.1:9', internalSigningSecret: SECRET, serviceName: 'ai service' });
    await expect(closed.call('echo', {}, request)).rejects.toMatchObject({ code: 'UNAVAILABLE', message: 'The ai service is temporarily unavailable' });
  });
});

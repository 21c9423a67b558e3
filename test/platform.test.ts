import { SUBGRAPH_NAMES } from '../core/config';
import { startTestPlatform, type TestPlatform } from './harness';
import { gql } from './helpers';

/** Every service starts, composes and answers health checks; the graph spans all subgraphs. */
describe('the whole platform in one process', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { NODE_ENV: 'development', LOG_LEVEL: 'error' } });
  });
  afterAll(() => platform?.stop());

  it('runs every subgraph, the gateway and the worker', () => {
    for (const name of SUBGRAPH_NAMES) expect(platform.subgraphs[name]).toBeDefined();
    expect(platform.gateway).toBeDefined();
    expect(platform.worker).toBeDefined();
  });

  it('answers /healthz and /readyz on every service', async () => {
    for (const name of SUBGRAPH_NAMES) {
      const base = platform.subgraphs[name]!.url.replace(/\/graphql$/, '');
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
    }
    expect((await fetch(`${platform.baseUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${platform.worker!.healthUrl}/healthz`)).status).toBe(200);
    const workerReady = await fetch(`${platform.worker!.healthUrl}/readyz`);
    expect(workerReady.status).toBe(200);
    expect((await workerReady.json()).queues).toEqual({ compute: 'running', gpu: 'running', workflows: 'running', maintenance: 'running' });
    const ready = await fetch(`${platform.baseUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect((await ready.json()).subgraphs).toEqual(Object.fromEntries(SUBGRAPH_NAMES.map((n) => [n, 'ok'])));
  });

  it('routes a query spanning every subgraph through the gateway', async () => {
    const fields = SUBGRAPH_NAMES.filter((n) => n !== 'identity').map((n) => `${n}Service { name status }`).join(' ');
    const result = await gql(platform, `{ ${fields} }`);
    expect(result.errors).toBeUndefined();
    for (const name of SUBGRAPH_NAMES.filter((n) => n !== 'identity')) expect(result.data[`${name}Service`]).toEqual({ name, status: 'ok' });
  });

  it('serves the Apollo Sandbox landing page in development', async () => {
    const page = await fetch(platform.graphqlUrl, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/sandbox/i);
  });

  it('publishes the REST schema: OpenAPI, docs and SDL', async () => {
    const openapi = await (await fetch(`${platform.restUrl}/openapi.json`)).json();
    expect(openapi.openapi).toMatch(/^3\./);
    expect(openapi.paths['/auth/login']?.post ?? openapi.paths['/v1/auth/login']?.post).toBeDefined();
    expect((await fetch(`${platform.restUrl}/docs`)).headers.get('content-type')).toMatch(/text\/html/);
    expect(await (await fetch(`${platform.restUrl}/schema.graphql`)).text()).toMatch(/type Query/);
    const unknown = await fetch(`${platform.restUrl}/no/such/route`);
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error).toMatchObject({ code: 'ROUTE_NOT_FOUND', requestId: expect.any(String) });
  });
});

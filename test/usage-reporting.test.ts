import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { startTestPlatform, type TestPlatform } from './harness';
import { eventually, gql, loginAdmin } from './helpers';

/** Usage reporting is on when APOLLO_KEY is set; a local stand-in plays Apollo's ingress. */
describe('Apollo usage reporting', () => {
  let ingress: Server;
  let platform: TestPlatform;
  const reports: Array<{ apiKey?: string; body: Buffer }> = [];

  beforeAll(async () => {
    ingress = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        reports.push({ apiKey: req.headers['x-api-key'] as string | undefined, body: gunzipSync(Buffer.concat(chunks)) });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => ingress.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(ingress.address() as AddressInfo).port}/api/ingress/traces`;
    platform = await startTestPlatform({
      services: ['identity', 'billing', 'gateway'],
      env: { APOLLO_KEY: 'service:test-graph:local-stand-in-key', APOLLO_GRAPH_REF: 'test-graph@current', APOLLO_USAGE_REPORTING_URL: url },
    });
  });

  afterAll(async () => {
    await platform?.stop();
    await new Promise((resolve) => ingress?.close(resolve));
  });

  it('reports operations with the configured key', async () => {
    const admin = await loginAdmin(platform);
    const result = await gql(platform, 'query WhoAmI { profile { id username } }', {}, admin.auth);
    expect(result.errors).toBeUndefined();
    await eventually(() => reports.some((r) => r.body.includes(Buffer.from('WhoAmI'))), 10_000, 'a usage report');
    expect(reports[0].apiKey).toBe('service:test-graph:local-stand-in-key');
  });

  it('refuses a key without a graph ref at boot', () => {
    const { loadConfig } = jest.requireActual('../core/config');
    expect(() => loadConfig({ NODE_ENV: 'test', APOLLO_KEY: 'service:x:y' })).toThrow(/APOLLO_GRAPH_REF/);
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { ID_PREFIX, newId } from '../../core/ids';
import { TRACK_SCRIPT_SIZES, serveTrackScript, trackSnippet } from '../../subgraphs/analytics/script';
import { startTestPlatform, type TestPlatform } from '../harness';
import { eventually } from '../services';

/**
 * The tracking script in a real browser (Debian's chromium, installed by .ci/run): first against
 * a local collector that records what the script posts, then end to end through the edge into
 * analytics.events.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// A plain desktop browser: the ingestion drops bots, HeadlessChrome included, by user agent.
const DESKTOP_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface Received {
  route: string;
  body: Record<string, any>;
  headers: IncomingHttpHeaders;
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; port: number }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

function close(server: Server | undefined): Promise<void> {
  if (!server) return Promise.resolve();
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** A small single-page shop: every path answers the same page, as a router's fallback does. */
function shopPage(snippet: string): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>Shop</title>
<script>
  window.platformAnalytics = window.platformAnalytics || { q: [] };
  platformAnalytics.q.push(['track', 'queued', { early: true }]);
</script>
${snippet}
</head><body>
<button id="signup" onclick="platformAnalytics.track('signup', { plan: 'pro' })">Sign up</button>
<a id="pricing" href="/pricing" onclick="event.preventDefault(); history.pushState({}, '', '/pricing')">Pricing</a>
<button id="login" onclick="platformAnalytics.identify('user-42', { plan: 'pro' })">Log in</button>
<button id="upgrade" onclick="platformAnalytics.track('upgrade', { seats: 3 })">Upgrade</button>
</body></html>`;
}

async function startShop(snippet: string): Promise<{ server: Server; url: string }> {
  const html = shopPage(snippet);
  const { server, port } = await listen((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html);
  });
  // Host name localhost, not 127.0.0.1: the installation's domain, and a secure context.
  return { server, url: `http://localhost:${port}` };
}

/** GET with exact headers, the body as sent (Node's fetch would decode gzip). */
function get(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/** What serveTrackScript answers at `url`: identity, gzip, 304, HEAD. */
async function expectScriptServed(url: string): Promise<void> {
  const plain = await get(url);
  expect(plain.status).toBe(200);
  expect(plain.headers['content-type']).toBe('application/javascript; charset=utf-8');
  expect(plain.headers['cache-control']).toBe('public, max-age=3600');
  expect(plain.headers['access-control-allow-origin']).toBe('*');
  expect(plain.headers.vary).toMatch(/accept-encoding/i);
  expect(plain.headers['content-encoding']).toBeUndefined();
  expect(plain.body.length).toBe(TRACK_SCRIPT_SIZES.raw);
  expect(plain.body.toString()).toContain('platformAnalytics');

  const zipped = await get(url, { 'accept-encoding': 'br, gzip;q=0.8' });
  expect(zipped.status).toBe(200);
  expect(zipped.headers['content-encoding']).toBe('gzip');
  expect(zipped.body.length).toBe(TRACK_SCRIPT_SIZES.gzip);
  expect(gunzipSync(zipped.body).equals(plain.body)).toBe(true);
  expect((await get(url, { 'accept-encoding': 'gzip;q=0, deflate' })).headers['content-encoding']).toBeUndefined();

  for (const [etag, encoding] of [[plain.headers.etag!, 'identity'], [zipped.headers.etag!, 'gzip']]) {
    const cached = await get(url, { 'if-none-match': etag, 'accept-encoding': encoding });
    expect(cached.status).toBe(304);
    expect(cached.body.length).toBe(0);
  }
  expect((await get(url, { 'if-none-match': '"something-else"' })).status).toBe(200);

  const head = await get(url, {}, 'HEAD');
  expect(head.status).toBe(200);
  expect(head.headers['content-length']).toBe(String(TRACK_SCRIPT_SIZES.raw));
  expect(head.body.length).toBe(0);
}

async function expectNothingStored(page: Page, context: BrowserContext): Promise<void> {
  // Browser-side code as strings: the project's TypeScript has no DOM types.
  expect(await page.evaluate('document.cookie')).toBe('');
  expect(await context.cookies()).toEqual([]);
  expect(await page.evaluate('[localStorage.length, sessionStorage.length]')).toEqual([0, 0]);
}

let browser: Browser | undefined;

beforeAll(async () => {
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], timeout: 30_000 });
});

afterAll(async () => {
  await browser?.close();
});

async function newContext(): Promise<BrowserContext> {
  const context = await browser!.newContext({ userAgent: DESKTOP_UA, viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(10_000);
  return context;
}

describe('the tracking script', () => {
  it('is at most 2 KB gzipped', () => {
    expect(TRACK_SCRIPT_SIZES.gzip).toBeLessThanOrEqual(2048);
    expect(TRACK_SCRIPT_SIZES.raw).toBeGreaterThan(TRACK_SCRIPT_SIZES.gzip);
  });

  it('writes the tag to paste, attributes escaped', () => {
    expect(trackSnippet({ scriptUrl: 'https://api.example.com/v1/analytics/track.js', apiUrl: 'https://api.example.com/v1/analytics', publicKey: 'pk_abc' })).toBe(
      '<script defer src="https://api.example.com/v1/analytics/track.js" data-key="pk_abc" data-api="https://api.example.com/v1/analytics"></script>',
    );
    expect(trackSnippet({ scriptUrl: 'https://x/track.js?a=1&b="2"', apiUrl: 'https://x', publicKey: 'pk_<x>' })).toContain('src="https://x/track.js?a=1&amp;b=&quot;2&quot;" data-key="pk_&lt;x&gt;"');
  });
});

describe('the tracking script against a local collector', () => {
  let collector: Server | undefined;
  let collectorUrl: string;
  let shop: { server: Server; url: string } | undefined;
  let tmp: string | undefined;
  const received: Received[] = [];

  beforeAll(async () => {
    // Another origin than the shop, as the edge is: serves the script and records what is posted.
    const started = await listen((req, res) => {
      const route = new URL(req.url!, 'http://collector').pathname;
      if (route === '/v1/analytics/track.js') return serveTrackScript(req, res);
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        if (req.method === 'POST') received.push({ route: route.replace('/v1/analytics/', ''), body: JSON.parse(Buffer.concat(chunks).toString()), headers: req.headers });
        res.writeHead(202).end();
      });
    });
    collector = started.server;
    collectorUrl = `http://127.0.0.1:${started.port}/v1/analytics`;
    shop = await startShop(trackSnippet({ scriptUrl: `${collectorUrl}/track.js`, apiUrl: collectorUrl, publicKey: 'pk_local' }));
  });

  afterAll(async () => {
    await close(shop?.server);
    await close(collector);
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  const waitFor = (what: string, match: (r: Received) => boolean) => eventually(() => received.find(match), 10_000, what);
  const pageviewOf = (pathname: string) => (r: Received) => r.route === 'track' && new URL(r.body.url).pathname === pathname;

  it('serves the script: identity or gzip, 304 on its etag, HEAD; other methods refused', async () => {
    await expectScriptServed(`${collectorUrl}/track.js`);
    const post = await get(`${collectorUrl}/track.js`, {}, 'POST');
    expect(post.status).toBe(404);
    expect(post.headers.allow).toBe('GET, HEAD');
    expect(JSON.parse(post.body.toString())).toMatchObject({ error: { code: 'ROUTE_NOT_FOUND' } });
  });

  it('posts pageviews, queued and custom events and identify, with the documented payloads, storing nothing', async () => {
    const context = await newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${shop!.url}/`);
      const first = await waitFor('the first pageview', pageviewOf('/'));
      expect(first.body).toEqual({ key: 'pk_local', id: expect.stringMatching(UUID), url: `${shop!.url}/`, referrer: '', screenWidth: 1280 });
      expect(first.headers['content-type']).toMatch(/^text\/plain/);
      expect(first.headers.origin).toBe(shop!.url);
      expect(first.headers.cookie).toBeUndefined();
      const queued = await waitFor('the queued event', (r) => r.body.name === 'queued');
      expect(queued).toMatchObject({ route: 'event', body: { key: 'pk_local', props: { early: true }, url: `${shop!.url}/` } });

      await page.click('#signup');
      const signup = await waitFor('the signup event', (r) => r.body.name === 'signup');
      expect(signup.body).toEqual({ key: 'pk_local', id: expect.stringMatching(UUID), name: 'signup', props: { plan: 'pro' }, url: `${shop!.url}/` });

      await page.click('#pricing');
      await waitFor('the /pricing pageview', pageviewOf('/pricing'));
      // Same path, other query: a router keeping state in the URL, not a new page.
      await page.evaluate("history.replaceState({}, '', '/pricing?period=yearly')");

      await page.click('#login');
      const identify = await waitFor('the identify', (r) => r.route === 'identify');
      expect(identify.body).toEqual({ key: 'pk_local', id: expect.stringMatching(UUID), userId: 'user-42', traits: { plan: 'pro' }, url: `${shop!.url}/pricing?period=yearly` });

      await page.click('#upgrade');
      const upgrade = await waitFor('the upgrade event', (r) => r.body.name === 'upgrade');
      expect(upgrade.body).toMatchObject({ name: 'upgrade', props: { seats: 3 }, userId: 'user-42' });
      await page.evaluate('history.back()');
      const back = await waitFor('the pageview after going back', (r) => pageviewOf('/')(r) && r.body.userId === 'user-42');
      expect(back.body.url).toBe(`${shop!.url}/`);

      expect(received.filter(pageviewOf('/pricing'))).toHaveLength(1);
      expect(received.filter((r) => r.body.userId === undefined).map((r) => r.body.name ?? new URL(r.body.url).pathname).sort()).toEqual(['/', '/pricing', 'queued', 'signup']);
      expect(new Set(received.map((r) => r.body.id)).size).toBe(received.length);
      await expectNothingStored(page, context);
    } finally {
      await context.close();
    }
  });

  it('falls back to fetch without sendBeacon, and runs pushes made after it loaded', async () => {
    const context = await newContext();
    try {
      await context.addInitScript("Object.defineProperty(Navigator.prototype, 'sendBeacon', { value: undefined, configurable: true })");
      const page = await context.newPage();
      await page.goto(`${shop!.url}/fallback`);
      const pageview = await waitFor('the pageview by fetch', pageviewOf('/fallback'));
      expect(pageview.headers['content-type']).toMatch(/^text\/plain/);
      await page.evaluate("platformAnalytics.q.push(['track', 'late-push', { n: 1 }])");
      expect((await waitFor('the late push', (r) => r.body.name === 'late-push')).body.props).toEqual({ n: 1 });
    } finally {
      await context.close();
    }
  });

  it('sends nothing from a file: page', async () => {
    tmp = mkdtempSync(path.join(tmpdir(), 'track-'));
    const file = path.join(tmp, 'saved.html');
    writeFileSync(file, shopPage(trackSnippet({ scriptUrl: `${collectorUrl}/track.js`, apiUrl: collectorUrl, publicKey: 'pk_local' })));
    const context = await newContext();
    try {
      const page = await context.newPage();
      await page.goto(pathToFileURL(file).href);
      await page.waitForFunction('window.platformAnalytics && window.platformAnalytics.v === 1');
      await page.click('#signup');
      // Then a page that does send: what the file page would have sent came before it.
      await page.goto(`${shop!.url}/after-file`);
      await waitFor('the pageview after the file page', pageviewOf('/after-file'));
      expect(received.filter((r) => String(r.body.url).startsWith('file:'))).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('the tracking script end to end, through the edge', () => {
  let platform: TestPlatform;
  let shop: { server: Server; url: string } | undefined;
  const publicKey = newId('pk', 24);
  let installationId: string;
  const db = () => platform.subgraphs.analytics!.dataSource;

  beforeAll(async () => {
    platform = await startTestPlatform({ services: ['analytics', 'gateway'] });
    installationId = newId(ID_PREFIX.installation);
    // Written directly: the installations API is tested on its own.
    await db().query(`INSERT INTO analytics.installations (id, workspace_id, name, domains, public_key) VALUES ($1, 'ws_analyticsbrowser', 'Browser test shop', $2, $3)`, [installationId, ['localhost'], publicKey]);
    const api = `${platform.baseUrl}/v1/analytics`;
    shop = await startShop(trackSnippet({ scriptUrl: `${api}/track.js`, apiUrl: api, publicKey }));
  }, 60_000);

  afterAll(async () => {
    await close(shop?.server);
    await platform?.stop();
  });

  it('serves /v1/analytics/track.js: identity or gzip, 304 on its etag, HEAD', async () => {
    await expectScriptServed(`${platform.baseUrl}/v1/analytics/track.js`);
  });

  it('records pageviews, events and identify from a browser into analytics.events, without cookies or storage', async () => {
    const context = await newContext();
    try {
      const page = await context.newPage();
      const script = page.waitForResponse((response) => response.url().endsWith('/v1/analytics/track.js'));
      await page.goto(`${shop!.url}/`);
      expect((await script).status()).toBe(200);
      await page.waitForFunction('window.platformAnalytics && window.platformAnalytics.v === 1');
      await page.click('#signup');
      await page.click('#pricing');
      await page.click('#login');
      await page.click('#upgrade');

      type Row = { kind: string; name: string; path: string | null; user_id: string | null; props: Record<string, unknown> | null; hostname: string | null };
      const rows = await eventually(
        async () => {
          const found = (await db().query(`SELECT kind, name, path, user_id, props, hostname FROM analytics.events WHERE installation_id = $1 ORDER BY ts`, [installationId])) as Row[];
          return found.some((r) => r.kind === 'event' && r.name === 'upgrade') && found.length >= 6 ? found : undefined;
        },
        20_000,
        'six events of the page in analytics.events',
      );
      const pageviews = rows.filter((r) => r.kind === 'pageview');
      expect(pageviews.map((r) => r.path).sort()).toEqual(['/', '/pricing']);
      expect(pageviews.every((r) => r.hostname === 'localhost')).toBe(true);
      expect(rows.find((r) => r.kind === 'event' && r.name === 'signup')?.props).toEqual({ plan: 'pro' });
      expect(rows.find((r) => r.kind === 'event' && r.name === 'queued')?.props).toEqual({ early: true });
      expect(rows.find((r) => r.kind === 'identify')?.user_id).toBe('user-42');
      expect(rows.find((r) => r.kind === 'event' && r.name === 'upgrade')).toMatchObject({ user_id: 'user-42', props: { seats: 3 } });
      await expectNothingStored(page, context);
    } finally {
      await context.close();
    }
  });
});

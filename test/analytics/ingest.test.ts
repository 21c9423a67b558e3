import { createHash } from 'node:crypto';
import { ID_PREFIX, newId } from '../../core/ids';
import { createRedis, type Redis } from '../../core/redis';
import { TOPICS } from '../../core/pubsub';
import { startTestPlatform, type TestPlatform } from '../harness';
import { eventually, TEST_REDIS_URL } from '../services';

/* The public ingestion routes through the edge (/v1/analytics/…), on a real PostgreSQL and Redis. */

const CHROME_MAC = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const SAFARI_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const FIREFOX_ANDROID_TABLET = 'Mozilla/5.0 (Android 14; Tablet; rv:127.0) Gecko/127.0 Firefox/127.0';
const SHOP = 'https://shop.example.com';

interface EventRow {
  installation_id: string;
  ts: Date;
  event_id: string;
  kind: string;
  name: string;
  visitor_id: string;
  session_id: string;
  user_id: string | null;
  hostname: string | null;
  path: string | null;
  query: string | null;
  referrer: string | null;
  referrer_domain: string | null;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  browser: string | null;
  os: string | null;
  device: string | null;
  screen_width: number | null;
  props: Record<string, unknown> | null;
}

describe('analytics ingestion through the edge', () => {
  let platform: TestPlatform;
  let redis: Redis;
  const db = () => platform.subgraphs.analytics!.dataSource;

  /** An installation written directly (the installations API is tested on its own). */
  async function install(domains: string[], workspaceId = 'ws_ingest_a'): Promise<{ id: string; key: string }> {
    const id = newId(ID_PREFIX.installation);
    const key = newId('pk', 24);
    await db().query(`INSERT INTO analytics.installations (id, workspace_id, name, domains, public_key) VALUES ($1, $2, 'ingest test', $3, $4)`, [id, workspaceId, domains, key]);
    return { id, key };
  }

  const post = (name: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${platform.baseUrl}/v1/analytics/${name}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: SHOP, 'user-agent': CHROME_MAC, ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  const rowsOf = async (installationId: string, where = 'TRUE', params: unknown[] = []): Promise<EventRow[]> =>
    (await db().query(`SELECT * FROM analytics.events WHERE installation_id = $1 AND ${where} ORDER BY ts, event_id`, [installationId, ...params])) as EventRow[];

  /** Waits for the event with this id to be written: everything buffered before it is written too. */
  const written = (installationId: string, eventId: string): Promise<EventRow> =>
    eventually(async () => (await rowsOf(installationId, 'event_id = $2', [eventId]))[0], 10_000, `event ${eventId} to be written`);

  /** A marker pageview; once it is written, anything accepted before it is as well. */
  async function marker(installation: { id: string; key: string }, headers: Record<string, string> = {}): Promise<void> {
    const id = `marker-${newId('m', 10).slice(2)}`;
    const res = await post('track', { key: installation.key, id, url: `${SHOP}/marker` }, headers);
    expect(res.status).toBe(202);
    await written(installation.id, id);
  }

  beforeAll(async () => {
    platform = await startTestPlatform({ services: ['analytics', 'gateway'] });
    redis = createRedis(TEST_REDIS_URL);
  }, 60_000);

  afterAll(async () => {
    // The visit state, user mappings and dedupe marks of this run would otherwise stay a day.
    if (redis && platform) {
      const keys = await keysUnder(redis, `${platform.config.redisPrefix}:an:`);
      if (keys.length) await redis.unlink(...keys);
    }
    redis?.disconnect();
    await platform?.stop();
  });

  it('records a pageview with the columns derived from its url, referrer and user agent, and its session', async () => {
    const site = await install(['shop.example.com']);
    const res = await post('track', {
      key: site.key,
      id: 'pv-1',
      url: `${SHOP}/products/shoes?utm_source=news&utm_medium=email&utm_campaign=spring&color=red#reviews`,
      referrer: 'https://www.google.com/search?q=shoes',
      screenWidth: 1440,
    });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ accepted: 1, duplicates: 0, dropped: 0 });
    expect(res.headers.get('access-control-allow-origin')).toBe(SHOP);
    expect(res.headers.get('vary')).toMatch(/Origin/);
    expect(res.headers.get('set-cookie')).toBeNull();
    expect(res.headers.get('x-request-id')).toBeTruthy();

    const row = await written(site.id, 'pv-1');
    expect(row).toMatchObject({
      kind: 'pageview',
      name: '$pageview',
      hostname: 'shop.example.com',
      path: '/products/shoes',
      query: 'utm_source=news&utm_medium=email&utm_campaign=spring&color=red',
      referrer: 'https://www.google.com/search?q=shoes',
      referrer_domain: 'google.com',
      utm_source: 'news',
      utm_medium: 'email',
      utm_campaign: 'spring',
      browser: 'Chrome',
      os: 'macOS',
      device: 'desktop',
      screen_width: 1440,
      user_id: null,
      props: null,
    });
    expect(BigInt(row.session_id)).toBeGreaterThan(0n);
    expect(Math.abs(row.ts.getTime() - Date.now())).toBeLessThan(60_000);

    // A second page of the same visit: same visitor, same session, the session's exit page moves.
    await post('track', { key: site.key, id: 'pv-2', url: `${SHOP}/checkout`, referrer: `${SHOP}/products/shoes` });
    const second = await written(site.id, 'pv-2');
    expect(second.visitor_id).toBe(row.visitor_id);
    expect(second.session_id).toBe(row.session_id);
    expect(second.referrer_domain).toBeNull(); // same host: not a referral
    const [session] = await db().query(`SELECT * FROM analytics.sessions WHERE installation_id = $1`, [site.id]);
    expect(session).toMatchObject({
      session_id: row.session_id,
      visitor_id: row.visitor_id,
      pageviews: 2,
      events: 2,
      entry_path: '/products/shoes',
      exit_path: '/checkout',
      hostname: 'shop.example.com',
      referrer_domain: 'google.com',
      utm_source: 'news',
      utm_medium: 'email',
      utm_campaign: 'spring',
      browser: 'Chrome',
      os: 'macOS',
      device: 'desktop',
      user_id: null,
    });
    expect(session.started_at.getTime()).toBe(row.ts.getTime());
    expect(session.last_seen_at.getTime()).toBe(second.ts.getTime());
    // The visit's state lives 30 minutes after its latest event.
    const ttl = await redis.pttl(`${platform.config.redisPrefix}:an:sess:${site.id}:${row.visitor_id}`);
    expect(ttl).toBeGreaterThan(29 * 60_000);
    expect(ttl).toBeLessThanOrEqual(30 * 60_000);
  });

  it('records custom events with props, and counts them in the session', async () => {
    const site = await install(['shop.example.com']);
    const res = await post('event', { key: site.key, id: 'ev-1', name: 'signup', props: { plan: 'pro', seats: 3, trial: true, tags: ['a', 'b'] }, url: `${SHOP}/pricing` });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ accepted: 1, duplicates: 0, dropped: 0 });
    const row = await written(site.id, 'ev-1');
    expect(row).toMatchObject({ kind: 'event', name: 'signup', props: { plan: 'pro', seats: 3, trial: true, tags: ['a', 'b'] }, path: '/pricing', hostname: 'shop.example.com' });
    // Without a url: no page columns.
    await post('event', { key: site.key, id: 'ev-2', name: 'video played' });
    expect(await written(site.id, 'ev-2')).toMatchObject({ name: 'video played', props: null, path: null, hostname: null });
    const [session] = await db().query(`SELECT pageviews, events FROM analytics.sessions WHERE installation_id = $1`, [site.id]);
    expect(session).toEqual({ pageviews: 0, events: 2 });
  });

  it('identify maps the visitor to the user: later events carry user_id; traits merge into analytics.users', async () => {
    const site = await install(['shop.example.com']);
    const ua = { 'user-agent': SAFARI_IPHONE };
    const res = await post('identify', { key: site.key, id: 'id-1', userId: 'user-42', traits: { plan: 'pro', email: 'a@example.com' }, url: `${SHOP}/login` }, ua);
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ accepted: 1, duplicates: 0, dropped: 0 });
    expect(await written(site.id, 'id-1')).toMatchObject({ kind: 'identify', name: '$identify', user_id: 'user-42', browser: 'Safari', os: 'iOS', device: 'mobile', props: { plan: 'pro', email: 'a@example.com' } });

    // Later events of the same visitor (same IP and UA) carry the user, without naming it.
    await post('track', { key: site.key, id: 'after-1', url: `${SHOP}/account` }, ua);
    expect((await written(site.id, 'after-1')).user_id).toBe('user-42');
    // Another visitor (another UA) does not.
    await post('track', { key: site.key, id: 'other-1', url: `${SHOP}/account` }, { 'user-agent': FIREFOX_ANDROID_TABLET });
    expect(await written(site.id, 'other-1')).toMatchObject({ user_id: null, browser: 'Firefox', os: 'Android', device: 'tablet' });
    // An event may name its user itself.
    await post('event', { key: site.key, id: 'named-1', name: 'x', userId: 'user-7' }, { 'user-agent': FIREFOX_ANDROID_TABLET });
    expect((await written(site.id, 'named-1')).user_id).toBe('user-7');

    await post('identify', { key: site.key, id: 'id-2', userId: 'user-42', traits: { company: 'Acme', plan: 'team' } }, ua);
    await written(site.id, 'id-2');
    const users = await db().query(`SELECT user_id, traits, first_seen_at, last_seen_at FROM analytics.users WHERE installation_id = $1 ORDER BY user_id`, [site.id]);
    expect(users.map((u: { user_id: string }) => u.user_id)).toEqual(['user-42', 'user-7']);
    expect(users[0].traits).toEqual({ plan: 'team', email: 'a@example.com', company: 'Acme' });
    expect(users[0].last_seen_at.getTime()).toBeGreaterThan(users[0].first_seen_at.getTime());
    const sessions = await db().query(`SELECT user_id, events FROM analytics.sessions WHERE installation_id = $1 AND user_id = 'user-42'`, [site.id]);
    expect(sessions).toEqual([{ user_id: 'user-42', events: 3 }]);
  });

  it('accepts batches of up to 100 events, as JSON or text/plain (sendBeacon)', async () => {
    const site = await install(['shop.example.com']);
    const events = Array.from({ length: 100 }, (_, i) => ({ id: `b-${i}`, url: `${SHOP}/page/${i}`, ts: Date.now() - (100 - i) * 1000 }));
    const res = await post('track', JSON.stringify({ key: site.key, events }), { 'content-type': 'text/plain;charset=UTF-8' });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ accepted: 100, duplicates: 0, dropped: 0 });
    const custom = await post('event', { key: site.key, events: [{ id: 'c-1', name: 'a' }, { name: 'b', props: { n: 1 } }] });
    expect(await custom.json()).toEqual({ accepted: 2, duplicates: 0, dropped: 0 });
    const single = await post('track', JSON.stringify({ key: site.key, id: 'plain-1', url: `${SHOP}/plain` }), { 'content-type': 'text/plain' });
    expect(single.status).toBe(202);
    await written(site.id, 'plain-1');
    expect((await rowsOf(site.id, `kind = 'pageview'`)).length).toBe(101);
    const named = await rowsOf(site.id, `kind = 'event'`);
    expect(named.map((r) => r.name).sort()).toEqual(['a', 'b']);
    // An event sent without an id gets one from the server.
    expect(named.find((r) => r.name === 'b')!.event_id).toMatch(/^s\./);
    const [session] = await db().query(`SELECT pageviews, events, entry_path, exit_path FROM analytics.sessions WHERE installation_id = $1`, [site.id]);
    expect(session).toEqual({ pageviews: 101, events: 103, entry_path: '/page/0', exit_path: '/plain' });
  });

  it('answers CORS preflights for any origin (the POST itself is checked)', async () => {
    for (const name of ['track', 'event', 'identify']) {
      const res = await fetch(`${platform.baseUrl}/v1/analytics/${name}`, {
        method: 'OPTIONS',
        headers: { origin: 'https://anywhere.example.net', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe('https://anywhere.example.net');
      expect(res.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
      expect(res.headers.get('access-control-allow-headers')).toBe('content-type');
      expect(res.headers.get('access-control-max-age')).toBe('86400');
      expect(res.headers.get('vary')).toMatch(/Origin/);
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      expect(res.headers.get('set-cookie')).toBeNull();
    }
  });

  it('refuses an unknown key (401) and a key that is no key (400), in the platform error shape', async () => {
    const unknown = await post('track', { key: 'pk_doesnotexist', url: `${SHOP}/` });
    expect(unknown.status).toBe(401);
    const body = await unknown.json();
    expect(body).toEqual({ error: { code: 'UNAUTHENTICATED', message: 'Unknown installation key', details: { field: 'key' }, requestId: expect.any(String) } });
    expect(unknown.headers.get('access-control-allow-origin')).toBeNull();
    const malformed = await post('track', { key: 'pk with spaces', url: `${SHOP}/` });
    expect(malformed.status).toBe(401);
    const missing = await post('track', { url: `${SHOP}/` });
    expect(missing.status).toBe(400);
    expect((await missing.json()).error).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'key' } });
  });

  it('accepts only the installation\'s domains: exact hosts, *.wildcards with their apex, localhost only when listed; Referer without Origin', async () => {
    const site = await install(['www.example.com', '*.example.org', 'https://Legacy.Example.NET/']);
    const send = async (headers: Record<string, string>) => (await post('track', { key: site.key, url: 'https://www.example.com/' }, headers)).status;
    expect(await send({ origin: 'https://www.example.com' })).toBe(202);
    expect(await send({ origin: 'http://www.example.com:8080' })).toBe(202);
    expect(await send({ origin: 'https://example.org' })).toBe(202);
    expect(await send({ origin: 'https://a.b.example.org' })).toBe(202);
    expect(await send({ origin: 'https://legacy.example.net' })).toBe(202);
    expect(await send({ origin: 'https://example.com' })).toBe(403);
    expect(await send({ origin: 'https://badexample.org' })).toBe(403);
    expect(await send({ origin: 'https://example.org.evil.com' })).toBe(403);
    expect(await send({ origin: 'http://localhost:3000' })).toBe(403);
    // Without Origin, Referer's origin.
    expect(await send({ origin: '', referer: 'https://x.example.org/some/page?q=1' })).toBe(202);
    expect(await send({ origin: '', referer: 'https://evil.com/' })).toBe(403);

    const local = await install(['localhost']);
    expect((await post('track', { key: local.key, url: 'http://localhost:3000/' }, { origin: 'http://localhost:3000' })).status).toBe(202);
  });

  it('refuses a foreign origin (403) and a request with neither Origin nor Referer (403), storing nothing', async () => {
    const site = await install(['shop.example.com']);
    const foreign = await post('track', { key: site.key, id: 'foreign-1', url: `${SHOP}/` }, { origin: 'https://evil.example.net' });
    expect(foreign.status).toBe(403);
    expect((await foreign.json()).error).toMatchObject({ code: 'FORBIDDEN', requestId: expect.any(String) });
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
    const bare = await post('track', { key: site.key, id: 'bare-1', url: `${SHOP}/` }, { origin: '' });
    expect(bare.status).toBe(403);
    const nullOrigin = await post('track', { key: site.key, id: 'null-1', url: `${SHOP}/` }, { origin: 'null' });
    expect(nullOrigin.status).toBe(403);
    await marker(site);
    expect((await rowsOf(site.id)).map((r) => r.event_id)).toEqual([expect.stringMatching(/^marker-/)]);
  });

  it('answers 400 to malformed JSON, 413 past 64 KiB, 400 past 100 events', async () => {
    const site = await install(['shop.example.com']);
    const malformed = await post('track', '{"key": "', { 'content-type': 'text/plain' });
    expect(malformed.status).toBe(400);
    expect((await malformed.json()).error).toMatchObject({ code: 'BAD_REQUEST', message: 'Body is not valid JSON' });
    const notObject = await post('track', '[1,2]');
    expect(notObject.status).toBe(400);

    const huge = await post('track', { key: site.key, url: `${SHOP}/`, padding: 'x'.repeat(70 * 1024) });
    expect(huge.status).toBe(413);
    expect((await huge.json()).error.code).toBe('PAYLOAD_TOO_LARGE');

    const tooMany = await post('track', { key: site.key, events: Array.from({ length: 101 }, (_, i) => ({ id: `many-${i}`, url: `${SHOP}/` })) });
    expect(tooMany.status).toBe(400);
    expect((await tooMany.json()).error).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'events' } });
    const empty = await post('track', { key: site.key, events: [] });
    expect(empty.status).toBe(400);
    await marker(site);
    expect((await rowsOf(site.id)).length).toBe(1);
  });

  it('names the bad field (events[3].url…) with a 400 and stores nothing of the request', async () => {
    const site = await install(['shop.example.com']);
    const good = (i: number) => ({ id: `ok-${i}`, url: `${SHOP}/p/${i}` });
    const cases: Array<{ name: string; body: Record<string, unknown>; field: string }> = [
      { name: 'track', body: { events: [good(0), good(1), good(2), { id: 'bad-3', url: 'not a url' }, good(4)] }, field: 'events[3].url' },
      { name: 'track', body: { events: [good(0), { url: `${SHOP}/` , id: 'has space' }] }, field: 'events[1].id' },
      { name: 'track', body: { events: [good(0), 'nope'] }, field: 'events[1]' },
      { name: 'track', body: { id: 'x-1' }, field: 'url' },
      { name: 'track', body: { url: 'ftp://shop.example.com/file' }, field: 'url' },
      { name: 'track', body: { url: `${SHOP}/${'a'.repeat(2048)}` }, field: 'url' },
      { name: 'track', body: { url: `${SHOP}/`, referrer: 'not a url' }, field: 'referrer' },
      { name: 'track', body: { url: `${SHOP}/`, screenWidth: -1 }, field: 'screenWidth' },
      { name: 'track', body: { url: `${SHOP}/`, ts: 'yesterday-ish' }, field: 'ts' },
      { name: 'track', body: { url: `${SHOP}/`, id: 'x'.repeat(65) }, field: 'id' },
      { name: 'track', body: { url: `${SHOP}/`, userId: '' }, field: 'userId' },
      { name: 'event', body: { events: [{ name: 'ok' }, { name: 'x'.repeat(201) }] }, field: 'events[1].name' },
      { name: 'event', body: { name: '' }, field: 'name' },
      // $pageview and $identify are the platform's: a custom event may not pose as a pageview.
      { name: 'event', body: { name: '$pageview' }, field: 'name' },
      { name: 'event', body: { name: 'p', props: Object.fromEntries(Array.from({ length: 31 }, (_, i) => [`k${i}`, i])) }, field: 'props' },
      { name: 'event', body: { name: 'p', props: { big: 'x'.repeat(4100) } }, field: 'props' },
      { name: 'event', body: { name: 'p', props: { deep: { deeper: { deepest: 1 } } } }, field: 'props.deep' },
      { name: 'event', body: { name: 'p', props: ['a'] }, field: 'props' },
      { name: 'identify', body: { traits: { a: 1 } }, field: 'userId' },
      { name: 'identify', body: { userId: 'u', traits: { blob: 'x'.repeat(4100) } }, field: 'traits' },
      { name: 'identify', body: { userId: 'u', traits: 'pro' }, field: 'traits' },
      // What PostgreSQL would refuse is refused here, before it can hold a batch back.
      { name: 'event', body: { name: 'nul\u0000name' }, field: 'name' },
      { name: 'event', body: { name: 'p', props: { a: 'nul\u0000' } }, field: 'props' },
      { name: 'identify', body: { userId: 'u', traits: { a: 'half \ud800 pair' } }, field: 'traits' },
      { name: 'track', body: { url: `${SHOP}/?utm_source=%00` }, field: 'url' },
      { name: 'track', body: { url: `${SHOP}/`, referrer: 'https://a.example/\u0000' }, field: 'referrer' },
    ];
    for (const c of cases) {
      const res = await post(c.name, { key: site.key, ...c.body });
      const body = await res.json();
      expect({ case: c, status: res.status, field: body.error?.details?.field }).toEqual({ case: c, status: 400, field: c.field });
      expect(body.error.code).toBe('VALIDATION_FAILED');
      expect(body.error.message).toContain(c.field);
      // The page may read what it got wrong: its origin is one of the installation's.
      expect(res.headers.get('access-control-allow-origin')).toBe(SHOP);
    }
    await marker(site);
    expect((await rowsOf(site.id)).map((r) => r.event_id)).toEqual([expect.stringMatching(/^marker-/)]);
  });

  it('keeps ts within [now − 24 h, now + 5 min], else uses the server\'s now', async () => {
    const site = await install(['shop.example.com']);
    const hourAgo = Date.now() - 3600_000;
    await post('track', {
      key: site.key,
      events: [
        { id: 't-hour', url: `${SHOP}/`, ts: hourAgo },
        { id: 't-iso', url: `${SHOP}/`, ts: new Date(hourAgo).toISOString() },
        { id: 't-old', url: `${SHOP}/`, ts: Date.now() - 3 * 86_400_000 },
        { id: 't-future', url: `${SHOP}/`, ts: Date.now() + 3600_000 },
      ],
    });
    await written(site.id, 't-future');
    const ts = Object.fromEntries((await rowsOf(site.id)).map((r) => [r.event_id, r.ts.getTime()]));
    expect(ts['t-hour']).toBe(hourAgo);
    expect(ts['t-iso']).toBe(hourAgo);
    expect(Math.abs(ts['t-old'] - Date.now())).toBeLessThan(60_000);
    expect(Math.abs(ts['t-future'] - Date.now())).toBeLessThan(60_000);
  });

  it('drops the events of bots and empty user agents (202, dropped)', async () => {
    const site = await install(['shop.example.com']);
    const bots = [
      'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
      'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36',
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/126.0.0.0 Safari/537.36',
      'Mozilla/5.0 (Linux; Android 7.0; Moto G (4)) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/109.0.0.0 Mobile Safari/537.36 Chrome-Lighthouse',
      'Pingdom.com_bot_version_1.4_(http://www.pingdom.com/)',
      'python-requests/2.31.0',
      'curl/8.5.0',
      'Wget/1.21.4',
      'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
      'Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)',
      'Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)',
      '',
    ];
    for (const ua of bots) {
      const res = await post('track', { key: site.key, events: [{ url: `${SHOP}/a` }, { url: `${SHOP}/b` }] }, { 'user-agent': ua });
      expect({ ua, status: res.status, body: await res.json() }).toEqual({ ua, status: 202, body: { accepted: 0, duplicates: 0, dropped: 2 } });
    }
    // A phone whose model name ends in "bot" is no bot.
    const cubot = await post('track', { key: site.key, url: `${SHOP}/c` }, { 'user-agent': 'Mozilla/5.0 (Linux; Android 10; CUBOT X30) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36' });
    expect(await cubot.json()).toEqual({ accepted: 1, duplicates: 0, dropped: 0 });
    await marker(site);
    expect((await rowsOf(site.id)).map((r) => r.path).sort()).toEqual(['/c', '/marker']);
  });

  it('drops an event whose id was seen in the last 24 h, in the same batch or a later request', async () => {
    const site = await install(['shop.example.com']);
    const first = await post('track', { key: site.key, events: [{ id: 'dup-1', url: `${SHOP}/1` }, { id: 'dup-1', url: `${SHOP}/1-again` }, { id: 'dup-2', url: `${SHOP}/2` }] });
    expect(await first.json()).toEqual({ accepted: 2, duplicates: 1, dropped: 0 });
    const again = await post('track', { key: site.key, events: [{ id: 'dup-2', url: `${SHOP}/2` }, { id: 'dup-3', url: `${SHOP}/3` }] });
    expect(await again.json()).toEqual({ accepted: 1, duplicates: 1, dropped: 0 });
    // Ids are per installation: another site may use the same ones.
    const other = await install(['shop.example.com']);
    const elsewhere = await post('track', { key: other.key, id: 'dup-1', url: `${SHOP}/1` });
    expect(await elsewhere.json()).toEqual({ accepted: 1, duplicates: 0, dropped: 0 });
    await written(site.id, 'dup-3');
    expect((await rowsOf(site.id)).map((r) => [r.event_id, r.path])).toEqual(
      expect.arrayContaining([
        ['dup-1', '/1'],
        ['dup-2', '/2'],
        ['dup-3', '/3'],
      ]),
    );
    expect((await rowsOf(site.id)).length).toBe(3);
    const [session] = await db().query(`SELECT pageviews FROM analytics.sessions WHERE installation_id = $1`, [site.id]);
    expect(session.pageviews).toBe(3);
  });

  it('derives a visitor id stable for one IP and user agent within the day, another for another UA, and never stores the IP', async () => {
    const site = await install(['shop.example.com']);
    await post('track', { key: site.key, id: 'v-1', url: `${SHOP}/1` });
    await post('track', { key: site.key, id: 'v-2', url: `${SHOP}/2` });
    await post('track', { key: site.key, id: 'v-3', url: `${SHOP}/3` }, { 'user-agent': SAFARI_IPHONE });
    const [a, b] = [await written(site.id, 'v-1'), await written(site.id, 'v-2')];
    const c = await written(site.id, 'v-3');
    expect(a.visitor_id).toBe(b.visitor_id);
    expect(c.visitor_id).not.toBe(a.visitor_id);
    expect(c.session_id).not.toBe(a.session_id);

    // The formula: the first 8 bytes of SHA-256(salt of the UTC day ‖ installation id ‖ IP ‖ UA), as a signed bigint.
    const today = new Date().toISOString().slice(0, 10);
    const [salt] = await db().query(`SELECT salt FROM analytics.salts WHERE day = $1::date`, [today]);
    expect(salt.salt).toHaveLength(32);
    const hashed = (ip: string) => createHash('sha256').update(salt.salt).update(site.id).update(ip).update(CHROME_MAC).digest().readBigInt64BE(0).toString();
    expect(['127.0.0.1', '::ffff:127.0.0.1', '::1'].map(hashed)).toContain(a.visitor_id);

    // Nowhere the client's address: not in any row the ingestion writes, nor in Redis.
    const ips = ['127.0.0.1', '::1'];
    for (const table of ['events', 'sessions', 'users', 'salts']) {
      const rows = await db().query(`SELECT row_to_json(t)::text AS json FROM analytics.${table} t`);
      for (const { json } of rows as Array<{ json: string }>) for (const ip of ips) expect(json.includes(ip) ? `${table}: ${json}` : null).toBeNull();
    }
    const keys = await keysUnder(redis, `${platform.config.redisPrefix}:an:`);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      const value = (await redis.type(key)) === 'string' ? await redis.get(key) : '';
      for (const ip of ips) expect(`${key} ${value}`.includes(ip) ? key : null).toBeNull();
    }
  });

  it('keeps installations apart: another workspace\'s installation never receives the first one\'s events', async () => {
    const first = await install(['shop.example.com'], 'ws_ingest_first');
    const second = await install(['blog.example.io'], 'ws_ingest_second');
    await post('track', { key: first.key, id: 'mine-1', url: `${SHOP}/` });
    // The first key from the second site's pages, and the second key from the first's: refused.
    expect((await post('track', { key: first.key, id: 'cross-1', url: 'https://blog.example.io/' }, { origin: 'https://blog.example.io' })).status).toBe(403);
    expect((await post('track', { key: second.key, id: 'cross-2', url: `${SHOP}/` })).status).toBe(403);
    await post('track', { key: second.key, id: 'theirs-1', url: 'https://blog.example.io/' }, { origin: 'https://blog.example.io' });
    await written(first.id, 'mine-1');
    await written(second.id, 'theirs-1');
    expect((await rowsOf(first.id)).map((r) => r.event_id)).toEqual(['mine-1']);
    expect((await rowsOf(second.id)).map((r) => r.event_id)).toEqual(['theirs-1']);
    const sessions = await db().query(`SELECT installation_id, count(*)::int AS n FROM analytics.sessions WHERE installation_id = ANY($1) GROUP BY 1`, [[first.id, second.id]]);
    expect(sessions).toHaveLength(2);
  });

  it('refuses the key of a deleted installation within a second of the change being published', async () => {
    const site = await install(['shop.example.com']);
    expect((await post('track', { key: site.key, id: 'before-delete', url: `${SHOP}/` })).status).toBe(202); // cached now
    await written(site.id, 'before-delete');
    await db().query(`DELETE FROM analytics.installations WHERE id = $1`, [site.id]);
    const at = Date.now();
    platform.runtime.pubsub.publish(TOPICS.analyticsInstallationChanged, { installationId: site.id });
    await eventually(async () => (await post('track', { key: site.key, url: `${SHOP}/` })).status === 401, 1000, 'the deleted key to be refused');
    expect(Date.now() - at).toBeLessThan(1000);
  });

  it('routes: track.js served; other names 404; other methods 404 with Allow, in the platform error shape', async () => {
    const script = await fetch(`${platform.baseUrl}/v1/analytics/track.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    const get = await fetch(`${platform.baseUrl}/v1/analytics/track`);
    expect(get.status).toBe(404);
    expect(get.headers.get('allow')).toBe('POST, OPTIONS');
    expect((await get.json()).error).toMatchObject({ code: 'ROUTE_NOT_FOUND', requestId: expect.any(String) });
    const put = await fetch(`${platform.baseUrl}/v1/analytics/identify`, { method: 'PUT', body: '{}' });
    expect(put.status).toBe(404);
    // Not one of the forwarded names: the edge's own 404.
    const unknown = await fetch(`${platform.baseUrl}/v1/analytics/pixel.gif`);
    expect(unknown.status).toBe(404);
  });
});

/** The keys under a prefix, by SCAN: KEYS would block the Redis every test file shares. */
async function keysUnder(redis: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys;
}

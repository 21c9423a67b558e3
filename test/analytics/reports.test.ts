import { startTestPlatform, type TestPlatform } from '../harness';
import { createInstallation, expectStatus, get, insertEvents, insertSessions, insertUser, rest, setUpAnalyticsTest, type AnalyticsTestEnv } from './support';

jest.setTimeout(60_000);

let platform: TestPlatform;
let t: AnalyticsTestEnv;
/** Alice's site with the known day below; mallory's site with one visit of its own. */
let site: { id: string };
let mallorySite: { id: string };

const DAY = { from: '2026-03-10T00:00:00Z', to: '2026-03-11T00:00:00Z' };

/**
 * 2026-03-10 (a Tuesday), four visits of three visitors:
 * - session 1, visitor 101: / 10:00, /pricing 10:01, signup_start 10:03, /pricing 10:05 (google.com, newsletter, Chrome, macOS, desktop)
 * - session 2, visitor 101: /blog/hello 12:00 (a bounce; no referrer; Chrome, macOS, desktop)
 * - session 3, visitor 102: / 10:30, identify u_alice 10:31, /docs/intro 10:32 as u_alice (google.com, Firefox, Windows, mobile)
 * - session 4, visitor 103: /pricing 11:00 (a bounce; news.ycombinator.com, hn, Safari, Android, mobile)
 * Outside the day: session 5 of visitor 101 on 03-12 (/ and /pricing), and u_bob's one pageview on 02-01.
 * Sessions 4, visitors 3, pageviews 7, bounce rate 2/4, mean duration (300 + 0 + 120 + 0) / 4 = 105 s.
 */
async function seedSite(id: string): Promise<void> {
  await insertEvents(t.pg, id, [
    { ts: '2026-03-10T10:00:00Z', visitorId: 101, sessionId: 1, path: '/' },
    { ts: '2026-03-10T10:01:00Z', visitorId: 101, sessionId: 1, path: '/pricing' },
    { ts: '2026-03-10T10:03:00Z', visitorId: 101, sessionId: 1, kind: 'event', name: 'signup_start', path: '/pricing', props: { plan: 'pro' } },
    { ts: '2026-03-10T10:05:00Z', visitorId: 101, sessionId: 1, path: '/pricing' },
    { ts: '2026-03-10T12:00:00Z', visitorId: 101, sessionId: 2, path: '/blog/hello' },
    { ts: '2026-03-10T10:30:00Z', visitorId: 102, sessionId: 3, path: '/' },
    { ts: '2026-03-10T10:31:00Z', visitorId: 102, sessionId: 3, kind: 'identify', userId: 'u_alice' },
    { ts: '2026-03-10T10:32:00Z', visitorId: 102, sessionId: 3, path: '/docs/intro', userId: 'u_alice' },
    { ts: '2026-03-10T11:00:00Z', visitorId: 103, sessionId: 4, path: '/pricing' },
    { ts: '2026-03-12T09:00:00Z', visitorId: 101, sessionId: 5, path: '/' },
    { ts: '2026-03-12T09:10:00Z', visitorId: 101, sessionId: 5, path: '/pricing' },
    { ts: '2026-02-01T08:00:00Z', visitorId: 104, sessionId: 6, path: '/', userId: 'u_bob' },
  ]);
  const desktop = { browser: 'Chrome', os: 'macOS', device: 'desktop' };
  await insertSessions(t.pg, id, [
    { sessionId: 1, visitorId: 101, startedAt: '2026-03-10T10:00:00Z', lastSeenAt: '2026-03-10T10:05:00Z', pageviews: 3, events: 4, referrerDomain: 'google.com', utmSource: 'newsletter', ...desktop },
    { sessionId: 2, visitorId: 101, startedAt: '2026-03-10T12:00:00Z', lastSeenAt: '2026-03-10T12:00:00Z', pageviews: 1, events: 1, ...desktop },
    { sessionId: 3, visitorId: 102, userId: 'u_alice', startedAt: '2026-03-10T10:30:00Z', lastSeenAt: '2026-03-10T10:32:00Z', pageviews: 2, events: 3, referrerDomain: 'google.com', browser: 'Firefox', os: 'Windows', device: 'mobile' },
    { sessionId: 4, visitorId: 103, startedAt: '2026-03-10T11:00:00Z', lastSeenAt: '2026-03-10T11:00:00Z', pageviews: 1, events: 1, referrerDomain: 'news.ycombinator.com', utmSource: 'hn', browser: 'Safari', os: 'Android', device: 'mobile' },
    { sessionId: 5, visitorId: 101, startedAt: '2026-03-12T09:00:00Z', lastSeenAt: '2026-03-12T09:10:00Z', pageviews: 2, events: 2, ...desktop },
    { sessionId: 6, visitorId: 104, userId: 'u_bob', startedAt: '2026-02-01T08:00:00Z', lastSeenAt: '2026-02-01T08:00:00Z', pageviews: 1, events: 1, ...desktop },
  ]);
  await insertUser(t.pg, id, { userId: 'u_alice', traits: { plan: 'pro', name: 'Alice' }, firstSeenAt: '2026-03-10T10:31:00Z', lastSeenAt: '2026-03-10T10:32:00Z' });
  await insertUser(t.pg, id, { userId: 'u_bob', traits: { plan: 'free' }, firstSeenAt: '2026-02-01T08:00:00Z', lastSeenAt: '2026-02-02T08:00:00Z' });
}

beforeAll(async () => {
  platform = await startTestPlatform();
  t = await setUpAnalyticsTest(platform, 'anrep');
  site = await createInstallation(platform, t.alice, { name: 'Reports' });
  mallorySite = await createInstallation(platform, t.mallory, { name: 'Mallory' });
  await seedSite(site.id);
  await insertEvents(t.pg, mallorySite.id, [{ ts: '2026-03-10T11:00:00Z', visitorId: 900, sessionId: 900, path: '/mallory' }]);
  await insertSessions(t.pg, mallorySite.id, [{ sessionId: 900, visitorId: 900, startedAt: '2026-03-10T11:00:00Z', lastSeenAt: '2026-03-10T11:00:00Z', pageviews: 1, events: 1, browser: 'Chrome' }]);
});

afterAll(async () => {
  await t?.close();
  await platform?.stop();
});

const ok = async (path: string, query: Record<string, string | number | undefined>, who = t.alice) => expectStatus(await get(platform, path, query, who), 200);
const invalid = async (path: string, query: Record<string, string | number | undefined>) => (await expectStatus(await get(platform, path, query, t.alice), 400)).error;

describe('GET /analytics/stats', () => {
  it('counts the day from the sessions and the pageviews (REST shape)', async () => {
    expect(await ok('/analytics/stats', { installationId: site.id, ...DAY })).toEqual({
      installationId: site.id,
      from: '2026-03-10T00:00:00.000Z',
      to: '2026-03-11T00:00:00.000Z',
      pageviews: 7,
      visitors: 3,
      sessions: 4,
      bounceRate: 0.5,
      visitDurationSeconds: 105,
      topPages: [
        { path: '/pricing', pageviews: 3 },
        { path: '/', pageviews: 2 },
        { path: '/blog/hello', pageviews: 1 },
        { path: '/docs/intro', pageviews: 1 },
      ],
      referrers: [
        { value: 'google.com', sessions: 2 },
        { value: 'news.ycombinator.com', sessions: 1 },
      ],
      utmSources: [
        { value: 'hn', sessions: 1 },
        { value: 'newsletter', sessions: 1 },
      ],
      browsers: [
        { value: 'Chrome', sessions: 2 },
        { value: 'Firefox', sessions: 1 },
        { value: 'Safari', sessions: 1 },
      ],
      operatingSystems: [
        { value: 'macOS', sessions: 2 },
        { value: 'Android', sessions: 1 },
        { value: 'Windows', sessions: 1 },
      ],
      devices: [
        { value: 'desktop', sessions: 2 },
        { value: 'mobile', sessions: 2 },
      ],
    });
  });

  it('cuts each top list at limit, and an empty window has no rates', async () => {
    const top = await ok('/analytics/stats', { installationId: site.id, ...DAY, limit: 1 });
    expect(top).toMatchObject({ pageviews: 7, topPages: [{ path: '/pricing', pageviews: 3 }], referrers: [{ value: 'google.com' }], browsers: [{ value: 'Chrome' }] });
    expect(await ok('/analytics/stats', { installationId: site.id, from: '2025-01-01T00:00:00Z', to: '2025-01-02T00:00:00Z' })).toMatchObject({
      pageviews: 0,
      visitors: 0,
      sessions: 0,
      bounceRate: null,
      visitDurationSeconds: null,
      topPages: [],
      referrers: [],
    });
    // Two days: session 5 (03-12) joins. Visitors are counted per day (ids change with the daily
    // salt, so real data never repeats one across days): 101 counts on 03-10 and again on 03-12.
    expect(await ok('/analytics/stats', { installationId: site.id, from: '2026-03-10T00:00:00Z', to: '2026-03-13T00:00:00Z' })).toMatchObject({ pageviews: 9, visitors: 4, sessions: 5 });
  });
});

describe('GET /analytics/dashboard/timeseries', () => {
  const series = async (query: Record<string, string>) => (await ok('/analytics/dashboard/timeseries', { installationId: site.id, ...query })).buckets;
  const hours = { from: '2026-03-10T09:30:00Z', to: '2026-03-10T13:00:00Z', interval: 'hour' };
  const at = ['2026-03-10T09:00:00.000Z', '2026-03-10T10:00:00.000Z', '2026-03-10T11:00:00.000Z', '2026-03-10T12:00:00.000Z'];
  const zip = (values: Array<number | null>) => values.map((value, i) => ({ at: at[i], value }));

  it.each([
    ['pageviews', [0, 5, 1, 1]],
    ['visitors', [0, 2, 1, 1]],
    ['sessions', [0, 2, 1, 1]],
    ['events', [0, 1, 0, 0]],
    ['bounce_rate', [null, 0, 1, 1]],
    ['visit_duration', [null, 210, 0, 0]],
  ])('buckets %s by the hour, empty ones included', async (metric, values) => {
    expect(await series({ ...hours, metric: metric as string })).toEqual(zip(values as Array<number | null>));
  });

  it('answers the REST shape, pageviews by the day by default', async () => {
    const answer = await ok('/analytics/dashboard/timeseries', { installationId: site.id, from: '2026-03-09T00:00:00Z', to: '2026-03-13T00:00:00Z' });
    expect(answer).toEqual({
      installationId: site.id,
      from: '2026-03-09T00:00:00.000Z',
      to: '2026-03-13T00:00:00.000Z',
      interval: 'day',
      metric: 'pageviews',
      buckets: [
        { at: '2026-03-09T00:00:00.000Z', value: 0 },
        { at: '2026-03-10T00:00:00.000Z', value: 7 },
        { at: '2026-03-11T00:00:00.000Z', value: 0 },
        { at: '2026-03-12T00:00:00.000Z', value: 2 },
      ],
    });
  });

  it('cuts weeks on Mondays and months on the 1st (UTC)', async () => {
    expect(await series({ from: '2026-03-01T00:00:00Z', to: '2026-03-20T00:00:00Z', interval: 'week' })).toEqual([
      { at: '2026-02-23T00:00:00.000Z', value: 0 },
      { at: '2026-03-02T00:00:00.000Z', value: 0 },
      { at: '2026-03-09T00:00:00.000Z', value: 9 },
      { at: '2026-03-16T00:00:00.000Z', value: 0 },
    ]);
    expect(await series({ from: '2026-01-15T00:00:00Z', to: '2026-04-01T00:00:00Z', interval: 'month' })).toEqual([
      { at: '2026-01-01T00:00:00.000Z', value: 0 },
      { at: '2026-02-01T00:00:00.000Z', value: 1 },
      { at: '2026-03-01T00:00:00.000Z', value: 9 },
    ]);
    const minutes = await series({ from: '2026-03-10T10:00:00Z', to: '2026-03-10T10:06:00Z', interval: 'minute' });
    expect(minutes.map((b: any) => b.value)).toEqual([1, 1, 0, 0, 0, 1]);
  });

  it('answers 400 naming the field: interval, metric, too many buckets, bad times, a window over a year', async () => {
    const path = '/analytics/dashboard/timeseries';
    expect(await invalid(path, { installationId: site.id, interval: 'year' })).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'interval' } });
    expect(await invalid(path, { installationId: site.id, metric: 'revenue' })).toMatchObject({ details: { field: 'metric' } });
    expect(await invalid(path, { installationId: site.id, interval: 'minute', from: '2026-03-01T00:00:00Z', to: '2026-03-03T00:00:00Z' })).toMatchObject({ details: { field: 'interval' } });
    expect(await invalid(path, { installationId: site.id, from: 'yesterday-ish' })).toMatchObject({ details: { field: 'from' } });
    expect(await invalid(path, { installationId: site.id, to: 'soon' })).toMatchObject({ details: { field: 'to' } });
    expect(await invalid(path, { installationId: site.id, from: '2026-03-11T00:00:00Z', to: '2026-03-10T00:00:00Z' })).toMatchObject({ details: { field: 'from' } });
    expect(await invalid(path, { installationId: site.id, from: '2025-01-01T00:00:00Z', to: '2026-03-01T00:00:00Z', interval: 'month' })).toMatchObject({ details: { field: 'from' } });
    expect(await invalid(path, {})).toMatchObject({ details: { field: 'installationId' } });
  });
});

describe('GET /analytics/dashboard/events', () => {
  const events = (query: Record<string, string | number>) => ok('/analytics/dashboard/events', { installationId: site.id, ...DAY, ...query });

  it('lists the window newest first, paginated', async () => {
    const all = await events({});
    expect(all).toMatchObject({ total: 9, page: 1, limit: 50 });
    expect(all.data.map((e: any) => e.at)).toEqual([...all.data.map((e: any) => e.at)].sort().reverse());
    expect(all.data[0]).toEqual({
      eventId: expect.any(String),
      at: '2026-03-10T12:00:00.000Z',
      kind: 'pageview',
      name: '$pageview',
      visitorId: '101',
      sessionId: '2',
      userId: null,
      hostname: 'example.com',
      path: '/blog/hello',
      query: null,
      referrer: null,
      referrerDomain: null,
      utmSource: null,
      utmMedium: null,
      utmCampaign: null,
      browser: null,
      os: null,
      device: null,
      screenWidth: null,
      props: null,
    });
    const second = await events({ page: 2, limit: 4 });
    expect(second).toMatchObject({ total: 9, page: 2, limit: 4 });
    expect(second.data.map((e: any) => e.eventId)).toEqual(all.data.slice(4, 8).map((e: any) => e.eventId));
  });

  it('filters by name, kind, path, visitor and user', async () => {
    expect((await events({ name: '$pageview' })).total).toBe(7);
    const custom = await events({ name: 'signup_start' });
    expect(custom.data).toEqual([expect.objectContaining({ kind: 'event', name: 'signup_start', props: { plan: 'pro' } })]);
    expect((await events({ kind: 'identify' })).data).toEqual([expect.objectContaining({ kind: 'identify', name: '$identify', userId: 'u_alice' })]);
    // Three pageviews of /pricing and the custom event sent from it.
    expect((await events({ path: '/pricing' })).total).toBe(4);
    expect((await events({ path: '/pricing', kind: 'pageview' })).total).toBe(3);
    expect((await events({ visitorId: '101' })).total).toBe(5);
    expect((await events({ userId: 'u_alice' })).data.map((e: any) => e.at)).toEqual(['2026-03-10T10:32:00.000Z', '2026-03-10T10:31:00.000Z']);
    expect((await events({ visitorId: '101', kind: 'event' })).total).toBe(1);
    expect((await events({ limit: 500 })).total).toBe(9);
  });

  it('answers 400 naming the field', async () => {
    const path = '/analytics/dashboard/events';
    expect(await invalid(path, { installationId: site.id, kind: 'click' })).toMatchObject({ details: { field: 'kind' } });
    expect(await invalid(path, { installationId: site.id, limit: 501 })).toMatchObject({ details: { field: 'limit' } });
    expect(await invalid(path, { installationId: site.id, page: 0 })).toMatchObject({ details: { field: 'page' } });
    expect(await invalid(path, { installationId: site.id, visitorId: 'v-101' })).toMatchObject({ details: { field: 'visitorId' } });
  });
});

describe('GET /analytics/dashboard/realtime', () => {
  it('counts visitors, pageviews and top pages of the last 5 minutes', async () => {
    const live = await createInstallation(platform, t.alice, { name: 'Live' });
    const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();
    await insertEvents(t.pg, live.id, [
      { ts: ago(60), visitorId: 201, sessionId: 201, path: '/live' },
      { ts: ago(50), visitorId: 201, sessionId: 201, path: '/other' },
      { ts: ago(40), visitorId: 201, sessionId: 201, kind: 'event', name: 'click', path: '/other' },
      { ts: ago(30), visitorId: 202, sessionId: 202, path: '/live' },
      { ts: ago(600), visitorId: 203, sessionId: 203, path: '/live' },
    ]);
    const answer = await ok('/analytics/dashboard/realtime', { installationId: live.id });
    expect(answer).toEqual({
      installationId: live.id,
      at: expect.any(String),
      windowSeconds: 300,
      visitors: 2,
      pageviews: 3,
      topPages: [
        { path: '/live', pageviews: 2 },
        { path: '/other', pageviews: 1 },
      ],
    });
    expect((await ok('/analytics/dashboard/realtime', { installationId: live.id, limit: 1 })).topPages).toEqual([{ path: '/live', pageviews: 2 }]);
    expect(await invalid('/analytics/dashboard/realtime', { installationId: live.id, limit: 101 })).toMatchObject({ details: { field: 'limit' } });
  });
});

describe('GET /analytics/trajectory', () => {
  it("orders one visitor's events and splits them into sessions", async () => {
    const answer = await ok('/analytics/trajectory', { installationId: site.id, visitorId: '101', from: '2026-03-10T00:00:00Z', to: '2026-03-13T00:00:00Z' });
    expect(answer).toMatchObject({ installationId: site.id, visitorId: '101', userId: null, events: 7, truncated: false });
    expect(answer.sessions.map((s: any) => [s.sessionId, s.startedAt, s.endedAt, s.events.length])).toEqual([
      ['1', '2026-03-10T10:00:00.000Z', '2026-03-10T10:05:00.000Z', 4],
      ['2', '2026-03-10T12:00:00.000Z', '2026-03-10T12:00:00.000Z', 1],
      ['5', '2026-03-12T09:00:00.000Z', '2026-03-12T09:10:00.000Z', 2],
    ]);
    expect(answer.sessions[0].events.map((e: any) => e.name)).toEqual(['$pageview', '$pageview', 'signup_start', '$pageview']);

    const cut = await ok('/analytics/trajectory', { installationId: site.id, visitorId: '101', from: '2026-03-10T00:00:00Z', to: '2026-03-13T00:00:00Z', limit: 3 });
    expect(cut).toMatchObject({ events: 3, truncated: true });
    expect(cut.sessions.map((s: any) => s.events.length)).toEqual([3]);
  });

  it("follows a user's events", async () => {
    const answer = await ok('/analytics/trajectory', { installationId: site.id, userId: 'u_alice', ...DAY });
    expect(answer).toMatchObject({ visitorId: null, userId: 'u_alice', events: 2 });
    expect(answer.sessions).toEqual([
      expect.objectContaining({ sessionId: '3', visitorId: '102', events: [expect.objectContaining({ kind: 'identify' }), expect.objectContaining({ path: '/docs/intro' })] }),
    ]);
  });

  it('needs exactly one of visitorId and userId (400)', async () => {
    expect(await invalid('/analytics/trajectory', { installationId: site.id })).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'visitorId' } });
    expect(await invalid('/analytics/trajectory', { installationId: site.id, visitorId: '101', userId: 'u_alice' })).toMatchObject({ details: { field: 'userId' } });
    expect(await invalid('/analytics/trajectory', { installationId: site.id, visitorId: '1.5' })).toMatchObject({ details: { field: 'visitorId' } });
  });
});

describe('GET /analytics/users and /analytics/users/profile', () => {
  it('lists users seen in the window with their traits and events in it', async () => {
    const day = await ok('/analytics/users', { installationId: site.id, ...DAY });
    expect(day).toEqual({
      data: [{ userId: 'u_alice', traits: { plan: 'pro', name: 'Alice' }, firstSeenAt: '2026-03-10T10:31:00.000Z', lastSeenAt: '2026-03-10T10:32:00.000Z', events: 2 }],
      total: 1,
      page: 1,
      limit: 20,
    });
    const quarter = await ok('/analytics/users', { installationId: site.id, from: '2026-01-01T00:00:00Z', to: '2026-04-01T00:00:00Z' });
    expect(quarter.data.map((u: any) => [u.userId, u.events])).toEqual([
      ['u_alice', 2],
      ['u_bob', 1],
    ]);
    const paged = await ok('/analytics/users', { installationId: site.id, from: '2026-01-01T00:00:00Z', to: '2026-04-01T00:00:00Z', limit: 1, page: 2 });
    expect(paged).toMatchObject({ total: 2, page: 2, limit: 1, data: [{ userId: 'u_bob' }] });
  });

  it("shows one user's traits, sessions and recent events; an unknown user is 404", async () => {
    expect(await ok('/analytics/users/profile', { installationId: site.id, userId: 'u_alice', ...DAY })).toEqual({
      installationId: site.id,
      userId: 'u_alice',
      traits: { plan: 'pro', name: 'Alice' },
      firstSeenAt: '2026-03-10T10:31:00.000Z',
      lastSeenAt: '2026-03-10T10:32:00.000Z',
      from: '2026-03-10T00:00:00.000Z',
      to: '2026-03-11T00:00:00.000Z',
      sessions: 1,
      events: 2,
      recentEvents: [expect.objectContaining({ path: '/docs/intro' }), expect.objectContaining({ kind: 'identify' })],
    });
    const missing = await get(platform, '/analytics/users/profile', { installationId: site.id, userId: 'u_nobody' }, t.alice);
    expect(missing.status).toBe(404);
    expect(await invalid('/analytics/users/profile', { installationId: site.id })).toMatchObject({ details: { field: 'userId' } });
  });
});

describe("another workspace's reports", () => {
  it.each([
    ['/analytics/stats', {}],
    ['/analytics/dashboard/timeseries', {}],
    ['/analytics/dashboard/events', {}],
    ['/analytics/dashboard/realtime', {}],
    ['/analytics/trajectory', { visitorId: '101' }],
    ['/analytics/users', {}],
    ['/analytics/users/profile', { userId: 'u_alice' }],
  ])('%s is 404', async (path, extra) => {
    const answer = await get(platform, path, { installationId: site.id, ...DAY, ...extra }, t.mallory);
    expect(answer.status).toBe(404);
    expect((await answer.json()).error.code).toBe('NOT_FOUND');
  });

  it("does not mix one installation's data into another's", async () => {
    expect(await ok('/analytics/stats', { installationId: mallorySite.id, ...DAY }, t.mallory)).toMatchObject({ pageviews: 1, visitors: 1, sessions: 1, topPages: [{ path: '/mallory', pageviews: 1 }] });
    expect((await ok('/analytics/stats', { installationId: site.id, ...DAY })).topPages.map((p: any) => p.path)).not.toContain('/mallory');
  });
});

describe('GET /analytics/funnels/{id}/analyze', () => {
  const at = (hhmm: string, day = '2026-03-20') => `${day}T${hhmm}:00Z`;

  /**
   * Steps: / → /pricing* → signup, window 1 hour, analysed over 2026-03-20.
   * 1: all three (600 s, 600 s). 2: stops after pricing (1800 s). 3: skips pricing (signup only).
   * 4: signs up 90 minutes after its first step, out of the window (pricing after 1200 s).
   * 5: does the steps backwards (only its / counts). 6: never on /. 8: its first / is 10:00, the
   * rest comes after noon, past that window. 9: / at 23:50, pricing next day 00:05 (900 s, in the
   * window). 10: its / is the day before (not counted).
   * Step 1: 7 visitors; step 2: 4 (median of 600, 1800, 1200, 900 = 1050 s); step 3: 1 (600 s).
   */
  it('counts visitors per step in order within the window, with conversions and medians', async () => {
    const ins = await createInstallation(platform, t.alice, { name: 'Funnel' });
    const visit = (visitorId: number, steps: Array<[string, string]>) =>
      steps.map(([ts, what]) => (what === 'signup' ? { ts, visitorId, sessionId: visitorId, kind: 'event' as const, name: 'signup' } : { ts, visitorId, sessionId: visitorId, path: what }));
    await insertEvents(t.pg, ins.id, [
      ...visit(1, [[at('10:00'), '/'], [at('10:10'), '/pricing/team'], [at('10:20'), 'signup']]),
      ...visit(2, [[at('10:00'), '/'], [at('10:30'), '/pricing']]),
      ...visit(3, [[at('10:00'), '/'], [at('10:05'), 'signup']]),
      ...visit(4, [[at('10:00'), '/'], [at('10:20'), '/pricing'], [at('11:30'), 'signup']]),
      ...visit(5, [[at('09:00'), 'signup'], [at('09:10'), '/pricing'], [at('09:20'), '/']]),
      ...visit(6, [[at('10:00'), '/pricing'], [at('10:10'), 'signup']]),
      ...visit(8, [[at('10:00'), '/'], [at('12:00'), '/'], [at('12:10'), '/pricing'], [at('12:20'), 'signup']]),
      ...visit(9, [[at('23:50'), '/'], [at('00:05', '2026-03-21'), '/pricing']]),
      ...visit(10, [[at('23:00', '2026-03-19'), '/'], [at('00:10'), '/pricing']]),
    ]);
    const funnel = await expectStatus(
      await rest(platform, 'POST', '/analytics/funnels', { installationId: ins.id, name: 'Signup', windowSeconds: 3600, steps: [{ type: 'page', match: '/' }, { type: 'page', match: '/pricing*', label: 'Pricing' }, { type: 'event', match: 'signup' }] }, t.alice.auth),
      201,
    );
    const analysis = await ok(`/analytics/funnels/${funnel.id}/analyze`, { from: '2026-03-20T00:00:00Z', to: '2026-03-21T00:00:00Z' });
    expect(analysis).toEqual({
      funnelId: funnel.id,
      installationId: ins.id,
      from: '2026-03-20T00:00:00.000Z',
      to: '2026-03-21T00:00:00.000Z',
      windowSeconds: 3600,
      steps: [
        { step: 1, type: 'page', match: '/', label: '/', visitors: 7, conversionFromPrevious: 1, conversionFromFirst: 1, medianSecondsFromPrevious: null },
        { step: 2, type: 'page', match: '/pricing*', label: 'Pricing', visitors: 4, conversionFromPrevious: 4 / 7, conversionFromFirst: 4 / 7, medianSecondsFromPrevious: 1050 },
        { step: 3, type: 'event', match: 'signup', label: 'signup', visitors: 1, conversionFromPrevious: 0.25, conversionFromFirst: 1 / 7, medianSecondsFromPrevious: 600 },
      ],
      conversion: 1 / 7,
    });

    // A window nobody entered: no rates.
    const empty = await ok(`/analytics/funnels/${funnel.id}/analyze`, { from: '2025-03-20T00:00:00Z', to: '2025-03-21T00:00:00Z' });
    expect(empty.steps.map((s: any) => [s.visitors, s.conversionFromPrevious, s.conversionFromFirst, s.medianSecondsFromPrevious])).toEqual([
      [0, null, null, null],
      [0, null, null, null],
      [0, null, null, null],
    ]);
    expect(empty.conversion).toBeNull();
    expect(await invalid(`/analytics/funnels/${funnel.id}/analyze`, { from: 'not a date' })).toMatchObject({ details: { field: 'from' } });
  });

  it('matches * in page steps and nothing else (% and _ are literal)', async () => {
    const ins = await createInstallation(platform, t.alice, { name: 'Patterns' });
    await insertEvents(t.pg, ins.id, [
      { ts: at('10:00'), visitorId: 20, sessionId: 20, path: '/aXb/1' },
      { ts: at('10:01'), visitorId: 20, sessionId: 20, kind: 'event', name: 'go' },
      { ts: at('10:00'), visitorId: 21, sessionId: 21, path: '/a_b/2' },
      { ts: at('10:01'), visitorId: 21, sessionId: 21, kind: 'event', name: 'go' },
      { ts: at('10:00'), visitorId: 22, sessionId: 22, path: '/a%b/3' },
    ]);
    const analyse = async (match: string) => {
      const funnel = await expectStatus(await rest(platform, 'POST', '/analytics/funnels', { installationId: ins.id, name: match, steps: [{ type: 'page', match }, { type: 'event', match: 'go' }] }, t.alice.auth), 201);
      const answer = await ok(`/analytics/funnels/${funnel.id}/analyze`, { from: '2026-03-20T00:00:00Z', to: '2026-03-21T00:00:00Z' });
      return answer.steps.map((s: any) => s.visitors);
    };
    expect(await analyse('/a_b/*')).toEqual([1, 1]);
    expect(await analyse('/a*b/*')).toEqual([3, 2]);
    expect(await analyse('/a%b/3')).toEqual([1, 0]);
    expect(await analyse('/aXb/1')).toEqual([1, 1]);
  });
});

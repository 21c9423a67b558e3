import { TOPICS } from '../../core/pubsub';
import { startTestPlatform, type TestPlatform } from '../harness';
import { eventually, gql } from '../helpers';
import {
  createInstallation,
  expectStatus,
  get,
  insertEvents,
  insertSessions,
  insertUser,
  json,
  rest,
  rowCounts,
  setUpAnalyticsTest,
  sharedWorkspace,
  type AnalyticsTestEnv,
} from './support';

jest.setTimeout(60_000);

let platform: TestPlatform;
let t: AnalyticsTestEnv;
const changed: string[] = [];

beforeAll(async () => {
  platform = await startTestPlatform({ env: { PUBLIC_URL: 'https://platform.example.com' } });
  t = await setUpAnalyticsTest(platform, 'anapi');
  platform.runtime.pubsub.on<{ installationId: string }>(TOPICS.analyticsInstallationChanged, (event) => changed.push(event.installationId));
});

afterAll(async () => {
  await t?.close();
  await platform?.stop();
});

const FUNNEL_STEPS = [
  { type: 'page', match: '/' },
  { type: 'page', match: '/pricing*', label: 'Pricing' },
  { type: 'event', match: 'signup' },
];

describe('installations over REST', () => {
  it('creates (201) with normalized domains and a pk_ key, reads, lists, updates and shows the script', async () => {
    const created = await createInstallation(platform, t.alice, { name: ' Marketing site ', domains: [' Example.COM ', '*.example.org', 'example.com.', 'localhost'] });
    expect(created).toEqual({
      id: expect.stringMatching(/^ins_[0-9a-z]{20}$/),
      workspaceId: t.alice.workspaceId,
      name: 'Marketing site',
      domains: ['example.com', '*.example.org', 'localhost'],
      publicKey: expect.stringMatching(/^pk_[A-Za-z0-9_-]{24}$/),
      hidden: false,
      createdByUserId: t.alice.userId,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const other = await createInstallation(platform, t.alice, { name: 'Docs' });
    expect(other.publicKey).not.toBe(created.publicKey);

    expect(await expectStatus(await rest(platform, 'GET', `/analytics/installations/${created.id}`, undefined, t.alice.auth), 200)).toEqual(created);
    const list = await expectStatus(await rest(platform, 'GET', '/analytics/installations', undefined, t.alice.auth), 200);
    expect(list).toMatchObject({ page: 1, limit: 20 });
    expect(list.data.map((i: any) => i.id)).toEqual(expect.arrayContaining([created.id, other.id]));
    expect(list.data.findIndex((i: any) => i.id === other.id)).toBeLessThan(list.data.findIndex((i: any) => i.id === created.id));

    const renamed = await expectStatus(await rest(platform, 'POST', `/analytics/installations/${created.id}`, { name: 'Renamed' }, t.alice.auth), 200);
    expect(renamed).toMatchObject({ name: 'Renamed', domains: created.domains, publicKey: created.publicKey });
    expect(changed).not.toContain(created.id);
    const moved = await expectStatus(await rest(platform, 'POST', `/analytics/installations/${created.id}`, { domains: ['shop.example.net'] }, t.alice.auth), 200);
    expect(moved).toMatchObject({ name: 'Renamed', domains: ['shop.example.net'] });
    // Ingestion hears that the domains changed.
    await eventually(() => changed.includes(created.id), 5000, 'installationChanged');

    const script = await expectStatus(await rest(platform, 'GET', `/analytics/installations/${created.id}/script`, undefined, t.alice.auth), 200);
    expect(script).toEqual({
      installationId: created.id,
      publicKey: created.publicKey,
      scriptUrl: 'https://platform.example.com/v1/analytics/track.js',
      snippet: expect.stringContaining('src="https://platform.example.com/v1/analytics/track.js"'),
    });
    expect(script.snippet).toContain(`data-key="${created.publicKey}"`);
    expect(script.snippet).toContain('data-api="https://platform.example.com/v1/analytics"');
    expect(script.snippet.trim()).toMatch(/^<script[^>]*><\/script>$/);
  });

  it('answers 400 naming the field for bad names and domains', async () => {
    const post = async (body: Record<string, unknown>) => (await expectStatus(await rest(platform, 'POST', '/analytics/installations', { name: 'x', domains: ['example.com'], ...body }, t.alice.auth), 400)).error;
    expect(await post({ name: '  ' })).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'name' } });
    expect(await post({ domains: [] })).toMatchObject({ details: { field: 'domains' } });
    expect(await post({ domains: Array.from({ length: 51 }, (_, i) => `h${i}.example.com`) })).toMatchObject({ details: { field: 'domains' } });
    expect(await post({ domains: ['example.com', 'https://example.org/'] })).toMatchObject({ details: { field: 'domains[1]' } });
    expect(await post({ domains: ['*.com'] })).toMatchObject({ details: { field: 'domains[0]' } });
    expect(await post({ domains: ['a..b.com'] })).toMatchObject({ details: { field: 'domains[0]' } });
    expect(await post({ domains: ['-bad.example.com'] })).toMatchObject({ details: { field: 'domains[0]' } });
    // A bare string is a list of one (GraphQL list coercion); a number is not a host name.
    expect(await post({ domains: ['example.com', 42] })).toMatchObject({ details: { field: 'domains.1' } });
    expect((await expectStatus(await rest(platform, 'POST', '/analytics/installations', { name: 'x' }, t.alice.auth), 400)).error.details).toMatchObject({ field: 'domains' });
    const ins = await createInstallation(platform, t.alice);
    expect((await expectStatus(await rest(platform, 'POST', `/analytics/installations/${ins.id}`, { domains: ['x y'] }, t.alice.auth), 400)).error.details).toEqual({ field: 'domains[0]' });
  });

  it('hides and unhides: hidden installations leave the default list, includeHidden brings them back', async () => {
    const ins = await createInstallation(platform, t.alice, { name: 'Hideable' });
    const hidden = await expectStatus(await rest(platform, 'POST', `/analytics/installations/${ins.id}/hide`, undefined, t.alice.auth), 200);
    expect(hidden).toMatchObject({ id: ins.id, hidden: true });
    const ids = async (query: Record<string, string | boolean | undefined>) => (await expectStatus(await get(platform, '/analytics/installations', query, t.alice), 200)).data.map((i: any) => i.id);
    expect(await ids({})).not.toContain(ins.id);
    expect(await ids({ includeHidden: true })).toContain(ins.id);
    // Still readable by id, and its reports still answer.
    expect((await rest(platform, 'GET', `/analytics/installations/${ins.id}`, undefined, t.alice.auth)).status).toBe(200);
    expect((await get(platform, '/analytics/stats', { installationId: ins.id }, t.alice)).status).toBe(200);
    expect(await expectStatus(await rest(platform, 'POST', `/analytics/installations/${ins.id}/unhide`, undefined, t.alice.auth), 200)).toMatchObject({ hidden: false });
    expect(await ids({})).toContain(ins.id);
  });

  it('selects the workspace by X-Workspace-ID; a viewer reads but may not change', async () => {
    const shared = await sharedWorkspace(platform, t.alice, t.mallory, 'viewer');
    const ins = await createInstallation(platform, { ...t.alice, auth: { ...t.alice.auth, 'x-workspace-id': shared } });
    expect(ins.workspaceId).toBe(shared);
    const inShared = await expectStatus(await rest(platform, 'GET', '/analytics/installations', undefined, { ...t.alice.auth, 'x-workspace-id': shared }), 200);
    expect(inShared.data.map((i: any) => i.id)).toEqual([ins.id]);
    const personal = await expectStatus(await rest(platform, 'GET', '/analytics/installations', undefined, t.alice.auth), 200);
    expect(personal.data.map((i: any) => i.id)).not.toContain(ins.id);

    expect((await rest(platform, 'GET', `/analytics/installations/${ins.id}`, undefined, t.mallory.auth)).status).toBe(200);
    expect((await get(platform, '/analytics/stats', { installationId: ins.id }, t.mallory)).status).toBe(200);
    expect((await rest(platform, 'POST', `/analytics/installations/${ins.id}`, { name: 'mine' }, t.mallory.auth)).status).toBe(403);
    expect((await rest(platform, 'POST', `/analytics/installations/${ins.id}/hide`, undefined, t.mallory.auth)).status).toBe(403);
    expect((await rest(platform, 'DELETE', `/analytics/installations/${ins.id}`, undefined, t.mallory.auth)).status).toBe(403);
    expect((await rest(platform, 'POST', '/analytics/funnels', { installationId: ins.id, name: 'f', steps: FUNNEL_STEPS }, t.mallory.auth)).status).toBe(403);
  });

  it('never shows or lets another workspace touch an installation (404)', async () => {
    const ins = await createInstallation(platform, t.alice, { name: 'Private' });
    const m = t.mallory.auth;
    for (const [method, path, body] of [
      ['GET', `/analytics/installations/${ins.id}`],
      ['POST', `/analytics/installations/${ins.id}`, { name: 'stolen' }],
      ['DELETE', `/analytics/installations/${ins.id}`],
      ['POST', `/analytics/installations/${ins.id}/hide`],
      ['POST', `/analytics/installations/${ins.id}/unhide`],
      ['GET', `/analytics/installations/${ins.id}/script`],
      ['GET', `/analytics/funnels?installationId=${ins.id}`],
      ['POST', '/analytics/funnels', { installationId: ins.id, name: 'f', steps: FUNNEL_STEPS }],
    ] as Array<[string, string, Record<string, unknown>?]>) {
      const answer = await rest(platform, method, path, body, m);
      expect({ method, path, status: answer.status }).toEqual({ method, path, status: 404 });
      expect((await json(answer)).error.code).toBe('NOT_FOUND');
    }
    // Listing alice's workspace by header is 404 too; mallory's own list does not hold it.
    expect((await rest(platform, 'GET', '/analytics/installations', undefined, { ...m, 'x-workspace-id': t.alice.workspaceId })).status).toBe(404);
    const own = await expectStatus(await rest(platform, 'GET', '/analytics/installations?includeHidden=true', undefined, m), 200);
    expect(own.data.map((i: any) => i.id)).not.toContain(ins.id);
    // Unknown and malformed ids are 404 alike.
    expect((await rest(platform, 'GET', '/analytics/installations/ins_doesnotexist', undefined, t.alice.auth)).status).toBe(404);
    expect((await rest(platform, 'GET', '/analytics/installations/wf_123', undefined, t.alice.auth)).status).toBe(404);
    expect((await json(await rest(platform, 'GET', `/analytics/installations/${ins.id}`, undefined, t.alice.auth))).name).toBe('Private');
  });

  it('deletes an installation with its funnels, users, sessions and events, leaving other installations alone', async () => {
    const doomed = await createInstallation(platform, t.alice, { name: 'Doomed' });
    const kept = await createInstallation(platform, t.alice, { name: 'Kept' });
    for (const ins of [doomed, kept]) {
      await insertEvents(t.pg, ins.id, [
        { ts: '2026-02-10T10:00:00Z', visitorId: 1, sessionId: 1 },
        { ts: '2026-03-10T10:00:00Z', visitorId: 1, sessionId: 2, kind: 'identify', userId: 'u1' },
      ]);
      await insertSessions(t.pg, ins.id, [{ sessionId: 1, visitorId: 1, startedAt: '2026-02-10T10:00:00Z', lastSeenAt: '2026-02-10T10:00:00Z', pageviews: 1, events: 1 }]);
      await insertUser(t.pg, ins.id, { userId: 'u1', firstSeenAt: '2026-03-10T10:00:00Z', lastSeenAt: '2026-03-10T10:00:00Z' });
      await expectStatus(await rest(platform, 'POST', '/analytics/funnels', { installationId: ins.id, name: 'f', steps: FUNNEL_STEPS }, t.alice.auth), 201);
    }
    expect(await rowCounts(t.pg, doomed.id)).toEqual({ events: 2, sessions: 1, users: 1, funnels: 1 });

    const deleted = await expectStatus(await rest(platform, 'DELETE', `/analytics/installations/${doomed.id}`, undefined, t.alice.auth), 200);
    expect(deleted).toEqual({ id: doomed.id, deleted: true });
    expect(await rowCounts(t.pg, doomed.id)).toEqual({ events: 0, sessions: 0, users: 0, funnels: 0 });
    expect(await rowCounts(t.pg, kept.id)).toEqual({ events: 2, sessions: 1, users: 1, funnels: 1 });
    await eventually(() => changed.includes(doomed.id), 5000, 'installationChanged');

    expect((await rest(platform, 'GET', `/analytics/installations/${doomed.id}`, undefined, t.alice.auth)).status).toBe(404);
    expect((await rest(platform, 'DELETE', `/analytics/installations/${doomed.id}`, undefined, t.alice.auth)).status).toBe(404);
    expect((await get(platform, '/analytics/stats', { installationId: doomed.id }, t.alice)).status).toBe(404);
  });
});

describe('funnels over REST', () => {
  it('creates (201), reads, lists by installation and by workspace, updates and deletes', async () => {
    const ins = await createInstallation(platform, t.alice, { name: 'Funnel site' });
    const otherIns = await createInstallation(platform, t.alice, { name: 'Funnel site 2' });
    const created = await expectStatus(await rest(platform, 'POST', '/analytics/funnels', { installationId: ins.id, name: 'Signup', steps: FUNNEL_STEPS, windowSeconds: 3600 }, t.alice.auth), 201);
    expect(created).toEqual({
      id: expect.stringMatching(/^fnl_/),
      workspaceId: t.alice.workspaceId,
      installationId: ins.id,
      name: 'Signup',
      steps: [
        { type: 'page', match: '/', label: '/' },
        { type: 'page', match: '/pricing*', label: 'Pricing' },
        { type: 'event', match: 'signup', label: 'signup' },
      ],
      windowSeconds: 3600,
      createdByUserId: t.alice.userId,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const second = await expectStatus(await rest(platform, 'POST', '/analytics/funnels', { installationId: otherIns.id, name: 'Other', steps: FUNNEL_STEPS.slice(0, 2) }, t.alice.auth), 201);
    expect(second.windowSeconds).toBe(86400);

    expect(await expectStatus(await rest(platform, 'GET', `/analytics/funnels/${created.id}`, undefined, t.alice.auth), 200)).toEqual(created);
    const byInstallation = await expectStatus(await get(platform, '/analytics/funnels', { installationId: ins.id }, t.alice), 200);
    expect(byInstallation).toMatchObject({ total: 1, page: 1, limit: 20 });
    expect(byInstallation.data.map((f: any) => f.id)).toEqual([created.id]);
    const byWorkspace = await expectStatus(await get(platform, '/analytics/funnels', {}, t.alice), 200);
    expect(byWorkspace.data.map((f: any) => f.id)).toEqual(expect.arrayContaining([created.id, second.id]));

    const updated = await expectStatus(await rest(platform, 'POST', `/analytics/funnels/${created.id}`, { name: 'Signup v2', windowSeconds: 600 }, t.alice.auth), 200);
    expect(updated).toMatchObject({ name: 'Signup v2', windowSeconds: 600, steps: created.steps });
    const restepped = await expectStatus(await rest(platform, 'POST', `/analytics/funnels/${created.id}`, { steps: [{ type: 'event', match: 'a' }, { type: 'event', match: 'b' }] }, t.alice.auth), 200);
    expect(restepped.steps).toEqual([{ type: 'event', match: 'a', label: 'a' }, { type: 'event', match: 'b', label: 'b' }]);

    expect(await expectStatus(await rest(platform, 'DELETE', `/analytics/funnels/${created.id}`, undefined, t.alice.auth), 200)).toEqual({ id: created.id, deleted: true });
    expect((await rest(platform, 'GET', `/analytics/funnels/${created.id}`, undefined, t.alice.auth)).status).toBe(404);
  });

  it('answers 400 naming the field for bad steps, windows and names', async () => {
    const ins = await createInstallation(platform, t.alice);
    const post = async (body: Record<string, unknown>) =>
      (await expectStatus(await rest(platform, 'POST', '/analytics/funnels', { installationId: ins.id, name: 'f', steps: FUNNEL_STEPS, ...body }, t.alice.auth), 400)).error;
    expect(await post({ steps: FUNNEL_STEPS.slice(0, 1) })).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'steps' } });
    expect(await post({ steps: Array.from({ length: 11 }, (_, i) => ({ type: 'event', match: `e${i}` })) })).toMatchObject({ details: { field: 'steps' } });
    expect(await post({ steps: [FUNNEL_STEPS[0], { type: 'click', match: 'x' }] })).toMatchObject({ details: { field: 'steps[1].type' } });
    expect(await post({ steps: [{ type: 'page', match: 'pricing' }, FUNNEL_STEPS[1]] })).toMatchObject({ details: { field: 'steps[0].match' } });
    expect(await post({ steps: [FUNNEL_STEPS[0], { type: 'event', match: '   ' }] })).toMatchObject({ details: { field: 'steps[1].match' } });
    expect(await post({ steps: [FUNNEL_STEPS[0], { type: 'event' }] })).toMatchObject({ details: { field: expect.stringMatching(/^steps/) } });
    expect(await post({ windowSeconds: 0 })).toMatchObject({ details: { field: 'windowSeconds' } });
    expect(await post({ windowSeconds: 90 * 86400 + 1 })).toMatchObject({ details: { field: 'windowSeconds' } });
    expect(await post({ name: '' })).toMatchObject({ details: { field: 'name' } });
    expect(await post({ installationId: undefined })).toMatchObject({ details: { field: 'installationId' } });
    // Not a 400 but a 404: an installation that is not there.
    expect((await rest(platform, 'POST', '/analytics/funnels', { installationId: 'ins_nope', name: 'f', steps: FUNNEL_STEPS }, t.alice.auth)).status).toBe(404);
  });

  it("hides another workspace's funnels (404) and keeps them out of its lists", async () => {
    const ins = await createInstallation(platform, t.alice);
    const funnel = await expectStatus(await rest(platform, 'POST', '/analytics/funnels', { installationId: ins.id, name: 'Secret', steps: FUNNEL_STEPS }, t.alice.auth), 201);
    for (const [method, path, body] of [
      ['GET', `/analytics/funnels/${funnel.id}`],
      ['POST', `/analytics/funnels/${funnel.id}`, { name: 'mine' }],
      ['DELETE', `/analytics/funnels/${funnel.id}`],
      ['GET', `/analytics/funnels/${funnel.id}/analyze`],
    ] as Array<[string, string, Record<string, unknown>?]>) {
      expect({ method, path, status: (await rest(platform, method, path, body, t.mallory.auth)).status }).toEqual({ method, path, status: 404 });
    }
    const own = await expectStatus(await get(platform, '/analytics/funnels', {}, t.mallory), 200);
    expect(own.data.map((f: any) => f.id)).not.toContain(funnel.id);
    expect((await json(await rest(platform, 'GET', `/analytics/funnels/${funnel.id}`, undefined, t.alice.auth))).name).toBe('Secret');
  });
});

describe('GraphQL', () => {
  it('serves the same fields to GraphQL clients', async () => {
    const ins = await createInstallation(platform, t.alice, { name: 'GQL' });
    const result = await gql(platform, 'query($id: ID!) { analyticsInstallation(id: $id) { id name domains hidden } analyticsInstallationScript(id: $id) { scriptUrl } }', { id: ins.id }, t.alice.auth);
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({
      analyticsInstallation: { id: ins.id, name: 'GQL', domains: ['example.com'], hidden: false },
      analyticsInstallationScript: { scriptUrl: 'https://platform.example.com/v1/analytics/track.js' },
    });
    const bad = await gql(platform, 'mutation { createAnalyticsInstallation(name: "x", domains: ["not a host"]) { id } }', {}, t.alice.auth);
    expect(bad.errors?.[0].extensions).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'domains[0]' } });
  });
});

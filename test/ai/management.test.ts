import { createHash } from 'node:crypto';
import { TOPICS, createPlatformPubSub, type PlatformPubSub } from '../../core/pubsub';
import { openCredential } from '../../subgraphs/ai/model/shared';
import { eventually, gql, rest } from '../helpers';
import { TEST_REDIS_URL } from '../services';
import { GOOD_KEY, expectError, expectNoCredentials, startManagementBench, type ManagementBench } from './management-support';

/*
 * The AI gateway's management API end to end, records and access: REST → gateway → ai subgraph
 * → PostgreSQL. The live upstream test goes to local stand-ins (management-support.ts).
 */

jest.setTimeout(60_000);

let bench: ManagementBench;
let events: PlatformPubSub;
const configChanges: Array<{ workspaceId: string }> = [];

beforeAll(async () => {
  bench = await startManagementBench('aim');
  events = createPlatformPubSub(TEST_REDIS_URL, bench.platform.config.redisPrefix);
  events.on<{ workspaceId: string }>(TOPICS.aiConfigChanged, (event) => configChanges.push(event));
});

afterAll(async () => {
  await events?.close();
  await bench?.stop();
});

describe('discovery', () => {
  it('lists the three vendor protocols, with OAuth where configured', async () => {
    const res = await bench.call(bench.alice, 'GET', '/ai-gateway/providers');
    expect(res.status).toBe(200);
    expect(res.body.map((p: any) => [p.id, p.api, p.sdk, p.oauth])).toEqual([
      ['vendor-a', 'openai', 'openai', true],
      ['vendor-b', 'anthropic', '@anthropic-ai/sdk', false],
      ['vendor-c', 'gemini', '@google/genai', true],
    ]);
    expect(res.body[0]).toMatchObject({ basePath: '/v1/ai-gateway/vendor-a/v1', authHeader: expect.stringContaining('Authorization: Bearer') });
    expect((await rest(bench.platform, 'GET', '/ai-gateway/providers')).status).toBe(401);
  });

  it('lists the platform models without their credentials', async () => {
    const res = await bench.call(bench.alice, 'GET', '/ai-gateway/platform-models');
    expect(res.body).toEqual([{ id: 'pm-small', model: 'small-1', displayName: 'Small One', provider: 'vendor-a' }]);
  });
});

describe('upstreams', () => {
  it('creates, reads, updates and deletes an upstream; the credential only ever shows as a hint', async () => {
    const before = configChanges.length;
    const created = await bench.createUpstream(bench.alice, { models: ['gpt-small'], modelMap: { fast: 'gpt-small' }, weight: 5, timeoutMs: 30_000 });
    expect(created).toEqual({
      id: expect.stringMatching(/^ups_[0-9a-z]{20}$/),
      workspaceId: bench.alice.workspaceId,
      name: 'primary',
      provider: 'vendor-a',
      baseUrl: `${bench.vendor.url}/openai/v1`,
      authKind: 'api_key',
      credentialHint: `…${GOOD_KEY.slice(-4)}`,
      credentialExpiresAt: null,
      models: ['gpt-small'],
      modelMap: { fast: 'gpt-small' },
      weight: 5,
      timeoutMs: 30_000,
      enabled: true,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    await eventually(() => configChanges.slice(before).some((e) => e.workspaceId === bench.alice.workspaceId), 5000, 'ai.config-changed');

    expect((await bench.call(bench.alice, 'GET', `/ai-gateway/upstreams/${created.id}`)).body).toEqual(created);
    const list = await bench.call(bench.alice, 'GET', '/ai-gateway/upstreams?limit=5');
    expect(list.body).toMatchObject({ total: expect.any(Number), page: 1, limit: 5 });
    expect(list.body.data.map((u: any) => u.id)).toContain(created.id);

    const newKey = 'sk-rotated-key-for-management-test-9876';
    bench.credentials.push(newKey);
    const updated = await bench.call(bench.alice, 'PUT', `/ai-gateway/upstreams/${created.id}`, { name: 'renamed', apiKey: newKey, enabled: false, models: [] });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id: created.id, name: 'renamed', credentialHint: '…9876', enabled: false, models: [], weight: 5, createdAt: created.createdAt });

    const { rows } = await bench.pg.query('SELECT * FROM ai.upstreams WHERE id = $1', [created.id]);
    expect(JSON.stringify(rows[0])).not.toContain(newKey);
    expect(openCredential(bench.platform.config.secretsEncryptionKey, created.id, rows[0].credential_ciphertext)).toBe(newKey);
    expect(() => openCredential(bench.platform.config.secretsEncryptionKey, 'ups_someotherid000000000', rows[0].credential_ciphertext)).toThrow();

    expect((await bench.call(bench.alice, 'DELETE', `/ai-gateway/upstreams/${created.id}`)).body).toEqual({ id: created.id, deleted: true });
    expectError(await bench.call(bench.alice, 'GET', `/ai-gateway/upstreams/${created.id}`), 404, 'NOT_FOUND');
    expectError(await bench.call(bench.alice, 'DELETE', `/ai-gateway/upstreams/${created.id}`), 404, 'NOT_FOUND');
  });

  it('takes the workspace from the argument, else X-Workspace-ID, else the personal workspace', async () => {
    const team = await gql(bench.platform, 'mutation { createWorkspace(name: "ai-team") { id } }', {}, bench.alice.auth);
    const teamId = team.data.createWorkspace.id;
    const byHeader = await bench.createUpstream(bench.alice, { name: 'team-by-header' }, { 'x-workspace-id': teamId });
    expect(byHeader.workspaceId).toBe(teamId);
    const byArgument = await bench.createUpstream(bench.alice, { name: 'team-by-arg', workspaceId: teamId });
    expect(byArgument.workspaceId).toBe(teamId);
    const teamList = await bench.call(bench.alice, 'GET', `/ai-gateway/upstreams?workspaceId=${teamId}`);
    expect(teamList.body.data.map((u: any) => u.name).sort()).toEqual(['team-by-arg', 'team-by-header']);
    const personal = await bench.call(bench.alice, 'GET', '/ai-gateway/upstreams');
    expect(personal.body.data.every((u: any) => u.workspaceId === bench.alice.workspaceId)).toBe(true);
  });

  it.each([
    [{ baseUrl: 'ftp://example.test/v1' }, 'baseUrl'],
    [{ baseUrl: 'https://user:secret@example.test/v1' }, 'baseUrl'],
    [{ baseUrl: 'not a url' }, 'baseUrl'],
    [{ name: '   ' }, 'name'],
    [{ name: 'x'.repeat(129) }, 'name'],
    [{ provider: 'vendor-z' }, 'provider'],
    [{ weight: 0 }, 'weight'],
    [{ weight: 1001 }, 'weight'],
    [{ timeoutMs: 999 }, 'timeoutMs'],
    [{ timeoutMs: 600_001 }, 'timeoutMs'],
    [{ models: Array.from({ length: 201 }, (_, i) => `m${i}`) }, 'models'],
    [{ models: [''] }, 'models[0]'],
    [{ modelMap: { fast: 5 } }, 'modelMap'],
    [{ apiKey: '' }, 'apiKey'],
    [{ apiKey: 'x'.repeat(4097) }, 'apiKey'],
    [{ apiKey: undefined }, 'apiKey'],
  ])('refuses %j with 400 naming %s', async (patch, field) => {
    const res = await bench.call(bench.alice, 'POST', '/ai-gateway/upstreams', { name: 'bad', provider: 'vendor-a', baseUrl: 'https://api.example.test/v1', apiKey: GOOD_KEY, ...patch });
    expectError(res, 400, 'VALIDATION_FAILED');
    expect(res.body.error.details.field.startsWith(field)).toBe(true);
  });

  it('refuses an update with nothing to change, or a bad value', async () => {
    const upstream = await bench.createUpstream(bench.alice, { name: 'to-update' });
    expectError(await bench.call(bench.alice, 'PUT', `/ai-gateway/upstreams/${upstream.id}`, {}), 400, 'VALIDATION_FAILED', 'name');
    expectError(await bench.call(bench.alice, 'PUT', `/ai-gateway/upstreams/${upstream.id}`, { weight: -1 }), 400, 'VALIDATION_FAILED', 'weight');
    expectError(await bench.call(bench.alice, 'PUT', `/ai-gateway/upstreams/${upstream.id}`, { baseUrl: 'file:///etc/passwd' }), 400, 'VALIDATION_FAILED', 'baseUrl');
  });
});

describe('testing an upstream live', () => {
  it('answers ok with the models the vendor lists, for each protocol and its headers', async () => {
    const openai = await bench.createUpstream(bench.alice, { name: 'live-openai' });
    const res = await bench.call(bench.alice, 'POST', `/ai-gateway/upstreams/${openai.id}/test`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, status: 200, latencyMs: expect.any(Number), error: null, models: ['gpt-small', 'gpt-large'] });
    expect((await bench.call(bench.alice, 'POST', `/ai-gateway/upstreams/${openai.id}/test`, { model: 'gpt-large' })).body.ok).toBe(true);
    const missing = await bench.call(bench.alice, 'POST', `/ai-gateway/upstreams/${openai.id}/test`, { model: 'gpt-missing' });
    expect(missing.body).toMatchObject({ ok: false, status: 200, error: expect.stringContaining('gpt-missing') });

    const anthropic = await bench.createUpstream(bench.alice, { name: 'live-anthropic', provider: 'vendor-b', baseUrl: `${bench.vendor.url}/anthropic` });
    expect((await bench.call(bench.alice, 'POST', `/ai-gateway/upstreams/${anthropic.id}/test`)).body).toMatchObject({ ok: true, models: ['claude-small'] });
    const gemini = await bench.createUpstream(bench.alice, { name: 'live-gemini', provider: 'vendor-c', baseUrl: `${bench.vendor.url}/gemini` });
    expect((await bench.call(bench.alice, 'POST', `/ai-gateway/upstreams/${gemini.id}/test`)).body).toMatchObject({ ok: true, models: ['gemini-small', 'text-embedding'] });
    expect(bench.vendor.seen.find((r) => r.path === '/anthropic/v1/models')!.headers).toMatchObject({ 'x-api-key': GOOD_KEY, 'anthropic-version': '2023-06-01' });
  });

  it('answers ok: false with the status when the vendor refuses, and when nothing answers', async () => {
    const wrongKey = 'sk-wrong-key-for-management-test-0000';
    bench.credentials.push(wrongKey);
    const refused = await bench.createUpstream(bench.alice, { name: 'refused', apiKey: wrongKey });
    const res = await bench.call(bench.alice, 'POST', `/ai-gateway/upstreams/${refused.id}/test`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: false, status: 401, latencyMs: expect.any(Number), error: expect.stringContaining('Incorrect API key provided'), models: [] });

    const unreachable = await bench.createUpstream(bench.alice, { name: 'unreachable', baseUrl: 'http://127.0.0.1:9/v1' });
    expect((await bench.call(bench.alice, 'POST', `/ai-gateway/upstreams/${unreachable.id}/test`)).body).toMatchObject({ ok: false, status: null, error: expect.any(String), models: [] });

    // A vendor that answers the credential back does not get it into the answer.
    const echo = await bench.createUpstream(bench.alice, { name: 'echo', baseUrl: `${bench.vendor.url}/echo/v1` });
    const echoed = await bench.call(bench.alice, 'POST', `/ai-gateway/upstreams/${echo.id}/test`);
    expect(echoed.body).toMatchObject({ ok: false, status: 500, error: expect.stringContaining('[redacted]') });
    expect(echoed.text).not.toContain(GOOD_KEY);
  });
});

describe('pools and members', () => {
  it('creates a pool with members, adds and removes them, and refuses duplicates (409)', async () => {
    const a = await bench.createUpstream(bench.alice, { name: 'member-a' });
    const b = await bench.createUpstream(bench.alice, { name: 'member-b' });
    const pool = await bench.createPool(bench.alice, { name: 'main', strategy: 'fallback', maxAttempts: 2, storeConversations: true, members: [{ upstreamId: a.id, priority: 1 }, { platformModelId: 'pm-small', weight: 3 }] });
    expect(pool).toMatchObject({ id: expect.stringMatching(/^pool_/), workspaceId: bench.alice.workspaceId, name: 'main', strategy: 'fallback', maxAttempts: 2, storeConversations: true });
    expect(pool.members).toEqual([
      expect.objectContaining({ upstreamId: null, platformModelId: 'pm-small', weight: 3, priority: 0, upstream: null, platformModel: expect.objectContaining({ model: 'small-1' }) }),
      expect.objectContaining({ upstreamId: a.id, platformModelId: null, weight: null, priority: 1, upstream: expect.objectContaining({ id: a.id, credentialHint: a.credentialHint }) }),
    ]);
    expect((await bench.call(bench.alice, 'GET', `/ai-gateway/pools/${pool.id}`)).body).toEqual(pool);
    // Lists name members by id only; the pool itself carries their upstreams.
    const listed = (await bench.call(bench.alice, 'GET', '/ai-gateway/pools')).body.data.find((p: any) => p.id === pool.id);
    expect(listed).toEqual({ ...pool, members: pool.members.map(({ upstream, platformModel, ...ref }: any) => (void upstream, void platformModel, ref)) });

    const added = await bench.call(bench.alice, 'POST', `/ai-gateway/pools/${pool.id}/members`, { upstreamId: b.id, weight: 7 });
    expect(added.status).toBe(201);
    expect(added.body.members.map((m: any) => m.upstreamId ?? m.platformModelId)).toEqual(['pm-small', b.id, a.id]);
    expectError(await bench.call(bench.alice, 'POST', `/ai-gateway/pools/${pool.id}/members`, { upstreamId: b.id }), 409, 'CONFLICT');
    expectError(await bench.call(bench.alice, 'POST', `/ai-gateway/pools/${pool.id}/members`, { platformModelId: 'pm-small' }), 409, 'CONFLICT');
    expectError(await bench.call(bench.alice, 'POST', `/ai-gateway/pools/${pool.id}/members`, { platformModelId: 'pm-unknown' }), 404, 'NOT_FOUND');
    expectError(await bench.call(bench.alice, 'POST', `/ai-gateway/pools/${pool.id}/members`, {}), 400, 'VALIDATION_FAILED', 'upstreamId');
    expectError(await bench.call(bench.alice, 'POST', `/ai-gateway/pools/${pool.id}/members`, { upstreamId: a.id, platformModelId: 'pm-small' }), 400, 'VALIDATION_FAILED');

    const removed = await bench.call(bench.alice, 'DELETE', `/ai-gateway/pools/${pool.id}/members/${a.id}`);
    expect(removed.body.members.map((m: any) => m.upstreamId ?? m.platformModelId)).toEqual(['pm-small', b.id]);
    expectError(await bench.call(bench.alice, 'DELETE', `/ai-gateway/pools/${pool.id}/members/${a.id}`), 404, 'NOT_FOUND');
    const noPlatform = await bench.call(bench.alice, 'DELETE', `/ai-gateway/pools/${pool.id}/platform-members/pm-small`);
    expect(noPlatform.body.members.map((m: any) => m.upstreamId)).toEqual([b.id]);

    // Deleting an upstream takes it out of every pool.
    await bench.call(bench.alice, 'DELETE', `/ai-gateway/upstreams/${b.id}`);
    expect((await bench.call(bench.alice, 'GET', `/ai-gateway/pools/${pool.id}`)).body.members).toEqual([]);
  });

  it.each([
    [{ strategy: 'random' }, 'strategy'],
    [{ maxAttempts: 11 }, 'maxAttempts'],
    [{ name: '' }, 'name'],
    [{ members: [{}] }, 'members[0].upstreamId'],
    [{ members: [{ platformModelId: 'pm-small' }, { platformModelId: 'pm-small' }] }, 'members[1]'],
    [{ members: [{ platformModelId: 'pm-small', weight: 0 }] }, 'members[0].weight'],
  ])('refuses a pool with %j (400 naming %s)', async (patch, field) => {
    expectError(await bench.call(bench.alice, 'POST', '/ai-gateway/pools', { name: 'bad', ...patch }), 400, 'VALIDATION_FAILED', field);
  });
});

describe('gateway keys', () => {
  it('shows the key once, stores only its hash, and refuses to delete a pool in use (409) until the key is revoked', async () => {
    const pool = await bench.createPool(bench.alice, { name: 'keyed', members: [{ platformModelId: 'pm-small' }] });
    const created = await bench.call(bench.alice, 'POST', '/ai-gateway/keys', { name: 'ci', poolId: pool.id, requestsPerMinute: 60, tokensPerMinute: 10_000, monthlyBudgetUsd: 12.5, expiresAt: '2099-01-01T00:00:00.000Z' });
    expect(created.status).toBe(201);
    const key: string = created.body.key;
    expect(key).toMatch(/^wcp_ai_[A-Za-z0-9_-]{43}$/);
    expect(created.body).toMatchObject({
      id: expect.stringMatching(/^gk_/),
      workspaceId: bench.alice.workspaceId,
      name: 'ci',
      poolId: pool.id,
      keyPrefix: key.slice(0, 12),
      requestsPerMinute: 60,
      tokensPerMinute: 10_000,
      monthlyBudgetUsd: 12.5,
      storeConversations: false,
      expiresAt: '2099-01-01T00:00:00.000Z',
      revokedAt: null,
      lastUsedAt: null,
    });
    const { rows } = await bench.pg.query('SELECT key_hash, key_prefix FROM ai.gateway_keys WHERE id = $1', [created.body.id]);
    expect(rows[0]).toEqual({ key_hash: createHash('sha256').update(key).digest('hex'), key_prefix: key.slice(0, 12) });

    const listed = await bench.call(bench.alice, 'GET', '/ai-gateway/keys');
    const entry = listed.body.data.find((k: any) => k.id === created.body.id);
    expect(entry).not.toHaveProperty('key');
    expect(listed.text).not.toContain(key);

    const inUse = await bench.call(bench.alice, 'DELETE', `/ai-gateway/pools/${pool.id}`);
    expectError(inUse, 409, 'CONFLICT');
    expect(inUse.body.error.message).toContain('1 gateway key');
    expect(inUse.body.error.details.activeKeys).toBe(1);

    expect((await bench.call(bench.alice, 'DELETE', `/ai-gateway/keys/${created.body.id}`)).body).toEqual({ id: created.body.id, deleted: true });
    const revoked = (await bench.call(bench.alice, 'GET', '/ai-gateway/keys')).body.data.find((k: any) => k.id === created.body.id);
    expect(revoked.revokedAt).toEqual(expect.any(String));
    expect((await bench.call(bench.alice, 'DELETE', `/ai-gateway/keys/${created.body.id}`)).body.deleted).toBe(true);
    expect((await bench.call(bench.alice, 'GET', '/ai-gateway/keys')).body.data.find((k: any) => k.id === created.body.id).revokedAt).toBe(revoked.revokedAt);

    expect((await bench.call(bench.alice, 'DELETE', `/ai-gateway/pools/${pool.id}`)).body).toEqual({ id: pool.id, deleted: true });
    expect((await bench.pg.query('SELECT 1 FROM ai.gateway_keys WHERE pool_id = $1', [pool.id])).rowCount).toBe(0);

    // The key appeared in exactly one answer: its creation.
    expect(bench.answers.filter((text) => text.includes(key))).toHaveLength(1);
  });

  it.each([
    [{ poolId: undefined }, 'poolId'],
    [{ name: '' }, 'name'],
    [{ requestsPerMinute: 0 }, 'requestsPerMinute'],
    [{ monthlyBudgetUsd: -1 }, 'monthlyBudgetUsd'],
    [{ expiresAt: 'tomorrow-ish' }, 'expiresAt'],
    [{ expiresAt: '2001-01-01T00:00:00Z' }, 'expiresAt'],
  ])('refuses a key with %j (400 naming %s)', async (patch, field) => {
    const pool = await bench.createPool(bench.alice, { name: 'for-bad-keys' });
    expectError(await bench.call(bench.alice, 'POST', '/ai-gateway/keys', { name: 'bad', poolId: pool.id, ...patch }), 400, 'VALIDATION_FAILED', field);
  });
});

describe('access', () => {
  it("answers 404 to another workspace's member for upstreams, pools, keys and conversations, and changes nothing", async () => {
    const upstream = await bench.createUpstream(bench.alice, { name: 'private' });
    const pool = await bench.createPool(bench.alice, { name: 'private', members: [{ upstreamId: upstream.id }] });
    const key = (await bench.call(bench.alice, 'POST', '/ai-gateway/keys', { name: 'private', poolId: pool.id })).body;
    await bench.pg.query(`INSERT INTO ai.conversations (request_id, workspace_id, model, request_body, status) VALUES ('req_secret_c1', $1, 'gpt-small', '{}', 200)`, [bench.alice.workspaceId]);
    const malloryPool = await bench.createPool(bench.mallory, { name: 'mallory' });

    const attempts = [
      await bench.call(bench.mallory, 'GET', `/ai-gateway/upstreams/${upstream.id}`),
      await bench.call(bench.mallory, 'PUT', `/ai-gateway/upstreams/${upstream.id}`, { name: 'stolen' }),
      await bench.call(bench.mallory, 'DELETE', `/ai-gateway/upstreams/${upstream.id}`),
      await bench.call(bench.mallory, 'POST', `/ai-gateway/upstreams/${upstream.id}/test`),
      await bench.call(bench.mallory, 'GET', `/ai-gateway/upstreams/${upstream.id}/usage`),
      await bench.call(bench.mallory, 'GET', `/ai-gateway/upstreams?workspaceId=${bench.alice.workspaceId}`),
      await bench.call(bench.mallory, 'POST', '/ai-gateway/upstreams', { workspaceId: bench.alice.workspaceId, name: 'x', provider: 'vendor-a', baseUrl: 'https://x.test/v1', apiKey: 'k' }),
      await bench.call(bench.mallory, 'GET', `/ai-gateway/pools/${pool.id}`),
      await bench.call(bench.mallory, 'DELETE', `/ai-gateway/pools/${pool.id}`),
      await bench.call(bench.mallory, 'POST', `/ai-gateway/pools/${pool.id}/members`, { platformModelId: 'pm-small' }),
      await bench.call(bench.mallory, 'DELETE', `/ai-gateway/pools/${pool.id}/members/${upstream.id}`),
      // Her upstream into his pool, and his key onto her pool.
      await bench.call(bench.mallory, 'POST', `/ai-gateway/pools/${malloryPool.id}/members`, { upstreamId: upstream.id }),
      await bench.call(bench.mallory, 'POST', '/ai-gateway/keys', { name: 'x', poolId: pool.id }),
      await bench.call(bench.mallory, 'DELETE', `/ai-gateway/keys/${key.id}`),
      await bench.call(bench.mallory, 'GET', `/ai-gateway/keys?workspaceId=${bench.alice.workspaceId}`),
      await bench.call(bench.mallory, 'GET', '/ai-gateway/conversations/req_secret_c1'),
      await bench.call(bench.mallory, 'GET', `/ai-gateway/usage?workspaceId=${bench.alice.workspaceId}`),
      await bench.call(bench.mallory, 'GET', `/ai-gateway/usage/realtime?workspaceId=${bench.alice.workspaceId}`),
      await bench.call(bench.mallory, 'POST', '/ai-gateway/playground/chat', { poolId: pool.id, model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
    ];
    for (const res of attempts) {
      expectError(res, 404, 'NOT_FOUND');
      expect(res.text).not.toContain('private');
    }
    expect((await bench.call(bench.alice, 'GET', `/ai-gateway/upstreams/${upstream.id}`)).body.name).toBe('private');
    expect((await bench.call(bench.alice, 'GET', `/ai-gateway/pools/${pool.id}`)).body.members).toHaveLength(1);
    expect((await bench.call(bench.alice, 'GET', '/ai-gateway/keys')).body.data.find((k: any) => k.id === key.id).revokedAt).toBeNull();
  });

  it('lets a bench.viewer read but not change (403)', async () => {
    const headers = { 'x-workspace-id': bench.alice.workspaceId };
    const upstream = await bench.createUpstream(bench.alice, { name: 'viewed' });
    expect((await bench.call(bench.viewer, 'GET', `/ai-gateway/upstreams/${upstream.id}`)).status).toBe(200);
    expect((await bench.call(bench.viewer, 'GET', '/ai-gateway/upstreams', undefined, headers)).status).toBe(200);
    expect((await bench.call(bench.viewer, 'GET', '/ai-gateway/usage', undefined, headers)).status).toBe(200);
    expectError(await bench.call(bench.viewer, 'POST', '/ai-gateway/upstreams', { name: 'v', provider: 'vendor-a', baseUrl: 'https://x.test/v1', apiKey: 'k' }, headers), 403, 'FORBIDDEN');
    expectError(await bench.call(bench.viewer, 'PUT', `/ai-gateway/upstreams/${upstream.id}`, { name: 'v' }), 403, 'FORBIDDEN');
    expectError(await bench.call(bench.viewer, 'POST', `/ai-gateway/upstreams/${upstream.id}/test`), 403, 'FORBIDDEN');
    expectError(await bench.call(bench.viewer, 'POST', '/ai-gateway/pools', { name: 'v' }, headers), 403, 'FORBIDDEN');
  });
});

describe('credentials', () => {
  it('never appeared in any answer of this file', () => expectNoCredentials(bench, 100));
});

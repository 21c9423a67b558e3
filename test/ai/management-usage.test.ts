import { Redis } from 'ioredis';
import { aiRedisKeys, realtimeBucket } from '../../subgraphs/ai/model/shared';
import { startStandIn } from '../../subgraphs/ai/testing/stand-ins';
import { TEST_REDIS_URL, eventually } from '../services';
import { expectError, expectNoCredentials, startManagementBench, type ManagementBench } from './management-support';

/*
 * The AI gateway's management API end to end, usage, conversations and the playground: usage
 * rows and conversations are inserted as the proxy would write them, live counters written to
 * Redis as the proxy would count them; the REST answers must add them up.
 */

jest.setTimeout(60_000);

let bench: ManagementBench;
let redis: Redis;

beforeAll(async () => {
  bench = await startManagementBench('aiu');
  redis = new Redis(TEST_REDIS_URL);
});

afterAll(async () => {
  redis?.disconnect();
  await bench?.stop();
});

describe('usage', () => {
  let upstreamId: string;

  beforeAll(async () => {
    upstreamId = (await bench.createUpstream(bench.alice, { name: 'metered' })).id;
    const row = (requestId: string, workspaceId: string, at: string, o: { model: string; key: string | null; upstream: string | null; platform?: string; pool: string; input: number; output: number; cached: number; cost: string; latency: number; ttfb: number | null; status: number }) =>
      bench.pg.query(
        `INSERT INTO ai.usage (request_id, workspace_id, key_id, pool_id, upstream_id, platform_model_id, client_api, upstream_api, operation, model, input_tokens, output_tokens, cached_tokens, cost_usd, latency_ms, ttfb_ms, status, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, 'openai', 'openai', 'chat', $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
        [requestId, workspaceId, o.key, o.pool, o.upstream, o.platform ?? null, o.model, o.input, o.output, o.cached, o.cost, o.latency, o.ttfb, o.status, at],
      );
    await row('req_u1', bench.alice.workspaceId, '2025-03-01T10:00:00Z', { model: 'm-a', key: 'gk_one', upstream: upstreamId, pool: 'pool_one', input: 100, output: 10, cached: 5, cost: '0.01', latency: 100, ttfb: 50, status: 200 });
    await row('req_u2', bench.alice.workspaceId, '2025-03-01T23:59:59Z', { model: 'm-a', key: 'gk_one', upstream: upstreamId, pool: 'pool_one', input: 200, output: 20, cached: 0, cost: '0.02', latency: 300, ttfb: null, status: 502 });
    await row('req_u3', bench.alice.workspaceId, '2025-03-02T08:00:00Z', { model: 'm-b', key: 'gk_two', upstream: null, platform: 'pm-small', pool: 'pool_one', input: 50, output: 5, cached: 0, cost: '0.005', latency: 200, ttfb: 100, status: 200 });
    await row('req_u4', bench.alice.workspaceId, '2025-03-05T00:00:00Z', { model: 'm-a', key: 'gk_one', upstream: upstreamId, pool: 'pool_one', input: 999, output: 999, cached: 0, cost: '9', latency: 1, ttfb: 1, status: 200 });
    await row('req_u5', bench.mallory.workspaceId, '2025-03-01T12:00:00Z', { model: 'm-a', key: 'gk_m', upstream: null, pool: 'pool_m', input: 7, output: 7, cached: 0, cost: '1', latency: 1, ttfb: 1, status: 200 });
  });

  const window = 'from=2025-03-01T00:00:00Z&to=2025-03-04T00:00:00Z';

  it('sums the window in SQL, by day by default', async () => {
    const res = await bench.call(bench.alice, 'GET', `/ai-gateway/usage?${window}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ from: '2025-03-01T00:00:00.000Z', to: '2025-03-04T00:00:00.000Z', groupBy: 'day' });
    expect(res.body.totals).toEqual({ requests: 3, errors: 1, inputTokens: 350, outputTokens: 35, cachedTokens: 5, costUsd: expect.closeTo(0.035, 10), avgLatencyMs: 200, avgTtfbMs: 75 });
    expect(res.body.groups).toEqual([
      { key: '2025-03-01', requests: 2, errors: 1, inputTokens: 300, outputTokens: 30, cachedTokens: 5, costUsd: expect.closeTo(0.03, 10), avgLatencyMs: 200, avgTtfbMs: 50 },
      { key: '2025-03-02', requests: 1, errors: 0, inputTokens: 50, outputTokens: 5, cachedTokens: 0, costUsd: expect.closeTo(0.005, 10), avgLatencyMs: 200, avgTtfbMs: 100 },
    ]);
  });

  it('groups by model, key, upstream and pool, filters, and answers totals alone for none', async () => {
    const keys = async (query: string) => (await bench.call(bench.alice, 'GET', `/ai-gateway/usage?${window}&${query}`)).body.groups.map((g: any) => [g.key, g.requests]);
    expect(await keys('groupBy=model')).toEqual([['m-a', 2], ['m-b', 1]]);
    expect(await keys('groupBy=key')).toEqual([['gk_one', 2], ['gk_two', 1]]);
    expect(await keys('groupBy=upstream')).toEqual([[upstreamId, 2], ['pm-small', 1]]);
    expect(await keys('groupBy=pool')).toEqual([['pool_one', 3]]);
    expect(await keys('groupBy=model&keyId=gk_two')).toEqual([['m-b', 1]]);
    expect(await keys(`groupBy=day&upstreamId=${upstreamId}&model=m-a`)).toEqual([['2025-03-01', 2]]);
    const none = await bench.call(bench.alice, 'GET', `/ai-gateway/usage?${window}&groupBy=none`);
    expect(none.body).toMatchObject({ groupBy: 'none', groups: [], totals: { requests: 3 } });
    const empty = await bench.call(bench.alice, 'GET', '/ai-gateway/usage?from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z&groupBy=model');
    expect(empty.body.totals).toEqual({ requests: 0, errors: 0, inputTokens: 0, outputTokens: 0, cachedTokens: 0, costUsd: 0, avgLatencyMs: null, avgTtfbMs: null });
    expect(empty.body.groups).toEqual([]);
  });

  it("answers an upstream's usage by day", async () => {
    const res = await bench.call(bench.alice, 'GET', `/ai-gateway/upstreams/${upstreamId}/usage?from=2025-03-01T00:00:00Z&to=2025-03-06T00:00:00Z`);
    expect(res.body.groups.map((g: any) => [g.key, g.requests, g.inputTokens])).toEqual([['2025-03-01', 2, 300], ['2025-03-05', 1, 999]]);
    expect(res.body.totals.requests).toBe(3);
  });

  it.each([
    ['groupBy=hour', 'groupBy'],
    ['from=2025-03-02T00:00:00Z&to=2025-03-01T00:00:00Z', 'from'],
    ['from=2023-01-01T00:00:00Z&to=2025-01-01T00:00:00Z', 'from'],
    ['to=yesterday', 'to'],
  ])('refuses %s (400 naming %s)', async (query, field) => {
    expectError(await bench.call(bench.alice, 'GET', `/ai-gateway/usage?${query}`), 400, 'VALIDATION_FAILED', field);
  });

  it('sums the last six 10-second buckets the proxy counts in Redis', async () => {
    const keys = aiRedisKeys(bench.platform.config.redisPrefix);
    const now = realtimeBucket();
    const write = async (bucket: number, fields: Record<string, number>) => {
      for (const [field, n] of Object.entries(fields)) await redis.hincrby(keys.realtime(bench.alice.workspaceId, bucket), field, n);
      await redis.expire(keys.realtime(bench.alice.workspaceId, bucket), 180);
    };
    await write(now, { requests: 3, errors: 1, inputTokens: 300, outputTokens: 30, cachedTokens: 10, costMicroUsd: 1_500_000 });
    await write(now - 2, { requests: 2, inputTokens: 20, outputTokens: 2, costMicroUsd: 250_000 });
    await write(now - 8, { requests: 100, inputTokens: 10_000 }); // older than a minute
    await write(now, { requests: 1 }); // HINCRBY adds up
    const res = await bench.call(bench.alice, 'GET', '/ai-gateway/usage/realtime');
    expect(res.body).toEqual({ windowSeconds: 60, requests: 6, errors: 1, inputTokens: 320, outputTokens: 32, cachedTokens: 10, costUsd: 1.75, at: expect.any(String) });
    expect((await bench.call(bench.mallory, 'GET', '/ai-gateway/usage/realtime')).body.requests).toBe(0);
  });
});

describe('conversations', () => {
  it('lists newest first without bodies, and answers one with its bodies and usage', async () => {
    const insert = (id: string, workspaceId: string, keyId: string | null, at: string) =>
      bench.pg.query(
        `INSERT INTO ai.conversations (request_id, workspace_id, key_id, pool_id, model, request_body, response_body, status, created_at) VALUES ($1, $2, $3, 'pool_c', 'gpt-small', $4, $5, 200, $6)`,
        [id, workspaceId, keyId, JSON.stringify({ messages: [{ role: 'user', content: `question ${id}` }] }), JSON.stringify({ choices: [{ message: { content: `answer ${id}` } }] }), at],
      );
    await insert('req_c1', bench.alice.workspaceId, 'gk_c1', '2025-04-01T10:00:00Z');
    await insert('req_c2', bench.alice.workspaceId, 'gk_c2', '2025-04-01T11:00:00Z');
    await insert('req_c3', bench.alice.workspaceId, 'gk_c1', '2025-04-01T12:00:00Z');
    await insert('req_cm', bench.mallory.workspaceId, 'gk_c1', '2025-04-01T13:00:00Z');
    await bench.pg.query(
      `INSERT INTO ai.usage (request_id, workspace_id, key_id, upstream_id, client_api, operation, model, input_tokens, output_tokens, cached_tokens, cost_usd, latency_ms, ttfb_ms, status) VALUES ('req_c3', $1, 'gk_c1', 'ups_c', 'openai', 'chat', 'gpt-small', 12, 34, 2, 0.0042, 321, 45, 200)`,
      [bench.alice.workspaceId],
    );

    const list = await bench.call(bench.alice, 'GET', '/ai-gateway/conversations?keyId=gk_c1');
    expect(list.body.total).toBe(2);
    expect(list.body.data).toEqual([
      { requestId: 'req_c3', workspaceId: bench.alice.workspaceId, keyId: 'gk_c1', poolId: 'pool_c', model: 'gpt-small', status: 200, createdAt: '2025-04-01T12:00:00.000Z' },
      { requestId: 'req_c1', workspaceId: bench.alice.workspaceId, keyId: 'gk_c1', poolId: 'pool_c', model: 'gpt-small', status: 200, createdAt: '2025-04-01T10:00:00.000Z' },
    ]);
    expect(list.text).not.toContain('question');
    const second = await bench.call(bench.alice, 'GET', '/ai-gateway/conversations?keyId=gk_c1&limit=1&page=2');
    expect(second.body).toMatchObject({ total: 2, page: 2, limit: 1, data: [expect.objectContaining({ requestId: 'req_c1' })] });

    const one = await bench.call(bench.alice, 'GET', '/ai-gateway/conversations/req_c3');
    expect(one.body).toMatchObject({
      requestId: 'req_c3',
      requestBody: { messages: [{ role: 'user', content: 'question req_c3' }] },
      responseBody: { choices: [{ message: { content: 'answer req_c3' } }] },
      upstreamId: 'ups_c',
      inputTokens: 12,
      outputTokens: 34,
      cachedTokens: 2,
      costUsd: 0.0042,
      latencyMs: 321,
      ttfbMs: 45,
    });
    expect((await bench.call(bench.alice, 'GET', '/ai-gateway/conversations/req_c1')).body).toMatchObject({ requestId: 'req_c1', inputTokens: null, costUsd: null });
    expectError(await bench.call(bench.alice, 'GET', '/ai-gateway/conversations/req_cm'), 404, 'NOT_FOUND');
    expectError(await bench.call(bench.alice, 'GET', '/ai-gateway/conversations/req_none'), 404, 'NOT_FOUND');
  });
});

describe('playground', () => {
  it('chats and embeds through the proxy engine, against a stand-in upstream, and records usage', async () => {
    const standIn = await startStandIn('openai');
    bench.credentials.push(standIn.apiKey);
    try {
      const upstream = await bench.createUpstream(bench.alice, { name: 'stand-in', baseUrl: standIn.baseUrl, apiKey: standIn.apiKey });
      const chat = await bench.call(bench.alice, 'POST', '/ai-gateway/playground/chat', { upstreamId: upstream.id, model: 'gpt-4o-mini', system: 'You are terse.', messages: [{ role: 'user', content: 'hello there' }] });
      expect(chat.status).toBe(200);
      expect(chat.body).toMatchObject({ model: 'gpt-4o-mini', text: 'echo: hello there', finishReason: 'stop', usage: { inputTokens: 11, outputTokens: 3, cachedTokens: 0 }, upstreamId: upstream.id });
      const embed = await bench.call(bench.alice, 'POST', '/ai-gateway/playground/embeddings', { upstreamId: upstream.id, model: 'text-embedding-3-small', input: ['one', 'two'] });
      expect(embed.status).toBe(200);
      expect(embed.body.vectors).toHaveLength(2);
      expect(embed.body.vectors[0]).toHaveLength(8);
      // Usage rows are written in batches (about every 100 ms).
      const recorded = await eventually(async () => {
        const { rows } = await bench.pg.query('SELECT operation, input_tokens, output_tokens, status, key_id FROM ai.usage WHERE request_id = $1', [chat.body.requestId]);
        return rows.length ? rows : undefined;
      }, 5000, 'the playground usage row');
      expect(recorded).toEqual([{ operation: 'chat', input_tokens: 11, output_tokens: 3, status: 200, key_id: null }]);
    } finally {
      await standIn.close();
    }
  });

  it('checks its target before calling the engine', async () => {
    const upstream = await bench.createUpstream(bench.alice, { name: 'playground' });
    const chat = { model: 'gpt-small', messages: [{ role: 'user', content: 'hello' }] };
    expectError(await bench.call(bench.alice, 'POST', '/ai-gateway/playground/chat', chat), 400, 'VALIDATION_FAILED', 'poolId');
    expectError(await bench.call(bench.alice, 'POST', '/ai-gateway/playground/chat', { ...chat, upstreamId: upstream.id, poolId: 'pool_x' }), 400, 'VALIDATION_FAILED');
    expectError(await bench.call(bench.alice, 'POST', '/ai-gateway/playground/chat', { ...chat, upstreamId: upstream.id, messages: [{ role: 'robot', content: 'x' }] }), 400, 'VALIDATION_FAILED', 'messages[0].role');
    expectError(await bench.call(bench.alice, 'POST', '/ai-gateway/playground/embeddings', { upstreamId: upstream.id, model: 'e', input: [] }), 400, 'VALIDATION_FAILED', 'input');
    expectError(await bench.call(bench.mallory, 'POST', '/ai-gateway/playground/chat', { ...chat, upstreamId: upstream.id }), 404, 'NOT_FOUND');
  });
});

describe('credentials', () => {
  it('never appeared in any answer of this file', () => expectNoCredentials(bench, 20));
});

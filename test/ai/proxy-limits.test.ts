import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { aiTokenMinute, usageKeys } from '../../core/rate-limits';
import { GatewayKeyEntity } from '../../subgraphs/ai/model/entities';
import { aiRedisKeys, realtimeBucket } from '../../subgraphs/ai/model/shared';
import { startStandIn, type StandIn } from '../../subgraphs/ai/testing/stand-ins';
import { startProxyBench, until, type ProxyBench } from './proxy-fixture';

/** Key limits (requests, tokens, monthly budget), key validity, workspace isolation and live counters. */
let bench: ProxyBench;
let oa: StandIn;
let an: StandIn;

beforeAll(async () => {
  [bench, oa, an] = await Promise.all([startProxyBench(), startStandIn('openai'), startStandIn('anthropic')]);
});

afterAll(async () => {
  await Promise.all([bench?.stop(), oa?.close(), an?.close()]);
});

async function keyFor(ws: string, standIn: StandIn, options: Parameters<ProxyBench['key']>[2] = {}) {
  return bench.key(ws, await bench.pool(ws, 'fallback', [{ upstreamId: await bench.upstream(ws, standIn) }]), options);
}

const ask = (client: OpenAI, model = 'gpt-4o-mini') => client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hello' }] });

describe('key limits', () => {
  it('requests per minute → 429 RateLimitError with retry-after, recorded', async () => {
    const ws = bench.workspace();
    const { key } = await keyFor(ws, oa, { requestsPerMinute: 1 });
    const client = bench.openai(key);
    await ask(client);
    const err = await ask(client).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    const retryAfter = Number((err as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await bench.lastRow()).toMatchObject({ status: 429, attempts: 0, upstream_id: null });
  });

  it('tokens per minute: counted after each request, then 429', async () => {
    const ws = bench.workspace();
    const { key, id } = await keyFor(ws, oa, { tokensPerMinute: 6 });
    const client = bench.openai(key);
    await ask(client); // 5 + 3 tokens
    await bench.usage({ workspaceId: ws }); // flushes the counters
    expect(Number(await bench.redis.get(aiRedisKeys(bench.config.redisPrefix).keyTokens(id, Math.floor(Date.now() / 60_000))))).toBe(8);
    await expect(ask(client)).rejects.toBeInstanceOf(OpenAI.RateLimitError);
  });

  it('monthly budget → 402 (openai insufficient_quota, anthropic billing_error)', async () => {
    const ws = bench.workspace();
    // One request costs $0.0000425 with gpt-4o (5 in, 3 out): the fourth is over a $0.0001 budget.
    const { key } = await keyFor(ws, oa, { monthlyBudgetUsd: '0.0001' });
    const client = bench.openai(key);
    for (let i = 0; i < 3; i++) {
      await ask(client, 'gpt-4o');
      await bench.usage({ workspaceId: ws }); // flushes the spend counter
    }
    const err = (await ask(client, 'gpt-4o').catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.status).toBe(402);
    expect(err.type).toBe('insufficient_quota');

    // Spend already in ai.usage this month (Redis has no counter yet): the counter is seeded from it.
    const ws2 = bench.workspace();
    const seeded = await keyFor(ws2, an, { monthlyBudgetUsd: '1.0000' });
    await bench.dataSource.query(
      `INSERT INTO "ai"."usage" (request_id, workspace_id, key_id, client_api, operation, model, cost_usd, latency_ms, status) VALUES ($1, $2, $3, 'anthropic', 'chat', 'm', 1.5, 1, 200)`,
      [`seed_${seeded.id}`, ws2, seeded.id],
    );
    const calls = an.requests.length;
    const refused = await bench
      .anthropic(seeded.key)
      .messages.create({ model: 'claude-haiku-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.APIError);
    expect((refused as InstanceType<typeof Anthropic.APIError>).status).toBe(402);
    expect(an.requests.length).toBe(calls);
  });

  it('revoked, expired and unknown keys → 401 AuthenticationError (no row, no upstream call)', async () => {
    const ws = bench.workspace();
    const revoked = await keyFor(ws, oa, { revokedAt: new Date() });
    const expired = await keyFor(ws, oa, { expiresAt: new Date(Date.now() - 1000) });
    const before = oa.requests.length;
    for (const key of [revoked.key, expired.key, 'wcp_ai_unknown', 'sk-not-ours']) {
      await expect(ask(bench.openai(key))).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    }
    expect(oa.requests.length).toBe(before);
    expect(await bench.usage({ workspaceId: ws })).toEqual([]);
  });

  it('last_used_at is written after use (off the hot path)', async () => {
    const ws = bench.workspace();
    const { key, id } = await keyFor(ws, oa);
    await ask(bench.openai(key));
    await bench.usage({ workspaceId: ws });
    await until(async () => (await bench.dataSource.getRepository(GatewayKeyEntity).findOneByOrFail({ id })).lastUsedAt !== null, 'last_used_at');
  });
});

describe('workspace isolation', () => {
  it('a key only reaches its own pool; a member row pointing at another workspace’s upstream is never used', async () => {
    const wsA = bench.workspace();
    const wsB = bench.workspace();
    const upstreamA = await bench.upstream(wsA, an, { models: ['claude-haiku-4-5'] });
    await bench.key(wsA, await bench.pool(wsA, 'fallback', [{ upstreamId: upstreamA }]));
    const ownB = await bench.upstream(wsB, oa, { models: ['gpt-4o-mini'] });
    const keyB = await bench.key(wsB, await bench.pool(wsB, 'fallback', [{ upstreamId: ownB }]));
    const before = an.requests.length;
    const err = await bench
      .anthropic(keyB.key)
      .messages.create({ model: 'claude-haiku-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.NotFoundError);

    // Defence in depth: B's pool lists A's upstream (a row the API would never write).
    const crossPool = await bench.pool(wsB, 'fallback', [{ upstreamId: upstreamA }]);
    const crossKey = await bench.key(wsB, crossPool);
    await expect(
      bench.anthropic(crossKey.key).messages.create({ model: 'claude-haiku-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    const models = await bench.anthropic(crossKey.key).models.list();
    expect(models.data).toEqual([]);
    expect(an.requests.length).toBe(before);
    const rows = await bench.usage({ workspaceId: wsB });
    expect(rows.every((row) => row.upstream_id !== upstreamA)).toBe(true);
  });
});

describe('live counters', () => {
  it('the realtime bucket and the billing AI-token counter follow each request', async () => {
    const ws = bench.workspace();
    const { key } = await keyFor(ws, oa);
    const bucket = realtimeBucket();
    const minute = aiTokenMinute();
    await ask(bench.openai(key));
    await ask(bench.openai(key));
    await bench.usage({ workspaceId: ws });
    const hash = await bench.redis.hgetall(aiRedisKeys(bench.config.redisPrefix).realtime(ws, bucket));
    if (realtimeBucket() === bucket) {
      expect(hash).toMatchObject({ requests: '2', inputTokens: '10', outputTokens: '6' });
      expect(Number(hash.costMicroUsd)).toBeGreaterThan(0);
      expect(await bench.redis.ttl(aiRedisKeys(bench.config.redisPrefix).realtime(ws, bucket))).toBeGreaterThan(100);
    }
    if (aiTokenMinute() === minute) expect(Number(await bench.redis.get(usageKeys(bench.config.redisPrefix, ws).aiTokens(minute)))).toBe(16);
  });
});

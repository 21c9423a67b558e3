import { startStandIn, type StandIn } from '../../subgraphs/ai/testing/stand-ins';
import { startProxyBench, type ProxyBench } from './proxy-fixture';

/** Pool strategies, conversations, metering events and the playground engine. */
let bench: ProxyBench;
const standIns: StandIn[] = [];

async function standIn(api: 'openai' | 'anthropic' | 'gemini', behavior: StandIn['behavior'] = {}): Promise<StandIn> {
  const s = await startStandIn(api, { behavior });
  standIns.push(s);
  return s;
}

let house: StandIn;

beforeAll(async () => {
  // A platform model (the operator's credential), served by a gemini stand-in under its own name.
  house = await standIn('gemini');
  const platformModels = [{ id: 'pm_house', model: 'house-flash', displayName: 'House Flash', api: 'gemini', baseUrl: house.baseUrl, apiKey: house.apiKey, upstreamModel: 'gemini-2.5-flash' }];
  bench = await startProxyBench({ env: { AI_CONVERSATION_MAX_BYTES: '2048', AI_PLATFORM_MODELS: JSON.stringify(platformModels) } });
});

afterAll(async () => {
  await Promise.all([bench?.stop(), ...standIns.map((s) => s.close())]);
});

describe('pool strategies', () => {
  it('round-robin alternates; weighted follows the weights; least-latency prefers the faster', async () => {
    const ws = bench.workspace();
    const [a, b] = [await standIn('openai'), await standIn('openai')];
    const rr = await bench.key(ws, await bench.pool(ws, 'round-robin', [{ upstreamId: await bench.upstream(ws, a) }, { upstreamId: await bench.upstream(ws, b) }]));
    const client = bench.openai(rr.key);
    for (let i = 0; i < 6; i++) await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    expect([a.requests.length, b.requests.length]).toEqual([3, 3]);

    const [light, heavy] = [await standIn('openai'), await standIn('openai')];
    const weighted = await bench.key(ws, await bench.pool(ws, 'weighted', [{ upstreamId: await bench.upstream(ws, light), weight: 1 }, { upstreamId: await bench.upstream(ws, heavy), weight: 19 }]));
    const wClient = bench.openai(weighted.key);
    await Promise.all(Array.from({ length: 40 }, () => wClient.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] })));
    expect(heavy.requests.length).toBeGreaterThan(30);
    expect(light.requests.length + heavy.requests.length).toBe(40);

    const [slow, fast] = [await standIn('anthropic', { delayMs: 60 }), await standIn('anthropic')];
    const ll = await bench.key(ws, await bench.pool(ws, 'least-latency', [{ upstreamId: await bench.upstream(ws, slow) }, { upstreamId: await bench.upstream(ws, fast) }]));
    const llClient = bench.anthropic(ll.key);
    for (let i = 0; i < 8; i++) await llClient.messages.create({ model: 'claude-haiku-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] });
    // Each is measured once (unmeasured first), then the fast one takes the rest.
    expect(slow.requests.length).toBe(1);
    expect(fast.requests.length).toBe(7);
  });
});

describe('platform models', () => {
  it('a pool member that is a platform model: listed, served with the operator credential, recorded as such', async () => {
    const ws = bench.workspace();
    const { key } = await bench.key(ws, await bench.pool(ws, 'fallback', [{ platformModelId: 'pm_house' }, { platformModelId: 'pm_gone' }]));
    const client = bench.openai(key);
    const models = [];
    for await (const model of client.models.list()) models.push(model.id);
    expect(models).toEqual(['house-flash']);
    const completion = await client.chat.completions.create({ model: 'house-flash', messages: [{ role: 'user', content: 'hello house' }] });
    expect(completion.choices[0].message.content).toBe('echo: hello house');
    expect(house.requests.at(-1)).toMatchObject({ path: '/v1beta/models/gemini-2.5-flash:generateContent', headers: { 'x-goog-api-key': house.apiKey } });
    expect(await bench.lastRow()).toMatchObject({ platform_model_id: 'pm_house', upstream_id: null, upstream_api: 'gemini', model: 'gemini-2.5-flash', input_tokens: 5, output_tokens: 3 });
  });
});

describe('usage rows and metering', () => {
  it('exactly one row per request, and metering events keyed <requestId>:<kind>', async () => {
    const ws = bench.workspace();
    const s = await standIn('openai');
    const { key } = await bench.key(ws, await bench.pool(ws, 'fallback', [{ upstreamId: await bench.upstream(ws, s) }]));
    await bench.openai(key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'cache me' }, { role: 'user', content: 'one two three four' }] });
    const row = await bench.lastRow();
    expect(row).toMatchObject({ input_tokens: 12, cached_tokens: 6, output_tokens: 5 });
    const events = (await bench.dataSource.query(`SELECT idempotency_key, kind, quantity, workspace_id FROM "ai"."metering_events" WHERE request_id = $1 ORDER BY kind`, [row.request_id])) as Array<{
      idempotency_key: string;
      kind: string;
      quantity: number;
      workspace_id: string;
    }>;
    expect(events.map((e) => [e.idempotency_key, e.kind, e.quantity])).toEqual([
      [`${row.request_id}:cached_tokens`, 'ai_cached_tokens', 6],
      [`${row.request_id}:cost_usd`, 'ai_cost_usd', Number(row.cost_usd)],
      [`${row.request_id}:input_tokens`, 'ai_input_tokens', 12],
      [`${row.request_id}:output_tokens`, 'ai_output_tokens', 5],
    ]);
    expect(events.every((e) => e.workspace_id === ws)).toBe(true);
    // gpt-4o-mini: 6 uncached × 0.15 + 6 cached × 0.075 + 5 out × 0.60, per 1M.
    expect(Number(row.cost_usd)).toBeCloseTo((6 * 0.15 + 6 * 0.075 + 5 * 0.6) / 1e6, 10);
    expect(await bench.usage({ requestId: row.request_id })).toHaveLength(1);
  });

  it('a client reusing its X-Request-Id still gets one row per request', async () => {
    const ws = bench.workspace();
    const s = await standIn('openai');
    const { key } = await bench.key(ws, await bench.pool(ws, 'fallback', [{ upstreamId: await bench.upstream(ws, s) }]));
    const send = () =>
      fetch(`${bench.urls.openai}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': `dup_${ws}` },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }),
      }).then((r) => r.json());
    await send();
    await send();
    const rows = await bench.waitUsage(2, { workspaceId: ws });
    expect(rows).toHaveLength(2);
    expect(new Set(rows.map((r) => r.request_id)).size).toBe(2);
  });
});

describe('conversations', () => {
  it('stored for keys that ask: the request, the response, a stream assembled, a large body truncated', async () => {
    const ws = bench.workspace();
    const s = await standIn('anthropic');
    const { key } = await bench.key(ws, await bench.pool(ws, 'fallback', [{ upstreamId: await bench.upstream(ws, s) }]), { storeConversations: true });
    const client = bench.anthropic(key);
    await client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'remember this' }] });
    const plain = await bench.lastRow();
    await client.messages.stream({ model: 'claude-haiku-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'and this stream' }] }).finalMessage();
    const streamed = await bench.lastRow();
    await client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'big '.repeat(1000) }] });
    const big = await bench.lastRow();

    // The openai client of a translated stream gets its conversation in its own (openai) shape.
    const o = await standIn('gemini');
    const { key: okey } = await bench.key(ws, await bench.pool(ws, 'fallback', [{ upstreamId: await bench.upstream(ws, o) }], { storeConversations: true }));
    const st = await bench.openai(okey).chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'translate me' }], stream: true });
    for await (const chunk of st) void chunk;
    const translated = await bench.lastRow();

    const conversations = (await bench.dataSource.query(`SELECT request_id, request_body, response_body, status, model FROM "ai"."conversations" WHERE workspace_id = $1`, [ws])) as Array<{
      request_id: string;
      request_body: any;
      response_body: any;
      status: number;
    }>;
    const byId = new Map(conversations.map((c) => [c.request_id, c]));
    expect(byId.get(plain.request_id)).toMatchObject({ status: 200, request_body: { messages: [{ content: 'remember this' }] }, response_body: { type: 'message', content: [{ text: 'echo: remember this' }] } });
    expect(byId.get(streamed.request_id)).toMatchObject({ request_body: { stream: true }, response_body: { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'echo: and this stream' }] } });
    expect(byId.get(big.request_id)!.request_body).toMatchObject({ truncated: true });
    expect(byId.get(big.request_id)!.request_body.bytes).toBeGreaterThan(2048);
    expect(byId.get(translated.request_id)).toMatchObject({ response_body: { object: 'chat.completion', choices: [{ message: { content: 'echo: translate me' } }] } });
  });

  it('not stored for keys and pools that do not ask', async () => {
    const ws = bench.workspace();
    const s = await standIn('openai');
    const { key } = await bench.key(ws, await bench.pool(ws, 'fallback', [{ upstreamId: await bench.upstream(ws, s) }]));
    await bench.openai(key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] });
    await bench.lastRow();
    expect(await bench.dataSource.query(`SELECT 1 FROM "ai"."conversations" WHERE workspace_id = $1`, [ws])).toEqual([]);
  });
});

describe('playground engine', () => {
  it('chat and embeddings through a pool or one upstream, recorded with no key', async () => {
    const ws = bench.workspace();
    const [failing, healthy, g] = [await standIn('anthropic', { failWith: 500 }), await standIn('openai'), await standIn('gemini')];
    const healthyId = await bench.upstream(ws, healthy);
    const pool = await bench.pool(ws, 'fallback', [{ upstreamId: await bench.upstream(ws, failing) }, { upstreamId: healthyId, priority: 1 }]);
    const playground = bench.proxy!.playground;
    const chat = await playground.chat({
      workspaceId: ws,
      poolId: pool,
      requestId: `req_pg_${ws}`,
      userId: 'usr_1',
      request: { model: 'gpt-4o-mini', system: 'short', messages: [{ role: 'user', content: [{ type: 'text', text: 'hello there' }] }], stream: false },
    });
    expect(chat.response.content).toEqual([{ type: 'text', text: 'echo: hello there' }]);
    expect(chat.upstreamId).toBe(healthyId);
    expect(chat.latencyMs).toBeGreaterThan(0);
    const [row] = await bench.usage({ requestId: `req_pg_${ws}` });
    expect(row).toMatchObject({ client_api: 'playground', key_id: null, pool_id: pool, upstream_id: healthyId, attempts: 2, input_tokens: 9, output_tokens: 3, status: 200 });

    const gId = await bench.upstream(ws, g);
    const embedded = await playground.embed({ workspaceId: ws, upstreamId: gId, requestId: `req_pge_${ws}`, userId: null, request: { model: 'gemini-embedding-001', inputs: ['a b', 'c'] } });
    expect(embedded.response.vectors).toHaveLength(2);
    expect(embedded.upstreamId).toBe(gId);
    expect((await bench.usage({ requestId: `req_pge_${ws}` }))[0]).toMatchObject({ operation: 'embeddings', client_api: 'playground', upstream_api: 'gemini' });

    await expect(
      playground.chat({ workspaceId: bench.workspace(), upstreamId: gId, requestId: `req_pgx_${ws}`, userId: null, request: { model: 'x', messages: [], stream: false } }),
    ).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });
});

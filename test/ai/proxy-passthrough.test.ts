import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startStandIn, type StandIn } from '../../subgraphs/ai/testing/stand-ins';
import { startProxyBench, type ProxyBench, type UsageRow } from './proxy-fixture';

/**
 * Same vendor on both sides: each official SDK against the proxy, the proxy against a stand-in of
 * that vendor. Token counts are the stand-ins' (exact): input = words + 3 per message, output =
 * words of the reply (`echo: <last user text>`).
 */
let bench: ProxyBench;
let oa: StandIn;
let an: StandIn;
let ge: StandIn;
let ws: string;
let keys: { openai: string; anthropic: string; gemini: string };

beforeAll(async () => {
  [bench, oa, an, ge] = await Promise.all([
    startProxyBench({ env: { AI_MAX_REQUEST_BYTES: '65536' } }),
    startStandIn('openai'),
    startStandIn('anthropic'),
    startStandIn('gemini'),
  ]);
  ws = bench.workspace();
  const pools = {
    openai: await bench.pool(ws, 'fallback', [{ upstreamId: await bench.upstream(ws, oa, { models: ['gpt-4o-mini', 'gpt-4o', 'text-embedding-3-small'] }) }]),
    anthropic: await bench.pool(ws, 'fallback', [{ upstreamId: await bench.upstream(ws, an, { models: ['claude-haiku-4-5'], modelMap: { fast: 'claude-haiku-4-5' } }) }]),
    gemini: await bench.pool(ws, 'fallback', [{ upstreamId: await bench.upstream(ws, ge, { models: ['gemini-2.5-flash', 'gemini-embedding-001'] }) }]),
  };
  keys = {
    openai: (await bench.key(ws, pools.openai)).key,
    anthropic: (await bench.key(ws, pools.anthropic)).key,
    gemini: (await bench.key(ws, pools.gemini)).key,
  };
});

afterAll(async () => {
  await Promise.all([bench?.stop(), oa?.close(), an?.close(), ge?.close()]);
});


function expectTimings(row: UsageRow): void {
  expect(row.ttfb_ms).not.toBeNull();
  expect(row.ttfb_ms!).toBeGreaterThanOrEqual(0);
  expect(row.latency_ms).toBeGreaterThanOrEqual(row.ttfb_ms!);
}

describe('vendor-a (openai SDK → openai upstream)', () => {
  it('non-streaming: the answer, exact usage, cost, and the upstream sees its own key only', async () => {
    const completion = await bench.openai(keys.openai).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] });
    expect(completion.choices[0].message.content).toBe('echo: Say hello');
    expect(completion.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 3 });
    const row = await bench.lastRow();
    expect(row).toMatchObject({ workspace_id: ws, client_api: 'openai', upstream_api: 'openai', operation: 'chat', model: 'gpt-4o-mini', input_tokens: 5, output_tokens: 3, status: 200, streamed: false, attempts: 1, error: null });
    // gpt-4o-mini: $0.15 / $0.60 per 1M tokens.
    expect(Number(row.cost_usd)).toBeCloseTo((5 * 0.15 + 3 * 0.6) / 1e6, 10);
    expectTimings(row);
    const seen = oa.requests.at(-1)!;
    expect(seen.headers.authorization).toBe(`Bearer ${oa.apiKey}`);
    expect(JSON.stringify(seen.headers)).not.toContain('wcp_ai_');
    expect(seen.headers['x-platform-envelope']).toBeUndefined();
  });

  it('streaming: chunks as they come, the usage chunk the proxy asked for is not shown, usage counted', async () => {
    const stream = await bench.openai(keys.openai).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'one two three four' }], stream: true });
    let text = '';
    const usages: unknown[] = [];
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      if (chunk.usage) usages.push(chunk.usage);
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    expect(text).toBe('echo: one two three four');
    expect(chunks).toBeGreaterThan(2);
    expect(usages).toEqual([]);
    expect(oa.requests.at(-1)!.body.stream_options).toEqual({ include_usage: true });
    const row = await bench.lastRow();
    expect(row).toMatchObject({ model: 'gpt-4o', input_tokens: 7, output_tokens: 5, status: 200, streamed: true, error: null });
    expectTimings(row);
  });

  it('streaming with include_usage: the client gets its usage chunk', async () => {
    const stream = await bench.openai(keys.openai).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    expect(usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 2 });
    expect(await bench.lastRow()).toMatchObject({ input_tokens: 9, output_tokens: 2, streamed: true });
  });

  it('embeddings, and the model list of the pool', async () => {
    const client = bench.openai(keys.openai);
    const result = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['alpha beta', 'gamma'] });
    expect(result.data).toHaveLength(2);
    expect(result.data[0].embedding.length).toBeGreaterThan(0);
    expect(await bench.lastRow()).toMatchObject({ operation: 'embeddings', model: 'text-embedding-3-small', status: 200, upstream_api: 'openai' });

    const models = [];
    for await (const model of client.models.list()) models.push(model.id);
    expect(models.sort()).toEqual(['gpt-4o', 'gpt-4o-mini', 'text-embedding-3-small']);
    expect((await client.models.retrieve('gpt-4o')).id).toBe('gpt-4o');
    await expect(client.models.retrieve('gpt-unknown')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('a model the pool does not serve is a 404 naming it', async () => {
    const err = await bench
      .openai(keys.openai)
      .chat.completions.create({ model: 'gpt-9', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as Error).message).toContain('gpt-9');
  });
});

describe('vendor-b (anthropic SDK → anthropic upstream)', () => {
  it('non-streaming, with a model renamed by the upstream model map', async () => {
    const message = await bench.anthropic(keys.anthropic).messages.create({ model: 'fast', max_tokens: 100, messages: [{ role: 'user', content: 'Say hello' }] });
    expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: 'echo: Say hello' })]);
    expect(an.requests.at(-1)!.body.model).toBe('claude-haiku-4-5');
    expect(an.requests.at(-1)!.headers['x-api-key']).toBe(an.apiKey);
    // The SDK's own anthropic-version is kept (2023-06-01 only when the client sends none, below).
    expect(an.requests.at(-1)!.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const row = await bench.lastRow();
    expect(row).toMatchObject({ client_api: 'anthropic', upstream_api: 'anthropic', model: 'claude-haiku-4-5', input_tokens: 5, output_tokens: 3, streamed: false, status: 200 });
    expectTimings(row);
  });

  it('streaming', async () => {
    const stream = bench.anthropic(keys.anthropic).messages.stream({ model: 'claude-haiku-4-5', max_tokens: 100, system: 'cache me please', messages: [{ role: 'user', content: 'a b c' }] });
    let text = '';
    stream.on('text', (delta) => (text += delta));
    const final = await stream.finalMessage();
    expect(text).toBe('echo: a b c');
    // input = (3 + 3) system + (3 + 3) user = 12, cached = 6 (reported beside input_tokens by Anthropic).
    expect(final.usage).toMatchObject({ input_tokens: 6, cache_read_input_tokens: 6, output_tokens: 4 });
    const row = await bench.lastRow();
    expect(row).toMatchObject({ input_tokens: 12, cached_tokens: 6, output_tokens: 4, streamed: true, status: 200, error: null });
    expectTimings(row);
  });

  it('count_tokens goes to the anthropic member (exact) and costs nothing', async () => {
    const count = await bench.anthropic(keys.anthropic).messages.countTokens({ model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'one two three' }] });
    expect(count.input_tokens).toBe(6);
    expect(await bench.lastRow()).toMatchObject({ operation: 'count_tokens', input_tokens: 0, output_tokens: 0, status: 200 });
  });

  it('models list, and a revoked key is an AuthenticationError', async () => {
    const page = await bench.anthropic(keys.anthropic).models.list();
    expect(page.data.map((m) => m.id).sort()).toEqual(['claude-haiku-4-5', 'fast']);
    await expect(bench.anthropic('wcp_ai_not-a-real-key').messages.create({ model: 'fast', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(
      Anthropic.AuthenticationError,
    );
  });
});

describe('vendor-c (genai SDK → gemini upstream)', () => {
  it('generateContent', async () => {
    const response = await bench.gemini(keys.gemini).models.generateContent({ model: 'gemini-2.5-flash', contents: 'Say hello' });
    expect(response.text).toBe('echo: Say hello');
    expect(ge.requests.at(-1)!.headers['x-goog-api-key']).toBe(ge.apiKey);
    const row = await bench.lastRow();
    expect(row).toMatchObject({ client_api: 'gemini', upstream_api: 'gemini', model: 'gemini-2.5-flash', input_tokens: 5, output_tokens: 3, streamed: false, status: 200 });
    expectTimings(row);
  });

  it('generateContentStream', async () => {
    const stream = await bench.gemini(keys.gemini).models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'tell me one thing' });
    let text = '';
    for await (const chunk of stream) text += chunk.text ?? '';
    expect(text).toBe('echo: tell me one thing');
    expect(ge.requests.at(-1)!.query.alt).toBe('sse');
    const row = await bench.lastRow();
    expect(row).toMatchObject({ input_tokens: 7, output_tokens: 5, streamed: true, status: 200, error: null });
    expectTimings(row);
  });

  it('embedContent, countTokens and the model list', async () => {
    const client = bench.gemini(keys.gemini);
    const embedded = await client.models.embedContent({ model: 'gemini-embedding-001', contents: 'alpha beta' });
    expect(embedded.embeddings?.[0]?.values?.length).toBeGreaterThan(0);
    expect(await bench.lastRow()).toMatchObject({ operation: 'embeddings', status: 200 });
    const counted = await client.models.countTokens({ model: 'gemini-2.5-flash', contents: 'one two three' });
    expect(counted.totalTokens).toBe(6);
    const names: string[] = [];
    for await (const model of await client.models.list()) names.push(model.name!);
    expect(names.sort()).toEqual(['models/gemini-2.5-flash', 'models/gemini-embedding-001']);
  });
});

describe('vendor-shaped refusals', () => {
  it('unknown path 404, malformed JSON 400, oversized body 413, missing key 401', async () => {
    const auth = { authorization: `Bearer ${keys.openai}`, 'content-type': 'application/json' };
    const unknown = await fetch(`${bench.urls.openai}/completions/legacy`, { method: 'POST', headers: auth, body: '{}' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { type: 'invalid_request_error' } });

    const malformed = await fetch(`${bench.urls.openai}/chat/completions`, { method: 'POST', headers: auth, body: '{"model": "gpt-4o",' });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ error: { type: 'invalid_request_error' } });

    const big = await fetch(`${bench.urls.anthropic}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': keys.anthropic, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fast', max_tokens: 5, messages: [{ role: 'user', content: 'x'.repeat(70_000) }] }),
    });
    expect(big.status).toBe(413);
    expect(await big.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });

    const anonymous = await fetch(`${bench.urls.gemini}/v1beta/models`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });

    const byQuery = await fetch(`${bench.urls.gemini}/v1beta/models?key=${keys.gemini}`);
    expect(byQuery.status).toBe(200);

    // Bearer works for vendor-b too; without anthropic-version the proxy sends 2023-06-01, and keeps anthropic-beta.
    const bare = await fetch(`${bench.urls.anthropic}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.anthropic}`, 'content-type': 'application/json', 'anthropic-beta': 'tools-2024-04-04' },
      body: JSON.stringify({ model: 'fast', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(bare.status).toBe(200);
    expect(an.requests.at(-1)!.headers).toMatchObject({ 'anthropic-version': '2023-06-01', 'anthropic-beta': 'tools-2024-04-04' });
  });
});

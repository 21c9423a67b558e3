import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startStandIn, type StandIn } from '../../subgraphs/ai/testing/stand-ins';
import { startProxyBench, startTcpRelay, until, type ProxyBench } from './proxy-fixture';

/**
 * Failover, circuit breaking, timeouts, client aborts and broken upstream streams. Circuit: 2
 * failures in a row open it for 800 ms (AI_CIRCUIT_*); backoff 5 ms.
 */
const OPEN_MS = 800;
let bench: ProxyBench;
let ws: string;
const standIns: StandIn[] = [];

async function standIn(api: 'openai' | 'anthropic' | 'gemini', behavior: StandIn['behavior'] = {}): Promise<StandIn> {
  const s = await startStandIn(api, { behavior });
  standIns.push(s);
  return s;
}

beforeAll(async () => {
  bench = await startProxyBench({ env: { AI_CIRCUIT_FAILURE_THRESHOLD: '2', AI_CIRCUIT_OPEN_MS: String(OPEN_MS) } });
  ws = bench.workspace();
});

afterAll(async () => {
  await Promise.all([bench?.stop(), ...standIns.map((s) => s.close())]);
});

const ask = (client: OpenAI, model = 'gpt-4o-mini') => client.chat.completions.create({ model, messages: [{ role: 'user', content: 'ping' }] });

describe('failover', () => {
  it.each([500, 429, 503])('the first member answering %i → the second answers; 2 attempts recorded', async (status) => {
    const failing = await standIn('openai', { failWith: status, retryAfterSeconds: 1 });
    const healthy = await standIn('openai');
    const failingId = await bench.upstream(ws, failing);
    const healthyId = await bench.upstream(ws, healthy);
    const { key } = await bench.key(ws, await bench.pool(ws, 'fallback', [{ upstreamId: failingId, priority: 0 }, { upstreamId: healthyId, priority: 1 }]));
    const started = Date.now();
    const completion = await ask(bench.openai(key));
    expect(completion.choices[0].message.content).toBe('echo: ping');
    // A different member is not held back by the first one's retry-after.
    expect(Date.now() - started).toBeLessThan(900);
    expect(failing.requests).toHaveLength(1);
    expect(healthy.requests).toHaveLength(1);
    expect(await bench.lastRow()).toMatchObject({ upstream_id: healthyId, attempts: 2, status: 200, error: null, input_tokens: 4, output_tokens: 2 });
  });

  it('cross-vendor failover: an anthropic member failing, a gemini member answers the openai client', async () => {
    const failing = await standIn('anthropic', { failWith: 529 });
    const healthy = await standIn('gemini');
    const { key } = await bench.key(ws, await bench.pool(ws, 'fallback', [{ upstreamId: await bench.upstream(ws, failing) }, { upstreamId: await bench.upstream(ws, healthy), priority: 1 }]));
    expect((await ask(bench.openai(key), 'gemini-2.5-flash')).choices[0].message.content).toBe('echo: ping');
    expect(await bench.lastRow()).toMatchObject({ upstream_api: 'gemini', attempts: 2 });
  });

  it('a member slower than its timeout is left for the next', async () => {
    const slow = await standIn('openai', { delayMs: 2_000 });
    const fast = await standIn('openai');
    const slowId = await bench.upstream(ws, slow, { timeoutMs: 150 });
    const { key } = await bench.key(ws, await bench.pool(ws, 'fallback', [{ upstreamId: slowId }, { upstreamId: await bench.upstream(ws, fast), priority: 1 }]));
    const started = Date.now();
    await ask(bench.openai(key));
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(await bench.lastRow()).toMatchObject({ attempts: 2, status: 200 });
  });

  it('a 400 of the upstream is the client’s answer, not a failover', async () => {
    const picky = await standIn('anthropic');
    const other = await standIn('anthropic');
    const { key } = await bench.key(ws, await bench.pool(ws, 'fallback', [{ upstreamId: await bench.upstream(ws, picky) }, { upstreamId: await bench.upstream(ws, other), priority: 1 }]));
    // The stand-in refuses max_tokens 0 with its 400.
    const err = await bench
      .anthropic(key)
      .messages.create({ model: 'claude-haiku-4-5', max_tokens: 0, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(other.requests).toHaveLength(0);
    expect(await bench.lastRow()).toMatchObject({ status: 400, attempts: 1 });
  });
});

describe('circuit breaker', () => {
  it('after the threshold the failing upstream gets no requests for circuitOpenMs, then one trial', async () => {
    const failing = await standIn('openai', { failWith: 500 });
    const healthy = await standIn('openai');
    const { key } = await bench.key(ws, await bench.pool(ws, 'fallback', [{ upstreamId: await bench.upstream(ws, failing) }, { upstreamId: await bench.upstream(ws, healthy), priority: 1 }]));
    const client = bench.openai(key);
    await ask(client);
    await ask(client);
    expect(failing.requests).toHaveLength(2); // threshold reached: open
    const openedAt = Date.now();
    for (let i = 0; i < 4; i++) await ask(client);
    expect(Date.now() - openedAt).toBeLessThan(OPEN_MS);
    expect(failing.requests).toHaveLength(2);
    expect(healthy.requests).toHaveLength(6);
    expect(await bench.lastRow()).toMatchObject({ attempts: 1 });

    await new Promise((resolve) => setTimeout(resolve, OPEN_MS + 50));
    await ask(client); // half-open: one trial, which fails and reopens
    expect(failing.requests).toHaveLength(3);
    await ask(client);
    expect(failing.requests).toHaveLength(3);

    failing.behavior = {};
    await new Promise((resolve) => setTimeout(resolve, OPEN_MS + 50));
    await ask(client); // the trial succeeds: closed again
    expect(failing.requests).toHaveLength(4);
    await ask(client);
    expect(failing.requests).toHaveLength(5);
  });

  it('all members failing → a 502 the SDK raises; all circuits open → 503', async () => {
    const a = await standIn('openai', { failWith: 500 });
    const b = await standIn('anthropic', { failWith: 500 });
    const { key } = await bench.key(ws, await bench.pool(ws, 'round-robin', [{ upstreamId: await bench.upstream(ws, a) }, { upstreamId: await bench.upstream(ws, b) }], { maxAttempts: 2 }));
    const client = bench.openai(key);
    const first = await ask(client).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(OpenAI.InternalServerError);
    expect((first as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect(await bench.lastRow()).toMatchObject({ status: 502, attempts: 2 });
    await ask(client).catch(() => undefined); // second failure of each: both circuits open
    const open = await ask(client).catch((e: unknown) => e);
    expect((open as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect(a.requests.length + b.requests.length).toBe(4);
    expect(await bench.lastRow()).toMatchObject({ status: 503, attempts: 0 });

    const anthropicErr = await bench
      .anthropic(key)
      .messages.create({ model: 'claude-haiku-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(anthropicErr).toBeInstanceOf(Anthropic.InternalServerError);
    expect((anthropicErr as InstanceType<typeof Anthropic.APIError>).status).toBe(503);
  });
});

describe('streams that end badly', () => {
  it('the client aborts mid-stream: one row with 499, the upstream connection closed', async () => {
    const slow = await standIn('openai', { chunkDelayMs: 300, reply: 'one two three four five six seven eight nine' });
    const relay = await startTcpRelay(slow);
    try {
      const { key } = await bench.key(ws, await bench.pool(ws, 'fallback', [{ upstreamId: await bench.upstream(ws, slow, { baseUrl: relay.baseUrl }) }]));
      const controller = new AbortController();
      const stream = await bench.openai(key).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'count for me' }], stream: true }, { signal: controller.signal });
      let text = '';
      const reading = (async () => {
        for await (const chunk of stream) {
          text += chunk.choices[0]?.delta?.content ?? '';
          if (text.length > 0) controller.abort();
        }
      })();
      // The SDK ends the iteration (or throws APIUserAbortError, depending on timing).
      await reading.catch(() => undefined);
      expect(text).not.toBe('echo: count for me');
      const requestId = bench.requestIds.at(-1)!;
      await until(async () => (await bench.usage({ requestId })).length === 1, 'the 499 row');
      // The connection that carried the stream closes at once, long before the stand-in's 2 s of chunks.
      await until(() => relay.connections()[0]?.closed === true, 'the upstream connection to close', 1_000);
      const rows = await bench.usage({ requestId });
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ status: 499, streamed: true, error: expect.stringContaining('client') });
      // No usage chunk arrived: input estimated from the request, output from the text seen.
      expect(rows[0].input_tokens).toBeGreaterThan(0);
      expect(rows[0].output_tokens).toBeGreaterThan(0);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await bench.usage({ requestId })).toHaveLength(1);
    } finally {
      await relay.close();
    }
  });

  it('a malformed upstream stream: the client errors, the row has the error (pass-through and translated)', async () => {
    const broken = await standIn('openai', { malformedStream: true });
    const { key } = await bench.key(ws, await bench.pool(ws, 'fallback', [{ upstreamId: await bench.upstream(ws, broken) }]));
    const stream = await bench.openai(key).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'go on' }], stream: true });
    await expect(
      (async () => {
        for await (const chunk of stream) void chunk;
      })(),
    ).rejects.toThrow();
    expect(await bench.lastRow()).toMatchObject({ status: 200, streamed: true, error: expect.stringContaining('malformed') });

    const brokenGemini = await standIn('gemini', { malformedStream: true });
    const { key: key2 } = await bench.key(ws, await bench.pool(ws, 'fallback', [{ upstreamId: await bench.upstream(ws, brokenGemini) }]));
    const stream2 = bench.anthropic(key2).messages.stream({ model: 'gemini-2.5-flash', max_tokens: 100, messages: [{ role: 'user', content: 'go on' }] });
    await expect(stream2.finalMessage()).rejects.toThrow();
    expect(await bench.lastRow()).toMatchObject({ upstream_api: 'gemini', streamed: true, error: expect.stringContaining('malformed') });
  });

  it('an upstream that drops mid-stream: the client gets an error event, the circuit counts it', async () => {
    const dropping = await standIn('anthropic', { dropMidStream: true });
    const { key } = await bench.key(ws, await bench.pool(ws, 'fallback', [{ upstreamId: await bench.upstream(ws, dropping) }]));
    const stream = bench.anthropic(key).messages.stream({ model: 'claude-haiku-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'one two three' }] });
    await expect(stream.finalMessage()).rejects.toThrow();
    const row = await bench.lastRow();
    expect(row).toMatchObject({ streamed: true, error: expect.stringContaining('cut') });
    // The input came with message_start; the output is estimated from what was seen.
    expect(row.input_tokens).toBe(6);
  });
});

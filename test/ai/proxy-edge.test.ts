import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { TOPICS } from '../../core/pubsub';
import { GatewayKeyEntity } from '../../subgraphs/ai/model/entities';
import { startStandIn, type StandIn } from '../../subgraphs/ai/testing/stand-ins';
import { startProxyBench, startTcpRelay, until, type ProxyBench, type TcpRelay } from './proxy-fixture';

/**
 * Through the whole platform: SDK → gateway edge (`/v1/ai-gateway/vendor-*`) → ai subgraph raw
 * route (`/vendor/…`) → stand-in. Streams must arrive as they are produced (no buffering on the
 * way), a client going away must reach the upstream, and key changes must apply at once.
 */
let bench: ProxyBench;
let oa: StandIn;
let an: StandIn;
let ge: StandIn;
let relay: TcpRelay;
let ws: string;
let key: string;
let keyId: string;

beforeAll(async () => {
  [bench, oa, an, ge] = await Promise.all([
    startProxyBench({ platform: true }),
    startStandIn('openai', { behavior: { chunkDelayMs: 100, reply: 'alpha beta gamma delta epsilon zeta' } }),
    startStandIn('anthropic', { behavior: { chunkDelayMs: 100 } }),
    startStandIn('gemini', { behavior: { chunkDelayMs: 100 } }),
  ]);
  relay = await startTcpRelay(oa);
  ws = bench.workspace();
  const pool = await bench.pool(ws, 'fallback', [
    { upstreamId: await bench.upstream(ws, oa, { baseUrl: relay.baseUrl, models: ['gpt-4o-mini'] }) },
    { upstreamId: await bench.upstream(ws, an, { models: ['claude-haiku-4-5'] }) },
    { upstreamId: await bench.upstream(ws, ge, { models: ['gemini-2.5-flash'] }) },
  ]);
  ({ key, id: keyId } = await bench.key(ws, pool));
}, 30_000);

afterAll(async () => {
  await Promise.all([bench?.stop(), oa?.close(), an?.close(), ge?.close(), relay?.close()]);
});

/** Times of the first and last streamed pieces, from the request's start. */
async function timeStream(pieces: AsyncIterable<unknown>): Promise<{ first: number; last: number; count: number }> {
  const started = Date.now();
  let first = -1;
  let count = 0;
  for await (const piece of pieces) {
    void piece;
    if (first < 0) first = Date.now() - started;
    count++;
  }
  return { first, last: Date.now() - started, count };
}

describe('through the edge', () => {
  it('each SDK streams as the upstream produces (first token long before the last), usage recorded', async () => {
    const openaiStream = await bench.openai(key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'go' }], stream: true });
    const a = await timeStream(openaiStream);
    expect(a.last - a.first).toBeGreaterThanOrEqual(200);
    expect(await bench.lastRow()).toMatchObject({ client_api: 'openai', streamed: true, input_tokens: 4, output_tokens: 6, status: 200, error: null });

    const b = await timeStream(bench.anthropic(key).messages.stream({ model: 'claude-haiku-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'one two three' }] }));
    expect(b.last - b.first).toBeGreaterThanOrEqual(200);
    expect(await bench.lastRow()).toMatchObject({ client_api: 'anthropic', streamed: true, input_tokens: 6, output_tokens: 4 });

    const c = await timeStream(await bench.gemini(key).models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'one two three' }));
    expect(c.last - c.first).toBeGreaterThanOrEqual(100);
    const row = await bench.lastRow();
    expect(row).toMatchObject({ client_api: 'gemini', streamed: true, input_tokens: 6, output_tokens: 4 });
    expect(row.ttfb_ms!).toBeLessThan(row.latency_ms);
  });

  it('non-streaming calls of each SDK, with the edge’s request id as the row’s', async () => {
    const completion = await bench.openai(key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect(completion.choices[0].message.content).toBe('alpha beta gamma delta epsilon zeta');
    expect((await bench.lastRow()).request_id).toBe(bench.requestIds.at(-1));
    // The caller's X-Request-Id is not trusted as the row's key (it could collide or be replayed).
    expect(bench.requestIds.at(-1)).not.toMatch(/^req_t_/);
    const message = await bench.anthropic(key).messages.create({ model: 'claude-haiku-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'echo: hi' });
    const generated = await bench.gemini(key).models.generateContent({ model: 'gemini-2.5-flash', contents: 'hi' });
    expect(generated.text).toBe('echo: hi');
    expect(await bench.lastRow()).toMatchObject({ client_api: 'gemini', input_tokens: 4, output_tokens: 2, status: 200 });
  });

  it('a client that aborts mid-stream: 499 recorded, the upstream connection closed', async () => {
    const bytesBefore = relay.connections().map((c) => c.bytesFromUpstream);
    const controller = new AbortController();
    const stream = await bench.openai(key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'go' }], stream: true }, { signal: controller.signal });
    await (async () => {
      for await (const chunk of stream) if (chunk.choices[0]?.delta?.content) controller.abort();
    })().catch(() => undefined);
    expect(await bench.lastRow()).toMatchObject({ status: 499, streamed: true });
    // The connection that carried this stream (the one whose bytes grew) is closed, well before the stand-in's last chunk.
    const carried = () => relay.connections().filter((c, i) => c.bytesFromUpstream > (bytesBefore[i] ?? 0));
    expect(carried()).toHaveLength(1);
    await until(() => carried()[0].closed, 'the upstream stream connection to close', 500);
  });

  it('requests-per-minute limit → RateLimitError; revoking the key applies at once (pub/sub)', async () => {
    const limitedPool = await bench.pool(ws, 'fallback', [{ upstreamId: await bench.upstream(ws, an) }]);
    const limited = await bench.key(ws, limitedPool, { requestsPerMinute: 2 });
    const client = bench.anthropic(limited.key);
    const ask = () => client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] });
    await ask();
    await ask();
    const refused = await ask().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.RateLimitError);
    expect(Number((refused as InstanceType<typeof Anthropic.APIError>).headers?.get('retry-after'))).toBeGreaterThan(0);

    await bench.openai(key).models.list();
    await bench.dataSource.getRepository(GatewayKeyEntity).update({ id: keyId }, { revokedAt: new Date() });
    bench.pubsub.publish(TOPICS.aiConfigChanged, { workspaceId: ws });
    await until(
      async () =>
        (await bench
          .openai(key)
          .models.list()
          .then(() => false)
          .catch((e: unknown) => e instanceof OpenAI.AuthenticationError)) === true,
      'the revoked key to be refused',
      3_000,
    );
  });
});

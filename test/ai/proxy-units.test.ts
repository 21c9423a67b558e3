import { costOf, priceOf } from '../../subgraphs/ai/pricing';
import { CircuitBreakers } from '../../subgraphs/ai/proxy/circuit';
import { UsageChunkFilter } from '../../subgraphs/ai/proxy/respond';
import { MemberSelector, modelsOfPool, upstreamModelFor } from '../../subgraphs/ai/proxy/select';
import type { CachedPool, RouteMember } from '../../subgraphs/ai/proxy/types';
import { retryAfterMs } from '../../subgraphs/ai/proxy/upstream';

/** The proxy's pure parts: pricing, the usage-chunk filter, member selection and circuit breakers. */
const member = (id: string, over: Partial<RouteMember> = {}): RouteMember => ({
  id,
  upstreamId: id,
  platformModelId: null,
  api: 'openai',
  origin: 'http://127.0.0.1:1',
  basePath: '/v1',
  authKind: 'api_key',
  credential: 'k',
  models: [],
  modelMap: {},
  platformModel: null,
  weight: 1,
  priority: 0,
  timeoutMs: 1000,
  ...over,
});
const pool = (strategy: CachedPool['strategy']): CachedPool => ({ id: `p_${strategy}`, workspaceId: 'ws', strategy, storeConversations: false, maxAttempts: 3 });

describe('pricing', () => {
  it('prices by model family, cached input at its own rate, unknown models free', () => {
    expect(priceOf('gpt-4o-mini-2024-07-18')).toMatchObject({ input: 0.15, output: 0.6 });
    expect(priceOf('gpt-4o-2024-08-06')).toMatchObject({ input: 2.5 });
    expect(priceOf('models/gemini-2.5-flash')).toMatchObject({ input: 0.3 });
    expect(costOf('claude-sonnet-4-6', { inputTokens: 1_000_000, outputTokens: 1_000_000, cachedTokens: 500_000 })).toBeCloseTo(0.5 * 3 + 0.5 * 0.3 + 15, 8);
    expect(costOf('my-own-model', { inputTokens: 1000, outputTokens: 1000 })).toBe(0);
  });
});

describe('UsageChunkFilter', () => {
  const usageChunk = 'data: {"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}\n\n';
  const content = 'data: {"id":"c","choices":[{"index":0,"delta":{"content":"hé"}}]}\n\n';

  it('passes content untouched and drops only the usage-only chunk, across any split', () => {
    const stream = content + content + usageChunk + 'data: [DONE]\n\n';
    const bytes = Buffer.from(stream);
    for (const size of [1, 3, 7, 50, bytes.length]) {
      const filter = new UsageChunkFilter();
      const out: Buffer[] = [];
      for (let i = 0; i < bytes.length; i += size) out.push(filter.push(bytes.subarray(i, i + size)));
      out.push(filter.end());
      expect(Buffer.concat(out).toString('utf8')).toBe(content + content + 'data: [DONE]\n\n');
    }
  });

  it('hands back the same bytes when a chunk holds whole events and no usage chunk', () => {
    const chunk = Buffer.from(content);
    expect(new UsageChunkFilter().push(chunk).equals(chunk)).toBe(true);
  });
});

describe('member selection', () => {
  it('models, model maps and platform models', () => {
    const any = member('a');
    const listed = member('b', { models: ['gpt-4o'], modelMap: { fast: 'gpt-4o-mini' } });
    const platform = member('platform:pm', { platformModel: 'house-model', modelMap: { 'house-model': 'gpt-4.1' } });
    const anthropic = member('c', { api: 'anthropic' });
    expect(upstreamModelFor(any, 'x')).toBe('x');
    expect(upstreamModelFor(listed, 'fast')).toBe('gpt-4o-mini');
    expect(upstreamModelFor(listed, 'other')).toBeNull();
    expect(upstreamModelFor(platform, 'house-model')).toBe('gpt-4.1');
    expect(upstreamModelFor(platform, 'gpt-4.1')).toBeNull();
    expect(upstreamModelFor(anthropic, 'x', 'embeddings')).toBeNull();
    expect(modelsOfPool([any, listed, platform])).toEqual(['fast', 'gpt-4o', 'house-model']);
  });

  it('fallback by priority, round-robin rotates, least-latency measures then prefers, weighted follows weights', () => {
    const selector = new MemberSelector(() => 0.99);
    const members = [member('a', { priority: 2 }), member('b', { priority: 1 }), member('c', { priority: 3 })];
    const ids = (strategy: CachedPool['strategy']) => selector.candidates(pool(strategy), members, 'm', 'chat').map((c) => c.member.id);
    expect(ids('fallback')).toEqual(['b', 'a', 'c']);
    expect([ids('round-robin'), ids('round-robin'), ids('round-robin')]).toEqual([
      ['a', 'b', 'c'],
      ['b', 'c', 'a'],
      ['c', 'a', 'b'],
    ]);
    selector.recordTtfb('a', 50);
    selector.recordTtfb('b', 10);
    expect(ids('least-latency')).toEqual(['c', 'b', 'a']);
    const heavy = [member('x', { weight: 1 }), member('y', { weight: 99 })];
    expect(new MemberSelector(() => 0.5).candidates(pool('weighted'), heavy, 'm', 'chat').map((c) => c.member.id)).toEqual(['y', 'x']);
    expect(new MemberSelector(() => 0.001).candidates(pool('weighted'), heavy, 'm', 'chat').map((c) => c.member.id)).toEqual(['x', 'y']);
  });
});

describe('circuit breakers', () => {
  it('closed → open at the threshold → one half-open trial → closed or open again', () => {
    let now = 0;
    const breakers = new CircuitBreakers({ threshold: 2, openMs: 100, now: () => now });
    expect(breakers.tryAcquire('u')).toBe(true);
    breakers.failure('u');
    expect(breakers.state('u')).toBe('closed');
    breakers.failure('u');
    expect(breakers.state('u')).toBe('open');
    expect(breakers.tryAcquire('u')).toBe(false);
    now = 100;
    expect(breakers.tryAcquire('u')).toBe(true); // the trial
    expect(breakers.tryAcquire('u')).toBe(false); // only one
    breakers.failure('u');
    expect(breakers.tryAcquire('u')).toBe(false);
    now = 200;
    expect(breakers.tryAcquire('u')).toBe(true);
    breakers.success('u');
    expect(breakers.state('u')).toBe('closed');
    expect(breakers.tryAcquire('u')).toBe(true);
    // A trial that never reports frees the slot after another openMs.
    breakers.failure('v');
    breakers.failure('v');
    now = 300;
    expect(breakers.tryAcquire('v')).toBe(true);
    now = 350;
    expect(breakers.tryAcquire('v')).toBe(false);
    now = 401;
    expect(breakers.tryAcquire('v')).toBe(true);
  });

  it('reads retry-after in seconds or as a date', () => {
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs(new Date(Date.now() + 5000).toUTCString())).toBeGreaterThan(3000);
    expect(retryAfterMs(undefined)).toBeNull();
  });
});

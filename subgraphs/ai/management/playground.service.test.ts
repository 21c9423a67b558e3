import type { RequestContext } from '../../../core/context';
import { NotFoundError, UnavailableError, ValidationError } from '../../../core/errors';
import type { Principal } from '../../../core/principal';
import type { PlaygroundEngine } from './playground';
import { PlaygroundService, parseEmbeddingInput, parseMessages } from './playground.service';
import type { PoolService } from './pools.service';
import type { UpstreamService } from './upstreams.service';

/* PlaygroundService with its engine and record loaders replaced: what it hands the engine, and what it answers. */

const WS = 'ws_playground0000000001';
const principal: Principal = { userId: 'usr_play', username: 'play', isAdmin: false, via: 'jwt', defaultWorkspaceId: WS, memberships: { [WS]: 'member' } };
const ctx: RequestContext = { principal, requestId: 'req_t', clientIp: '127.0.0.1' };

function build(engine: Partial<PlaygroundEngine>) {
  const pools = { load: jest.fn(async (_ctx: RequestContext, id: string) => ({ id, workspaceId: WS })) } as unknown as PoolService;
  const upstreams = {
    load: jest.fn(async (_ctx: RequestContext, id: string) => {
      if (id === 'ups_missing') throw new NotFoundError('Upstream', id);
      return { id, workspaceId: WS };
    }),
  } as unknown as UpstreamService;
  return new PlaygroundService({ engine: engine as PlaygroundEngine, pools, upstreams });
}

describe('PlaygroundService.chat', () => {
  it('sends the canonical request through the pool and answers the joined text', async () => {
    const chat = jest.fn(async () => ({
      response: { id: 'r1', model: 'gpt-small-2025', content: [{ type: 'text' as const, text: 'Hel' }, { type: 'text' as const, text: 'lo' }], finishReason: 'stop' as const, usage: { inputTokens: 12, outputTokens: 2, cachedTokens: 4 } },
      upstreamId: 'ups_answering',
      latencyMs: 41.6,
    }));
    const service = build({ chat });
    const result = await service.chat(ctx, {
      poolId: 'pool_main',
      model: 'gpt-small',
      system: 'Be brief.',
      messages: [{ role: 'system', content: 'Answer in English.' }, { role: 'user', content: 'Hi' }, { role: 'assistant', content: [{ type: 'text', text: 'Hey' }] }, { role: 'user', content: 'Again' }],
      maxTokens: 64,
      temperature: 0.2,
    });
    expect(chat).toHaveBeenCalledTimes(1);
    const input = (chat.mock.calls[0] as unknown[])[0] as any;
    expect(input).toEqual({
      workspaceId: WS,
      poolId: 'pool_main',
      requestId: expect.stringMatching(/^req_pg_[\w-]{16}$/),
      userId: 'usr_play',
      request: {
        model: 'gpt-small',
        system: 'Be brief.\n\nAnswer in English.',
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
          { role: 'assistant', content: [{ type: 'text', text: 'Hey' }] },
          { role: 'user', content: [{ type: 'text', text: 'Again' }] },
        ],
        maxTokens: 64,
        temperature: 0.2,
        stream: false,
      },
    });
    expect(result).toEqual({ requestId: input.requestId, model: 'gpt-small-2025', text: 'Hello', finishReason: 'stop', usage: { inputTokens: 12, outputTokens: 2, cachedTokens: 4 }, upstreamId: 'ups_answering', latencyMs: 42 });
  });

  it('refuses bad targets and messages before the engine is called, and passes the engine\'s errors on', async () => {
    const chat = jest.fn(async () => {
      throw new UnavailableError('no member');
    });
    const service = build({ chat });
    const messages = [{ role: 'user', content: 'x' }];
    await expect(service.chat(ctx, { model: 'm', messages })).rejects.toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'poolId' } });
    await expect(service.chat(ctx, { model: 'm', messages, poolId: 'pool_a', upstreamId: 'ups_b' })).rejects.toBeInstanceOf(ValidationError);
    await expect(service.chat(ctx, { model: 'm', messages, upstreamId: 'ups_missing' })).rejects.toBeInstanceOf(NotFoundError);
    await expect(service.chat(ctx, { model: 'm', messages, upstreamId: 'ups_a', workspaceId: 'ws_other' })).rejects.toBeInstanceOf(NotFoundError);
    await expect(service.chat(ctx, { model: 'm', messages, upstreamId: 'ups_a', temperature: 3 })).rejects.toMatchObject({ details: { field: 'temperature' } });
    await expect(service.chat(ctx, { model: 'm', messages, upstreamId: 'ups_a', maxTokens: 0 })).rejects.toMatchObject({ details: { field: 'maxTokens' } });
    await expect(service.chat(ctx, { model: ' ', messages, upstreamId: 'ups_a' })).rejects.toMatchObject({ details: { field: 'model' } });
    expect(chat).not.toHaveBeenCalled();
    await expect(service.chat(ctx, { model: 'm', messages, upstreamId: 'ups_a' })).rejects.toBeInstanceOf(UnavailableError);
    expect((chat.mock.calls[0] as unknown[])[0]).toMatchObject({ upstreamId: 'ups_a', workspaceId: WS });
  });
});

describe('PlaygroundService.embeddings', () => {
  it('sends a string or strings and answers the vectors', async () => {
    const embed = jest.fn(async () => ({ response: { model: 'emb-1', vectors: [[0.1, 0.2], [0.3, 0.4]], usage: { inputTokens: 4, outputTokens: 0, cachedTokens: 0 } }, upstreamId: null, latencyMs: 5 }));
    const service = build({ embed });
    const result = await service.embeddings(ctx, { upstreamId: 'ups_e', model: 'emb', input: ['a', 'b'] });
    expect((embed.mock.calls[0] as unknown[])[0]).toMatchObject({ upstreamId: 'ups_e', request: { model: 'emb', inputs: ['a', 'b'] } });
    expect(result).toEqual({ requestId: expect.stringMatching(/^req_pg_/), model: 'emb-1', vectors: [[0.1, 0.2], [0.3, 0.4]], usage: { inputTokens: 4, outputTokens: 0, cachedTokens: 0 }, upstreamId: null, latencyMs: 5 });
  });
});

describe('parsing', () => {
  it.each([
    [[], 'messages'],
    ['hello', 'messages'],
    [[{ role: 'user' }], 'messages[0].content'],
    [[{ role: 'tool', content: 'x' }], 'messages[0].role'],
    [[{ role: 'user', content: [{ type: 'image', url: 'x' }] }], 'messages[0].content[0]'],
    [[{ role: 'system', content: 'only system' }], 'messages'],
  ])('refuses messages %j (field %s)', (messages, field) => {
    expect(() => parseMessages(messages)).toThrow(ValidationError);
    try {
      parseMessages(messages);
    } catch (err) {
      expect((err as ValidationError).details).toMatchObject({ field });
    }
  });

  it('reads embedding input as a string or 1–256 non-empty strings', () => {
    expect(parseEmbeddingInput('one')).toEqual(['one']);
    expect(parseEmbeddingInput(['a', 'b'])).toEqual(['a', 'b']);
    for (const bad of [[], [''], [1], null, Array.from({ length: 257 }, () => 'x')]) expect(() => parseEmbeddingInput(bad)).toThrow(ValidationError);
  });
});

/**
 * The real vendor SDKs against this library, in-process (a fake fetch, no network): the bodies they
 * send parse, and what we format (responses, streams, errors, model lists, embeddings, counts) is
 * what they read. The SDK-typed request literals also check, at compile time, the shapes they send.
 */
import OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import Anthropic from '@anthropic-ai/sdk';
import type { MessageCreateParamsNonStreaming } from '@anthropic-ai/sdk/resources/messages';
import { FunctionCallingConfigMode, GoogleGenAI, type GenerateContentParameters } from '@google/genai';
import { anthropic, gemini, openai, type ErrorKind, type StreamEvent } from './index';
import { formatAnthropicCountTokensResponse, formatGeminiCountTokensResponse, parseAnthropicCountTokensRequest, parseGeminiCountTokensRequest } from './count-tokens';
import { conversation, withoutSampling, fakeFetch, streamEvents, textResponse, timeTool, toolResponse, weatherTool } from './test-fixtures';

const KINDS: ErrorKind[] = ['invalid_request', 'authentication', 'permission', 'not_found', 'rate_limit', 'budget', 'upstream', 'overloaded', 'timeout'];
const MODELS = [{ id: 'model-x', displayName: 'Model X', createdAt: new Date('2025-01-02T03:04:05Z'), ownedBy: 'acme' }];

function encodeAll(enc: { push(e: StreamEvent): string; end(): string }, events: StreamEvent[]): string[] {
  return [...events.map((e) => enc.push(e)), enc.end()].filter((s) => s.length > 0);
}

describe('openai SDK', () => {
  const params: ChatCompletionCreateParamsNonStreaming = {
    model: 'model-x',
    messages: [
      { role: 'developer', content: 'You are terse.' },
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
      { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_0', content: '{"tempC":21}' },
      { role: 'assistant', content: 'It is 21°C.' },
      { role: 'user', content: 'And the time in CET?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_time', arguments: '{"tz":"CET"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: '14:05' }] },
      { role: 'user', content: 'Thanks!' },
    ],
    tools: [weatherTool, timeTool].map((t) => ({ type: 'function' as const, function: { name: t.name, description: t.description!, parameters: t.parameters } })),
    tool_choice: 'auto',
    max_completion_tokens: 256,
    temperature: 0.5,
    top_p: 0.9,
    stop: ['END'],
  };

  it('sends what parseChatRequest reads and reads formatChatResponse', async () => {
    const { fetch, calls } = fakeFetch(() => ({ json: openai.formatChatResponse(toolResponse()) }));
    const client = new OpenAI({ apiKey: 'k', baseURL: 'http://gw.test/v1', fetch, maxRetries: 0 });
    const c = await client.chat.completions.create(params);
    expect(calls[0]!.url).toBe('http://gw.test/v1/chat/completions');
    expect(openai.parseChatRequest(calls[0]!.body)).toEqual(conversation());
    expect(c.id).toMatch(/^chatcmpl-/);
    expect(c.choices[0]!.finish_reason).toBe('tool_calls');
    expect(c.choices[0]!.message.content).toBe('Let me check.');
    expect(c.choices[0]!.message.tool_calls).toEqual([
      { id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { id: 'call_1', type: 'function', function: { name: 'get_time', arguments: '{"tz":"CET"}' } },
    ]);
    expect(c.usage).toMatchObject({ prompt_tokens: 120, completion_tokens: 30, total_tokens: 150, prompt_tokens_details: { cached_tokens: 40 } });
  });

  it('accumulates our stream in ChatCompletionStream', async () => {
    const sse = encodeAll(openai.createStreamEncoder({ id: 'r1', model: 'model-x', includeUsage: true }), streamEvents());
    const { fetch, calls } = fakeFetch(() => ({ sse }));
    const client = new OpenAI({ apiKey: 'k', baseURL: 'http://gw.test/v1', fetch, maxRetries: 0 });
    const stream = client.chat.completions.stream({ ...params, stream: true, stream_options: { include_usage: true } });
    const final = await stream.finalChatCompletion();
    const req = openai.parseChatRequest(calls[0]!.body);
    expect(req.stream).toBe(true);
    expect(req.includeUsage).toBe(true);
    const msg = final.choices[0]!.message;
    expect(msg.content).toBe('Héllo wörld ✓ 🌍\n');
    expect(msg.tool_calls?.map((t) => t.type === 'function' && [t.id, t.function.name, JSON.parse(t.function.arguments)])).toEqual([
      ['call_0', 'get_weather', { city: 'Paris' }],
      ['call_1', 'get_time', { tz: 'CET' }],
    ]);
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect(final.usage).toMatchObject({ prompt_tokens: 120, completion_tokens: 30 });
  });

  it('throws an APIError on our stream error', async () => {
    const enc = openai.createStreamEncoder({ id: 'r1', model: 'model-x' });
    const sse = encodeAll(enc, [{ type: 'start', id: 'x', model: 'm' }, { type: 'text', text: 'Hi' }, { type: 'finish', finishReason: 'error' }]);
    const client = new OpenAI({ apiKey: 'k', baseURL: 'http://gw.test/v1', fetch: fakeFetch(() => ({ sse })).fetch, maxRetries: 0 });
    const stream = await client.chat.completions.create({ ...params, stream: true });
    await expect((async () => { for await (const _ of stream) void _; })()).rejects.toThrow('upstream model stream failed');
  });

  it.each(KINDS)('maps error %s to its status and body', async (kind) => {
    const e = openai.formatError(kind, `boom ${kind}`);
    const client = new OpenAI({ apiKey: 'k', baseURL: 'http://gw.test/v1', fetch: fakeFetch(() => ({ status: e.status, json: e.body })).fetch, maxRetries: 0 });
    const err = await client.chat.completions.create(params).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(e.status);
    expect((err as Error).message).toContain(`boom ${kind}`);
  });

  it('lists models and embeds (base64, as the SDK asks)', async () => {
    const { fetch, calls } = fakeFetch((url, body) => {
      if (url.endsWith('/models')) return { json: openai.formatModelList(MODELS) };
      const req = openai.parseEmbeddingRequest(body);
      return { json: openai.formatEmbeddingResponse({ model: req.model, vectors: [[0.5, -1.25, 3], [1, 2, 4]], usage: { inputTokens: 7, outputTokens: 0, cachedTokens: 0 } }, req) };
    });
    const client = new OpenAI({ apiKey: 'k', baseURL: 'http://gw.test/v1', fetch, maxRetries: 0 });
    const models = [];
    for await (const m of client.models.list()) models.push(m);
    expect(models).toEqual([{ id: 'model-x', object: 'model', created: 1735787045, owned_by: 'acme' }]);
    const emb = await client.embeddings.create({ model: 'emb-1', input: ['a', 'b'] });
    expect(openai.parseEmbeddingRequest(calls[1]!.body)).toEqual({ model: 'emb-1', inputs: ['a', 'b'], encodingFormat: 'base64' });
    expect(emb.data.map((d) => Array.from(d.embedding))).toEqual([[0.5, -1.25, 3], [1, 2, 4]]);
    expect(emb.usage.prompt_tokens).toBe(7);
  });
});

describe('anthropic SDK', () => {
  const params: MessageCreateParamsNonStreaming = {
    model: 'model-x',
    max_tokens: 256,
    system: [{ type: 'text', text: 'You are terse.' }],
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }, { type: 'tool_use', id: 'call_0', name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_0', content: '{"tempC":21}' }] },
      { role: 'assistant', content: 'It is 21°C.' },
      { role: 'user', content: [{ type: 'text', text: 'And the time in CET?' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'get_time', input: { tz: 'CET' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'text', text: '14:05' }] }, { type: 'text', text: 'Thanks!' }] },
    ],
    tools: [weatherTool, timeTool].map((t) => ({ name: t.name, description: t.description!, input_schema: t.parameters as { type: 'object' } })),
    tool_choice: { type: 'auto' },
    stop_sequences: ['END'],
  };
  const client = (fetch: ReturnType<typeof fakeFetch>['fetch']) => new Anthropic({ apiKey: 'k', baseURL: 'http://gw.test', fetch, maxRetries: 0 });

  it('sends what parseChatRequest reads and reads formatChatResponse', async () => {
    const { fetch, calls } = fakeFetch(() => ({ json: anthropic.formatChatResponse(toolResponse()) }));
    const m = await client(fetch).messages.create(params);
    expect(calls[0]!.url).toBe('http://gw.test/v1/messages');
    expect(anthropic.parseChatRequest(calls[0]!.body)).toEqual(withoutSampling(conversation()));
    expect(m.id).toMatch(/^msg_/);
    expect(m.stop_reason).toBe('tool_use');
    expect(m.content.map((b) => (b.type === 'text' ? b.text : b.type === 'tool_use' ? [b.id, b.name, b.input] : b.type))).toEqual([
      'Let me check.', ['call_0', 'get_weather', { city: 'Paris' }], ['call_1', 'get_time', { tz: 'CET' }],
    ]);
    expect(m.usage).toMatchObject({ input_tokens: 80, cache_read_input_tokens: 40, output_tokens: 30 });
  });

  it('accumulates our stream in MessageStream', async () => {
    const sse = encodeAll(anthropic.createStreamEncoder({ id: 'r1', model: 'model-x' }), streamEvents());
    const { fetch, calls } = fakeFetch(() => ({ sse }));
    const final = await client(fetch).messages.stream(params).finalMessage();
    expect(anthropic.parseChatRequest(calls[0]!.body).stream).toBe(true);
    expect(final.content.map((b) => (b.type === 'text' ? b.text : b.type === 'tool_use' ? [b.id, b.name, b.input] : b.type))).toEqual([
      'Héllo wörld ✓ 🌍\n', ['call_0', 'get_weather', { city: 'Paris' }], ['call_1', 'get_time', { tz: 'CET' }],
    ]);
    expect(final.stop_reason).toBe('tool_use');
    expect(final.usage).toMatchObject({ input_tokens: 80, cache_read_input_tokens: 40, output_tokens: 30 });
  });

  it('throws on our stream error event', async () => {
    const sse = encodeAll(anthropic.createStreamEncoder({ id: 'r1', model: 'm' }), [{ type: 'text', text: 'Hi' }, { type: 'finish', finishReason: 'error' }]);
    await expect(client(fakeFetch(() => ({ sse })).fetch).messages.stream(params).finalMessage()).rejects.toThrow('upstream model stream failed');
  });

  it.each(KINDS)('maps error %s to its status and type', async (kind) => {
    const e = anthropic.formatError(kind, `boom ${kind}`);
    const err = await client(fakeFetch(() => ({ status: e.status, json: e.body })).fetch).messages.create(params).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(e.status);
    expect((err as InstanceType<typeof Anthropic.APIError>).type).toBe((e.body as { error: { type: string } }).error.type);
    if (kind === 'overloaded') expect(err).toBeInstanceOf(Anthropic.OverloadedError);
  });

  it('lists models and counts tokens', async () => {
    const { fetch, calls } = fakeFetch((url, body) => url.includes('count_tokens')
      ? { json: formatAnthropicCountTokensResponse(parseAnthropicCountTokensRequest(body).messages.length) }
      : { json: anthropic.formatModelList(MODELS) });
    const c = client(fetch);
    const models = [];
    for await (const m of c.models.list()) models.push(m);
    expect(models).toEqual([{ type: 'model', id: 'model-x', display_name: 'Model X', created_at: '2025-01-02T03:04:05.000Z' }]);
    const { max_tokens: _, ...countParams } = params;
    expect(await c.messages.countTokens(countParams)).toEqual({ input_tokens: 8 });
    expect(calls[1]!.url).toBe('http://gw.test/v1/messages/count_tokens');
  });
});

describe('gemini SDK', () => {
  const params: GenerateContentParameters = {
    model: 'model-x',
    contents: [
      { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
      { role: 'model', parts: [{ text: 'Checking.' }, { functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { tempC: 21 } } }] },
      { role: 'model', parts: [{ text: 'It is 21°C.' }] },
      { role: 'user', parts: [{ text: 'And the time in CET?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'get_time', args: { tz: 'CET' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_time', response: { content: '14:05' } } }, { text: 'Thanks!' }] },
    ],
    config: {
      systemInstruction: 'You are terse.',
      tools: [{ functionDeclarations: [weatherTool, timeTool].map((t) => ({ name: t.name, description: t.description, parametersJsonSchema: t.parameters })) }],
      toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.AUTO } },
      maxOutputTokens: 256,
      temperature: 0.5,
      topP: 0.9,
      stopSequences: ['END'],
    },
  };
  let spy: jest.SpyInstance | undefined;
  afterEach(() => spy?.mockRestore());
  function sdk(respond: Parameters<typeof fakeFetch>[0]) {
    const f = fakeFetch(respond);
    spy = jest.spyOn(globalThis, 'fetch').mockImplementation(f.fetch as typeof globalThis.fetch);
    return { ai: new GoogleGenAI({ apiKey: 'k', httpOptions: { baseUrl: 'http://gw.test' } }), calls: f.calls };
  }
  /** The text parts (GenerateContentResponse.text warns when function calls are present). */
  const textOf = (r: { candidates?: Array<{ content?: { parts?: Array<{ text?: string }> } }> }) =>
    (r.candidates?.[0]?.content?.parts ?? []).map((p) => p.text ?? '').join('');
  const fromUrl = (url: string) => {
    const m = /\/v1(?:beta)?\/models\/([^:]+):(\w+)/.exec(url)!;
    return { model: m[1]!, stream: m[2] === 'streamGenerateContent' };
  };

  it('sends what parseChatRequest reads and reads formatChatResponse', async () => {
    const { ai, calls } = sdk(() => ({ json: gemini.formatChatResponse(toolResponse()) }));
    const r = await ai.models.generateContent(params);
    // This SDK release calls /v1 by default (the gateway routes /v1 and /v1beta alike).
    expect(calls[0]!.url).toMatch(/^http:\/\/gw\.test\/v1(beta)?\/models\/model-x:generateContent$/);
    expect(gemini.parseChatRequest(calls[0]!.body, fromUrl(calls[0]!.url))).toEqual(conversation());
    expect(textOf(r)).toBe('Let me check.');
    expect(r.functionCalls?.map((f) => [f.name, f.args])).toEqual([['get_weather', { city: 'Paris' }], ['get_time', { tz: 'CET' }]]);
    expect(r.usageMetadata).toMatchObject({ promptTokenCount: 120, candidatesTokenCount: 30, cachedContentTokenCount: 40 });
  });

  it('reads our stream chunk by chunk', async () => {
    const sse = encodeAll(gemini.createStreamEncoder({ id: 'r1', model: 'model-x' }), streamEvents());
    const { ai, calls } = sdk(() => ({ sse }));
    let text = '';
    const fcs: unknown[] = [];
    let last;
    for await (const chunk of await ai.models.generateContentStream(params)) {
      text += textOf(chunk);
      for (const f of chunk.functionCalls ?? []) fcs.push([f.name, f.args]);
      last = chunk;
    }
    expect(calls[0]!.url).toMatch(/\/models\/model-x:streamGenerateContent\?alt=sse$/);
    expect(gemini.parseChatRequest(calls[0]!.body, fromUrl(calls[0]!.url)).stream).toBe(true);
    expect(text).toBe('Héllo wörld ✓ 🌍\n');
    expect(fcs).toEqual([['get_weather', { city: 'Paris' }], ['get_time', { tz: 'CET' }]]);
    expect(last?.candidates?.[0]?.finishReason).toBe('STOP');
    expect(last?.usageMetadata).toMatchObject({ promptTokenCount: 120, candidatesTokenCount: 30 });
  });

  it('throws on our stream error chunk', async () => {
    const sse = encodeAll(gemini.createStreamEncoder({ id: 'r1', model: 'm' }), [{ type: 'text', text: 'Hi' }, { type: 'finish', finishReason: 'error' }]);
    const { ai } = sdk(() => ({ sse }));
    await expect((async () => { for await (const _ of await ai.models.generateContentStream(params)) void _; })()).rejects.toThrow(/INTERNAL/);
  });

  it.each(KINDS)('maps error %s to its status', async (kind) => {
    const e = gemini.formatError(kind, `boom ${kind}`);
    const { ai } = sdk(() => ({ status: e.status, json: e.body }));
    const err = await ai.models.generateContent(params).catch((x: unknown) => x);
    expect((err as { status: number }).status).toBe(e.status);
    expect((err as Error).message).toContain(`boom ${kind}`);
  });

  it('embeds (batchEmbedContents), counts tokens and lists models', async () => {
    const { ai, calls } = sdk((url, body) => {
      if (url.includes(':batchEmbedContents')) {
        const req = gemini.parseBatchEmbedContentsRequest(body, fromUrl(url));
        return { json: gemini.formatBatchEmbedContentsResponse({ model: req.model, vectors: req.inputs.map((_, i) => [i, 0.5]), usage: { inputTokens: 0, outputTokens: 0, cachedTokens: 0 } }) };
      }
      if (url.includes(':countTokens')) return { json: formatGeminiCountTokensResponse(parseGeminiCountTokensRequest(body, fromUrl(url)).messages.length) };
      return { json: gemini.formatModelList(MODELS) };
    });
    const emb = await ai.models.embedContent({ model: 'emb-1', contents: ['a', 'b'] });
    expect(gemini.parseBatchEmbedContentsRequest(calls[0]!.body, fromUrl(calls[0]!.url))).toEqual({ model: 'emb-1', inputs: ['a', 'b'] });
    expect(emb.embeddings?.map((e) => e.values)).toEqual([[0, 0.5], [1, 0.5]]);
    expect((await ai.models.countTokens({ model: 'model-x', contents: params.contents })).totalTokens).toBe(8);
    const names = [];
    for await (const m of await ai.models.list()) names.push([m.name, m.displayName]);
    expect(names).toEqual([['models/model-x', 'Model X']]);
  });
});

it('text responses read back through each SDK type', () => {
  expect(openai.parseChatResponse(openai.formatChatResponse(textResponse())).content).toEqual(textResponse().content);
});

import Anthropic from '@anthropic-ai/sdk';
import { ApiError, GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { standInEmbedding, startStandIn, type StandIn } from './stand-ins';

/** Every URL the SDKs fetched; anything off loopback is refused and remembered. */
const fetched: string[] = [];
const offLoopback: string[] = [];
const realFetch = globalThis.fetch;

function guardFetch(): void {
  globalThis.fetch = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const href = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const url = new URL(href);
    fetched.push(url.href);
    if (!['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) {
      offLoopback.push(url.href);
      throw new Error(`test refused a non-loopback fetch: ${url.href}`);
    }
    return realFetch(input, init);
  }) as typeof fetch;
}

const silent = { error() {}, warn() {}, info() {}, debug() {} };

let oa: StandIn;
let an: StandIn;
let ge: StandIn;
let openai: OpenAI;
let anthropic: Anthropic;
let gemini: GoogleGenAI;

const weatherTool = {
  name: 'get_weather',
  description: 'Current weather of a city',
  schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

beforeAll(async () => {
  guardFetch();
  [oa, an, ge] = await Promise.all([startStandIn('openai'), startStandIn('anthropic'), startStandIn('gemini')]);
  // Clients are made after the guard is in place: the openai and anthropic SDKs capture fetch when constructed.
  openai = new OpenAI({ apiKey: oa.apiKey, baseURL: oa.baseUrl, maxRetries: 0, logger: silent });
  anthropic = new Anthropic({ apiKey: an.apiKey, baseURL: an.baseUrl, maxRetries: 0, logger: silent });
  gemini = geminiClient(ge.apiKey);
});

/**
 * @google/genai, given no httpOptions.fetch, routes Node fetches through undici's global dispatcher, which it finds
 * on globalThis[Symbol.for('undici.globalDispatcher.1')]; jest's sandbox global lacks it ("Undici globalDispatcher
 * is not available"), so under jest the client needs a fetch of its own.
 */
function geminiClient(apiKey: string, apiVersion: string | null = 'v1beta'): GoogleGenAI {
  // @google/genai 3.x defaults to apiVersion 'v1'; the stand-in serves /v1beta (as the brief names it) and /v1 alike.
  return new GoogleGenAI({
    apiKey,
    vertexai: false,
    httpOptions: { baseUrl: ge.baseUrl, ...(apiVersion === null ? {} : { apiVersion }), fetch: (input, init) => globalThis.fetch(input, init) },
  });
}

afterAll(async () => {
  await Promise.all([oa?.close(), an?.close(), ge?.close()]);
  globalThis.fetch = realFetch;
});

beforeEach(() => {
  for (const s of [oa, an, ge]) {
    s.behavior = {};
    s.clear();
  }
});

afterEach(() => {
  expect(offLoopback).toEqual([]);
});

describe('models lists', () => {
  it('lists models in each vendor shape', async () => {
    const openaiModels = await openai.models.list();
    expect(openaiModels.data.map((m) => m.id)).toEqual(oa.models);
    expect(openaiModels.data[0]).toMatchObject({ object: 'model', owned_by: 'system' });

    const anthropicModels = await anthropic.models.list();
    expect(anthropicModels.data.map((m) => m.id)).toEqual(an.models);
    expect(anthropicModels.data[0]).toMatchObject({ type: 'model' });

    const pager = await gemini.models.list();
    expect(pager.page.map((m) => m.name)).toEqual(ge.models.map((m) => `models/${m}`));
    expect(ge.requests[0]).toMatchObject({ method: 'GET', path: '/v1beta/models' });

    // The SDK's default API version is v1: same routes.
    const v1 = await geminiClient(ge.apiKey, null).models.list();
    expect(v1.page).toHaveLength(ge.models.length);
    expect(ge.requests[1]).toMatchObject({ method: 'GET', path: '/v1/models' });
  });

  it('enforces an explicit model list with the vendor 404', async () => {
    const s = await startStandIn('openai', { models: ['only-model'] });
    try {
      const client = new OpenAI({ apiKey: s.apiKey, baseURL: s.baseUrl, maxRetries: 0, logger: silent });
      await expect(client.chat.completions.create({ model: 'other', messages: [{ role: 'user', content: 'hi' }] })).rejects.toBeInstanceOf(
        OpenAI.NotFoundError,
      );
      const ok = await client.chat.completions.create({ model: 'only-model', messages: [{ role: 'user', content: 'hi' }] });
      expect(ok.choices[0].message.content).toBe('echo: hi');
    } finally {
      await s.close();
    }
  });
});

describe('non-streaming chat', () => {
  it('openai: echo reply and exact usage', async () => {
    const res = await openai.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'hello there' },
      ],
    });
    expect(res.object).toBe('chat.completion');
    expect(res.choices[0]).toMatchObject({ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'echo: hello there' } });
    // 5 words + 3 × 2 messages; reply has 3 words.
    expect(res.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 3, total_tokens: 14, prompt_tokens_details: { cached_tokens: 0 } });
    const seen = oa.requests[0];
    expect(seen).toMatchObject({ method: 'POST', path: '/v1/chat/completions', body: { model: 'gpt-4o-mini' } });
    expect(seen.headers.authorization).toBe(`Bearer ${oa.apiKey}`);
  });

  it('anthropic: echo reply and exact usage (system counts as a message)', async () => {
    const msg = await anthropic.messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 100,
      system: 'You are terse.',
      messages: [{ role: 'user', content: 'hello there' }],
    });
    expect(msg).toMatchObject({ type: 'message', role: 'assistant', stop_reason: 'end_turn', content: [{ type: 'text', text: 'echo: hello there' }] });
    expect(msg.id).toMatch(/^msg_/);
    expect(msg.usage).toMatchObject({ input_tokens: 11, output_tokens: 3, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
    expect(an.requests[0].headers['anthropic-version']).toBeTruthy();
  });

  it('gemini: echo reply and exact usage', async () => {
    const res = await gemini.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: 'hello there',
      config: { systemInstruction: 'You are terse.' },
    });
    expect(res.text).toBe('echo: hello there');
    expect(res.candidates?.[0].finishReason).toBe('STOP');
    expect(res.usageMetadata).toMatchObject({ promptTokenCount: 11, candidatesTokenCount: 3, totalTokenCount: 14 });
    expect(res.usageMetadata?.cachedContentTokenCount).toBeUndefined();
    expect(ge.requests[0]).toMatchObject({ method: 'POST', path: '/v1beta/models/gemini-2.5-flash:generateContent' });
    expect(ge.requests[0].headers['x-goog-api-key']).toBe(ge.apiKey);
  });

  it('reports half the input as cached when the system prompt says "cache me"', async () => {
    // 'cache me please' (3) + 'hi' (1) + 3 × 2 = 10 → 5 cached.
    const o = await openai.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'cache me please' },
        { role: 'user', content: 'hi' },
      ],
    });
    expect(o.usage).toMatchObject({ prompt_tokens: 10, prompt_tokens_details: { cached_tokens: 5 } });

    const a = await anthropic.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 50, system: 'cache me please', messages: [{ role: 'user', content: 'hi' }] });
    expect(a.usage).toMatchObject({ input_tokens: 5, cache_read_input_tokens: 5 });

    const g = await gemini.models.generateContent({ model: 'gemini-2.5-flash', contents: 'hi', config: { systemInstruction: 'cache me please' } });
    expect(g.usageMetadata).toMatchObject({ promptTokenCount: 10, cachedContentTokenCount: 5 });
  });

  it('cuts the reply at the max-tokens limit with the vendor finish reason', async () => {
    oa.behavior.reply = an.behavior.reply = ge.behavior.reply = 'one two three four five';
    const o = await openai.chat.completions.create({ model: 'gpt-4o-mini', max_completion_tokens: 2, messages: [{ role: 'user', content: 'go' }] });
    expect(o.choices[0]).toMatchObject({ finish_reason: 'length', message: { content: 'one two' } });
    const a = await anthropic.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 2, messages: [{ role: 'user', content: 'go' }] });
    expect(a).toMatchObject({ stop_reason: 'max_tokens', usage: { output_tokens: 2 } });
    const g = await gemini.models.generateContent({ model: 'gemini-2.5-flash', contents: 'go', config: { maxOutputTokens: 2 } });
    expect(g.candidates?.[0].finishReason).toBe('MAX_TOKENS');
    expect(g.text).toBe('one two');
  });
});

describe('streaming chat', () => {
  const prompt = 'one two three four five';
  const expected = `echo: ${prompt}`; // 6 words → 3 chunks of 2

  it('openai: stream helper collects text, chunks and final usage', async () => {
    const deltas: string[] = [];
    const stream = openai.chat.completions.stream({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: prompt }],
      stream_options: { include_usage: true },
    });
    stream.on('content', (delta) => deltas.push(delta));
    const final = await stream.finalChatCompletion();
    expect(deltas.filter((d) => d !== '')).toEqual(['echo: one ', 'two three ', 'four five']);
    expect(final.choices[0].message.content).toBe(expected);
    expect(final.choices[0].finish_reason).toBe('stop');
    expect(final.usage).toMatchObject({ prompt_tokens: 8, completion_tokens: 6, total_tokens: 14 });
  });

  it('openai: raw stream ends with a usage chunk with no choices, then [DONE]', async () => {
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    const stream = await openai.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: prompt }],
      stream: true,
      stream_options: { include_usage: true },
    });
    for await (const chunk of stream) chunks.push(chunk);
    const last = chunks[chunks.length - 1];
    expect(last.choices).toEqual([]);
    expect(last.usage?.completion_tokens).toBe(6);
    expect(chunks[chunks.length - 2].choices[0].finish_reason).toBe('stop');

    // Without include_usage there is no usage chunk.
    const plain = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: prompt }], stream: true });
    const plainChunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of plain) plainChunks.push(chunk);
    expect(plainChunks.every((c) => c.choices.length === 1 && !c.usage)).toBe(true);
  });

  it('anthropic: MessageStream collects text and the final usage', async () => {
    const texts: string[] = [];
    const types: string[] = [];
    const stream = anthropic.messages.stream({ model: 'claude-sonnet-4-6', max_tokens: 100, messages: [{ role: 'user', content: prompt }] });
    stream.on('text', (t) => texts.push(t));
    stream.on('streamEvent', (e) => types.push(e.type));
    const final = await stream.finalMessage();
    expect(texts).toEqual(['echo: one ', 'two three ', 'four five']);
    expect(types).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(final.content).toEqual([expect.objectContaining({ type: 'text', text: expected })]);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage).toMatchObject({ input_tokens: 8, output_tokens: 6 });
  });

  it('gemini: SSE chunks carry the text, usageMetadata on the last', async () => {
    const stream = await gemini.models.generateContentStream({ model: 'gemini-2.5-flash', contents: prompt });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((c) => c.text)).toEqual(['echo: one ', 'two three ', 'four five']);
    expect(chunks.slice(0, -1).every((c) => c.usageMetadata === undefined)).toBe(true);
    expect(chunks[2].usageMetadata).toMatchObject({ promptTokenCount: 8, candidatesTokenCount: 6, totalTokenCount: 14 });
    expect(chunks[2].candidates?.[0].finishReason).toBe('STOP');
    expect(ge.requests[0]).toMatchObject({ path: '/v1beta/models/gemini-2.5-flash:streamGenerateContent', query: { alt: 'sse' } });
  });

  it('writes each chunk as it is produced (chunkDelayMs spaces their arrival)', async () => {
    oa.behavior.chunkDelayMs = 60;
    const arrivals: number[] = [];
    const stream = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: prompt }], stream: true });
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content) arrivals.push(Date.now());
    expect(arrivals).toHaveLength(3);
    expect(arrivals[2] - arrivals[0]).toBeGreaterThanOrEqual(100);
  });
});

describe('tool calls', () => {
  it('openai: tool call, streamed arguments in 2 deltas, then the tool result', async () => {
    const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
      { type: 'function', function: { name: weatherTool.name, description: weatherTool.description, parameters: weatherTool.schema } },
    ];
    const question = { role: 'user' as const, content: 'what is the weather in Paris?' };
    const res = await openai.chat.completions.create({ model: 'gpt-4o-mini', tools, messages: [question] });
    const call = res.choices[0].message.tool_calls?.[0];
    expect(res.choices[0].finish_reason).toBe('tool_calls');
    expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } });
    expect(call?.id).toMatch(/^call_/);
    expect(res.usage?.completion_tokens).toBe(5);

    const stream = await openai.chat.completions.create({ model: 'gpt-4o-mini', tools, messages: [question], stream: true });
    const argDeltas: string[] = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      for (const tc of chunk.choices[0]?.delta.tool_calls ?? []) if (tc.function?.arguments) argDeltas.push(tc.function.arguments);
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(argDeltas).toHaveLength(2);
    expect(argDeltas.join('')).toBe('{"city":"Paris"}');
    expect(finish).toBe('tool_calls');

    const helper = await openai.chat.completions.stream({ model: 'gpt-4o-mini', tools, messages: [question] }).finalChatCompletion();
    expect(helper.choices[0].message.tool_calls?.[0]).toMatchObject({ function: { name: 'get_weather', arguments: '{"city":"Paris"}' } });

    const answer = await openai.chat.completions.create({
      model: 'gpt-4o-mini',
      tools,
      messages: [question, res.choices[0].message, { role: 'tool', tool_call_id: call!.id, content: 'sunny' }],
    });
    expect(answer.choices[0].message.content).toBe('the weather is sunny');
  });

  it('anthropic: tool_use, input_json_delta in 2 parts, then the tool result', async () => {
    const tools: Anthropic.Tool[] = [{ name: weatherTool.name, description: weatherTool.description, input_schema: weatherTool.schema as Anthropic.Tool.InputSchema }];
    const question = { role: 'user' as const, content: 'what is the weather in Paris?' };
    const msg = await anthropic.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 100, tools, messages: [question] });
    expect(msg.stop_reason).toBe('tool_use');
    const use = msg.content[0];
    expect(use).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } });
    expect(use.type === 'tool_use' && use.id).toMatch(/^toolu_/);
    expect(msg.usage.output_tokens).toBe(5);

    const parts: string[] = [];
    const stream = anthropic.messages.stream({ model: 'claude-sonnet-4-6', max_tokens: 100, tools, messages: [question] });
    stream.on('inputJson', (partial) => parts.push(partial));
    const final = await stream.finalMessage();
    expect(parts).toEqual(['{"city":', '"Paris"}']);
    expect(final.content[0]).toMatchObject({ type: 'tool_use', input: { city: 'Paris' } });
    expect(final.stop_reason).toBe('tool_use');

    const answer = await anthropic.messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 100,
      tools,
      messages: [
        question,
        { role: 'assistant', content: msg.content as Anthropic.ContentBlockParam[] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: (use as Anthropic.ToolUseBlock).id, content: 'sunny' }] },
      ],
    });
    expect(answer.content[0]).toMatchObject({ type: 'text', text: 'the weather is sunny' });
  });

  it('gemini: functionCall (plain and streamed), then the function response', async () => {
    const tools = [{ functionDeclarations: [{ name: weatherTool.name, description: weatherTool.description, parametersJsonSchema: weatherTool.schema }] }];
    const res = await gemini.models.generateContent({ model: 'gemini-2.5-flash', contents: 'what is the weather in Paris?', config: { tools } });
    expect(res.functionCalls).toEqual([expect.objectContaining({ name: 'get_weather', args: { city: 'Paris' } })]);
    expect(res.usageMetadata?.candidatesTokenCount).toBe(5);

    const stream = await gemini.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'what is the weather in Paris?', config: { tools } });
    const calls = [];
    for await (const chunk of stream) calls.push(...(chunk.functionCalls ?? []));
    expect(calls).toEqual([expect.objectContaining({ name: 'get_weather', args: { city: 'Paris' } })]);

    const answer = await gemini.models.generateContent({
      model: 'gemini-2.5-flash',
      config: { tools },
      contents: [
        { role: 'user', parts: [{ text: 'what is the weather in Paris?' }] },
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { result: 'sunny' } } }] },
      ],
    });
    expect(answer.text).toBe('the weather is sunny');
  });
});

describe('embeddings and token counts', () => {
  it('openai embeddings: deterministic 8-vectors (base64 default and float) and prompt_tokens', async () => {
    const res = await openai.embeddings.create({ model: 'text-embedding-3-small', input: ['hello world', 'one two three'] });
    expect(res.data.map((d) => d.embedding)).toEqual([standInEmbedding('hello world'), standInEmbedding('one two three')]);
    expect(res.usage).toEqual({ prompt_tokens: 5, total_tokens: 5 });
    expect(oa.requests[0].body.encoding_format).toBe('base64');

    const floats = await openai.embeddings.create({ model: 'text-embedding-3-small', input: 'hello world', encoding_format: 'float' });
    expect(floats.data[0].embedding).toEqual(standInEmbedding('hello world'));
    expect(floats.data[0].embedding).toHaveLength(8);
  });

  it('gemini embeddings: the SDK calls batchEmbedContents; embedContent answers too', async () => {
    const res = await gemini.models.embedContent({ model: 'gemini-embedding-001', contents: ['hello world', 'one two three'] });
    expect(res.embeddings?.map((e) => e.values)).toEqual([standInEmbedding('hello world'), standInEmbedding('one two three')]);
    expect(ge.requests[0].path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');

    const raw = await fetch(`${ge.baseUrl}/v1beta/models/gemini-embedding-001:embedContent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': ge.apiKey },
      body: JSON.stringify({ content: { parts: [{ text: 'hello world' }] } }),
    });
    expect(await raw.json()).toEqual({ embedding: { values: standInEmbedding('hello world') } });
  });

  it('anthropic count_tokens and gemini countTokens', async () => {
    const a = await anthropic.messages.countTokens({
      model: 'claude-sonnet-4-6',
      system: 'You are terse.',
      messages: [{ role: 'user', content: 'hello there' }],
    });
    expect(a).toEqual({ input_tokens: 11 });
    const g = await gemini.models.countTokens({ model: 'gemini-2.5-flash', contents: 'hello there' });
    expect(g.totalTokens).toBe(5);
  });
});

describe('failures', () => {
  it('429 surfaces as the SDK rate-limit error with retry-after', async () => {
    oa.behavior.failWith = an.behavior.failWith = ge.behavior.failWith = 429;
    const o = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(o).toBeInstanceOf(OpenAI.RateLimitError);
    expect((o as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after')).toBe('1');
    expect((o as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('rate_limit_exceeded');

    const a = await anthropic.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(a).toBeInstanceOf(Anthropic.RateLimitError);
    expect((a as InstanceType<typeof Anthropic.RateLimitError>).type).toBe('rate_limit_error');

    const g = await gemini.models.generateContent({ model: 'gemini-2.5-flash', contents: 'hi' }).catch((e: unknown) => e);
    expect(g).toBeInstanceOf(ApiError);
    expect((g as ApiError).status).toBe(429);
    expect((g as ApiError).message).toContain('RESOURCE_EXHAUSTED');
  });

  it('failTimes fails only the next N requests', async () => {
    oa.behavior = { failWith: 503, failTimes: 1 };
    await expect(openai.models.list()).rejects.toBeInstanceOf(OpenAI.InternalServerError);
    await expect(openai.models.list()).resolves.toBeDefined();
    expect(oa.behavior.failTimes).toBe(0);
  });

  it('malformed streams surface as SDK errors', async () => {
    oa.behavior.malformedStream = an.behavior.malformedStream = ge.behavior.malformedStream = true;
    const o = openai.chat.completions.stream({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'one two three four five' }] });
    await expect(o.finalChatCompletion()).rejects.toThrow(/malformed/);

    // MessageStream wraps the JSON SyntaxError in an AnthropicError.
    const a = anthropic.messages.stream({ model: 'claude-sonnet-4-6', max_tokens: 100, messages: [{ role: 'user', content: 'one two three' }] });
    await expect(a.finalMessage()).rejects.toThrow(/JSON/);

    const g = await gemini.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'one two three' });
    const seen: Array<string | undefined> = [];
    await expect(
      (async () => {
        for await (const chunk of g) seen.push(chunk.text);
      })(),
    ).rejects.toThrow(/JSON/); // a SyntaxError from Response.json() (outer realm under jest, so not instanceof SyntaxError)
    expect(seen).toEqual(['echo: ']);
  });

  it('a dropped stream surfaces as an error after the first chunks', async () => {
    oa.behavior.dropMidStream = true;
    const texts: string[] = [];
    const stream = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'one two three four five' }], stream: true });
    await expect(
      (async () => {
        for await (const chunk of stream) if (chunk.choices[0]?.delta.content) texts.push(chunk.choices[0].delta.content);
      })(),
    ).rejects.toThrow();
    expect(texts).toEqual(['echo: one ']);
  });

  it('delayMs holds the response head (SDK timeout fires)', async () => {
    oa.behavior.delayMs = 400;
    const quick = new OpenAI({ apiKey: oa.apiKey, baseURL: oa.baseUrl, maxRetries: 0, timeout: 100, logger: silent });
    // Plain Node gives APIConnectionTimeoutError; under jest the AbortError (a DOMException of the outer realm) fails
    // the SDK's `instanceof Error`, so it surfaces as its parent class APIConnectionError.
    await expect(quick.models.list()).rejects.toBeInstanceOf(OpenAI.APIConnectionError);
    const started = Date.now();
    await openai.models.list();
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
  });

  it('close() ends at once, cutting requests still waiting', async () => {
    const s = await startStandIn('anthropic', { behavior: { delayMs: 30_000 } });
    const client = new Anthropic({ apiKey: s.apiKey, baseURL: s.baseUrl, maxRetries: 0, logger: silent });
    const pending = client.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    while (s.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const started = Date.now();
    await s.close();
    expect(await pending).toBeInstanceOf(Anthropic.APIConnectionError);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('a wrong key is 401 in each vendor shape', async () => {
    const o = new OpenAI({ apiKey: 'wrong', baseURL: oa.baseUrl, maxRetries: 0, logger: silent });
    await expect(o.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    const a = new Anthropic({ apiKey: 'wrong', baseURL: an.baseUrl, maxRetries: 0, logger: silent });
    const aErr = await a.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(aErr).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((aErr as InstanceType<typeof Anthropic.AuthenticationError>).error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    const g = geminiClient('wrong');
    const gErr = await g.models.generateContent({ model: 'gemini-2.5-flash', contents: 'hi' }).catch((e: unknown) => e);
    expect(gErr).toBeInstanceOf(ApiError);
    expect((gErr as ApiError).status).toBe(401);
    // ?key= works for gemini too.
    const viaQuery = await fetch(`${ge.baseUrl}/v1beta/models?key=${ge.apiKey}`);
    expect(viaQuery.status).toBe(200);
  });

  it('validates requests like the real APIs (400 in vendor shape)', async () => {
    await expect(
      openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'tool', tool_call_id: 'call_x', content: 'sunny' }] }),
    ).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [] })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(
      anthropic.messages.create({
        model: 'claude-sonnet-4-6',
        max_tokens: 10,
        messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'sunny' }] }],
      }),
    ).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    const noVersion = await fetch(`${an.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': an.apiKey },
      body: JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(noVersion.status).toBe(400);
    expect(await noVersion.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: 'anthropic-version: header is required' } });
    const gErr = await gemini.models
      .generateContent({ model: 'gemini-2.5-flash', contents: [{ role: 'assistant', parts: [{ text: 'hi' }] }] })
      .catch((e: unknown) => e);
    expect(gErr).toBeInstanceOf(ApiError);
    expect((gErr as ApiError).status).toBe(400);
    expect((gErr as ApiError).message).toContain('Please use a valid role: user, model.');
  });
});

describe('loopback only', () => {
  it('every SDK request went to 127.0.0.1', () => {
    expect(fetched.length).toBeGreaterThan(0);
    expect(fetched.every((href) => new URL(href).hostname === '127.0.0.1')).toBe(true);
  });
});

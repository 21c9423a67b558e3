import type Anthropic from '@anthropic-ai/sdk';
import { Type } from '@google/genai';
import type OpenAI from 'openai';
import { startStandIn, type StandIn } from '../../subgraphs/ai/testing/stand-ins';
import { startProxyBench, type ProxyBench } from './proxy-fixture';

/**
 * Client and upstream speak different vendors: the proxy translates requests, answers and streams
 * (system prompt, multi-turn, tool definitions, tool calls and results) through the canonical form.
 */
let bench: ProxyBench;
let oa: StandIn;
let an: StandIn;
let ge: StandIn;
let ws: string;
/** Keys whose pool holds one upstream of the named vendor. */
let toAnthropic: string;
let toGemini: string;
let toOpenai: string;

beforeAll(async () => {
  [bench, oa, an, ge] = await Promise.all([startProxyBench(), startStandIn('openai'), startStandIn('anthropic'), startStandIn('gemini')]);
  ws = bench.workspace();
  toAnthropic = (await bench.key(ws, await bench.pool(ws, 'fallback', [{ upstreamId: await bench.upstream(ws, an, { modelMap: { 'gpt-4o-mini': 'claude-haiku-4-5' } }) }]))).key;
  toGemini = (await bench.key(ws, await bench.pool(ws, 'fallback', [{ upstreamId: await bench.upstream(ws, ge) }]))).key;
  toOpenai = (await bench.key(ws, await bench.pool(ws, 'fallback', [{ upstreamId: await bench.upstream(ws, oa) }]))).key;
});

afterAll(async () => {
  await Promise.all([bench?.stop(), oa?.close(), an?.close(), ge?.close()]);
});


const openaiTool: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Current weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

describe('openai SDK → anthropic upstream', () => {
  it('system prompt and multi-turn, non-streaming, with the model renamed', async () => {
    const completion = await bench.openai(toAnthropic).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
        { role: 'user', content: 'how are you' },
      ],
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0].message.content).toBe('echo: how are you');
    const seen = an.requests.at(-1)!;
    expect(seen.path).toBe('/v1/messages');
    expect(seen.body).toMatchObject({ model: 'claude-haiku-4-5', system: 'be brief' });
    expect(seen.body.messages).toHaveLength(3);
    // (2 + 3) + (1 + 3) + (1 + 3) + (3 + 3) = 19 in, "echo: how are you" = 4 out.
    expect(completion.usage).toMatchObject({ prompt_tokens: 19, completion_tokens: 4 });
    expect(await bench.lastRow()).toMatchObject({ client_api: 'openai', upstream_api: 'anthropic', model: 'claude-haiku-4-5', input_tokens: 19, output_tokens: 4, status: 200, streamed: false });
  });

  it('a tool call round trip (definition → call → result → answer)', async () => {
    const client = bench.openai(toAnthropic);
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'what is the weather in Paris' }];
    const first = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, tools: [openaiTool] });
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    const call = first.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(call.function).toEqual({ name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(an.requests.at(-1)!.body.tools).toEqual([expect.objectContaining({ name: 'get_weather', input_schema: expect.objectContaining({ type: 'object' }) })]);

    messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: 'sunny' });
    const second = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, tools: [openaiTool] });
    expect(second.choices[0].message.content).toBe('the weather is sunny');
    const lastMessage = an.requests.at(-1)!.body.messages.at(-1);
    expect(lastMessage.content[0]).toMatchObject({ type: 'tool_result', content: 'sunny' });
    const row = await bench.lastRow();
    expect(row).toMatchObject({ input_tokens: second.usage!.prompt_tokens, output_tokens: 4 });
  });

  it('streaming, text and a tool call, usage counted and shown when asked', async () => {
    const client = bench.openai(toAnthropic);
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'count to three' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('echo: count to three');
    expect(usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 4 });
    expect(await bench.lastRow()).toMatchObject({ upstream_api: 'anthropic', input_tokens: 6, output_tokens: 4, streamed: true, error: null, status: 200 });

    const tools = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'weather in Paris?' }], tools: [openaiTool], stream: true });
    let name = '';
    let args = '';
    let finish: string | null = null;
    for await (const chunk of tools) {
      const delta = chunk.choices[0]?.delta;
      for (const tc of delta?.tool_calls ?? []) {
        name += tc.function?.name ?? '';
        args += tc.function?.arguments ?? '';
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect({ name, args: JSON.parse(args), finish }).toEqual({ name: 'get_weather', args: { city: 'Paris' }, finish: 'tool_calls' });
    expect(await bench.lastRow()).toMatchObject({ output_tokens: 5, streamed: true });
  });
});

describe('anthropic SDK → gemini upstream', () => {
  const tool: Anthropic.Tool = { name: 'get_weather', description: 'Current weather of a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

  it('system prompt, tool call round trip, non-streaming', async () => {
    const client = bench.anthropic(toGemini);
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'what is the weather in Paris' }];
    const first = await client.messages.create({ model: 'gemini-2.5-flash', max_tokens: 200, system: 'you are terse', messages, tools: [tool] });
    expect(first.stop_reason).toBe('tool_use');
    const use = first.content.find((block): block is Anthropic.ToolUseBlock => block.type === 'tool_use')!;
    expect(use).toMatchObject({ name: 'get_weather', input: { city: 'Paris' } });
    const seen = ge.requests.at(-1)!;
    expect(seen.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(seen.body.systemInstruction).toBeDefined();
    expect(seen.body.tools[0].functionDeclarations[0].name).toBe('get_weather');

    messages.push({ role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'rainy' }] });
    const second = await client.messages.create({ model: 'gemini-2.5-flash', max_tokens: 200, system: 'you are terse', messages, tools: [tool] });
    expect(second.content).toEqual([expect.objectContaining({ type: 'text', text: 'the weather is rainy' })]);
    const row = await bench.lastRow();
    expect(row).toMatchObject({ client_api: 'anthropic', upstream_api: 'gemini', input_tokens: second.usage.input_tokens, output_tokens: 4, status: 200 });
  });

  it('streaming', async () => {
    const stream = bench.anthropic(toGemini).messages.stream({ model: 'gemini-2.5-flash', max_tokens: 200, messages: [{ role: 'user', content: 'one two' }] });
    let text = '';
    stream.on('text', (delta) => (text += delta));
    const final = await stream.finalMessage();
    expect(text).toBe('echo: one two');
    expect(final.usage.output_tokens).toBe(3);
    expect(ge.requests.at(-1)!.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent');
    expect(await bench.lastRow()).toMatchObject({ upstream_api: 'gemini', input_tokens: 5, output_tokens: 3, streamed: true, error: null });
  });

  it('count_tokens is counted by the gemini member', async () => {
    const count = await bench.anthropic(toGemini).messages.countTokens({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'a b c d' }] });
    expect(count.input_tokens).toBe(7);
    expect(await bench.lastRow()).toMatchObject({ operation: 'count_tokens', upstream_api: 'gemini', input_tokens: 0 });
  });
});

describe('genai SDK → openai upstream', () => {
  it('generateContent with a function call round trip, and a stream', async () => {
    const client = bench.gemini(toOpenai);
    const declarations = [{ name: 'get_weather', description: 'Current weather of a city', parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ['city'] } }];
    const first = await client.models.generateContent({
      model: 'gpt-4o-mini',
      contents: [{ role: 'user', parts: [{ text: 'weather in Paris please' }] }],
      config: { tools: [{ functionDeclarations: declarations }], systemInstruction: 'be exact' },
    });
    expect(first.functionCalls?.[0]).toMatchObject({ name: 'get_weather', args: { city: 'Paris' } });
    const seen = oa.requests.at(-1)!;
    expect(seen.path).toBe('/v1/chat/completions');
    expect(seen.body.messages[0]).toEqual({ role: 'system', content: 'be exact' });

    const second = await client.models.generateContent({
      model: 'gpt-4o-mini',
      contents: [
        { role: 'user', parts: [{ text: 'weather in Paris please' }] },
        { role: 'model', parts: [{ functionCall: first.functionCalls![0] }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', id: first.functionCalls![0].id, response: { output: 'foggy' } } }] },
      ],
      config: { tools: [{ functionDeclarations: declarations }], systemInstruction: 'be exact' },
    });
    // The function response object reaches OpenAI as its JSON text (the protocol library's choice).
    expect(second.text).toMatch(/^the weather is .*foggy/);
    const sent = oa.requests.at(-1)!.body.messages;
    expect(sent.at(-1)).toMatchObject({ role: 'tool', tool_call_id: sent.at(-2).tool_calls[0].id });
    expect(await bench.lastRow()).toMatchObject({ client_api: 'gemini', upstream_api: 'openai', output_tokens: 4, input_tokens: second.usageMetadata!.promptTokenCount });

    const stream = await client.models.generateContentStream({ model: 'gpt-4o-mini', contents: 'stream this now' });
    let text = '';
    for await (const chunk of stream) text += chunk.text ?? '';
    expect(text).toBe('echo: stream this now');
    expect(await bench.lastRow()).toMatchObject({ input_tokens: 6, output_tokens: 4, streamed: true, error: null });
  });

  it('embeddings: genai SDK → openai upstream, and openai SDK → gemini upstream', async () => {
    const viaOpenai = await bench.gemini(toOpenai).models.embedContent({ model: 'text-embedding-3-small', contents: ['alpha', 'beta gamma'] });
    expect(viaOpenai.embeddings).toHaveLength(2);
    expect(await bench.lastRow()).toMatchObject({ operation: 'embeddings', client_api: 'gemini', upstream_api: 'openai', input_tokens: 3, status: 200 });

    const viaGemini = await bench.openai(toGemini).embeddings.create({ model: 'gemini-embedding-001', input: 'alpha beta' });
    expect(viaGemini.data[0].embedding).toHaveLength(8);
    expect((await bench.lastRow()).upstream_api).toBe('gemini');
  });
});

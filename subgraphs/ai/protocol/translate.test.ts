import { ANTHROPIC_DEFAULT_MAX_TOKENS, anthropic, gemini, openai, protocols, type ChatRequest, type ChatResponse, type VendorApi, type VendorProtocol } from './index';
import { conversation, textResponse, toolResponse, withoutSampling } from './test-fixtures';

const APIS: VendorApi[] = ['openai', 'anthropic', 'gemini'];

/** format → parse through one vendor, as the gateway would see the body on the other side. */
function viaRequest(p: VendorProtocol, req: ChatRequest): ChatRequest {
  const { path, body } = p.formatChatRequest(req);
  const wire: unknown = JSON.parse(JSON.stringify(body));
  if (p.api !== 'gemini') return p.parseChatRequest(wire);
  const m = /^\/v1beta\/models\/([^:]+):(\w+)/.exec(path)!;
  return p.parseChatRequest(wire, { model: m[1]!, stream: m[2] === 'streamGenerateContent' });
}

function viaResponse(p: VendorProtocol, res: ChatResponse): ChatResponse {
  return p.parseChatResponse(JSON.parse(JSON.stringify(p.formatChatResponse(res))));
}

/** What survives a vendor: Anthropic's current API has no temperature/top_p. */
const expected = (apis: VendorApi[], req: ChatRequest) => (apis.includes('anthropic') ? withoutSampling(req) : req);

describe('requests', () => {
  it.each(APIS)('%s: parse ∘ format is the identity', (api) => {
    expect(viaRequest(protocols[api], conversation())).toEqual(expected([api], conversation()));
  });

  it.each(APIS.flatMap((a) => APIS.map((b) => [a, b] as const)))('%s client → %s upstream keeps the conversation', (a, b) => {
    const fromClient = viaRequest(protocols[a], conversation());
    expect(viaRequest(protocols[b], fromClient)).toEqual(expected([a, b], conversation()));
  });

  it('chains through all three vendors in every order', () => {
    for (const order of [['openai', 'anthropic', 'gemini'], ['gemini', 'openai', 'anthropic'], ['anthropic', 'gemini', 'openai']] as VendorApi[][]) {
      let req = conversation();
      for (const api of order) req = viaRequest(protocols[api], req);
      expect(req).toEqual(withoutSampling(conversation()));
    }
  });

  it('openai: system as first message, max_completion_tokens, stream_options on streams', () => {
    const { path, body } = openai.formatChatRequest({ ...conversation(), stream: true });
    expect(path).toBe('/chat/completions');
    expect(body).toMatchObject({
      messages: expect.arrayContaining([{ role: 'system', content: 'You are terse.' }]),
      max_completion_tokens: 256,
      stream: true,
      stream_options: { include_usage: true },
      tool_choice: 'auto',
    });
    const b = body as { messages: Array<{ role: string; content: unknown; tool_calls?: unknown }> };
    expect(b.messages[0]!.role).toBe('system');
    expect(b.messages[6]).toEqual({ role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_time', arguments: '{"tz":"CET"}' } }] });
    expect(b.messages[7]).toEqual({ role: 'tool', tool_call_id: 'call_1', content: '14:05' });
  });

  it('openai: reads developer/system messages, max_tokens, string stop, named tool_choice', () => {
    const req = openai.parseChatRequest({
      model: 'm',
      messages: [{ role: 'system', content: 'A' }, { role: 'developer', content: [{ type: 'text', text: 'B' }] }, { role: 'user', content: 'hi' }],
      max_tokens: 9,
      stop: 'X',
      tool_choice: { type: 'function', function: { name: 'f' } },
      stream: true,
    });
    expect(req).toEqual({ model: 'm', system: 'A\n\nB', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], maxTokens: 9, stop: ['X'], toolChoice: { name: 'f' }, stream: true });
  });

  it('anthropic: top-level system, tool_use/tool_result blocks, merged user turn, default max_tokens', () => {
    const { path, body } = anthropic.formatChatRequest({ ...conversation(), maxTokens: undefined, toolChoice: { name: 'get_time' } });
    expect(path).toBe('/v1/messages');
    const b = body as { max_tokens: number; system: string; tool_choice: unknown; messages: Array<{ role: string; content: unknown }>; tools: unknown[] };
    expect(b.max_tokens).toBe(ANTHROPIC_DEFAULT_MAX_TOKENS);
    expect(b.system).toBe('You are terse.');
    expect(b.tool_choice).toEqual({ type: 'tool', name: 'get_time' });
    expect(b.tools[0]).toEqual({ name: 'get_weather', description: 'Current weather of a city', input_schema: conversation().tools![0]!.parameters });
    expect(b.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user']);
    expect(b.messages[1]!.content).toEqual([{ type: 'text', text: 'Checking.' }, { type: 'tool_use', id: 'call_0', name: 'get_weather', input: { city: 'Paris' } }]);
    expect(b.messages[6]!.content).toEqual([{ type: 'tool_result', tool_use_id: 'call_1', content: '14:05' }, { type: 'text', text: 'Thanks!' }]);
    expect(b.messages[0]!.content).toBe('Weather in Paris?');
    expect(body).not.toHaveProperty('temperature');
  });

  it('anthropic: system blocks and system-role messages; tool ids made valid', () => {
    const req = anthropic.parseChatRequest({
      model: 'm', max_tokens: 5,
      system: [{ type: 'text', text: 'A' }, { type: 'text', text: 'B' }],
      messages: [{ role: 'system', content: 'C' }, { role: 'user', content: 'hi' }],
      tool_choice: { type: 'any' },
    });
    expect(req).toMatchObject({ system: 'A\nB\n\nC', toolChoice: 'required', maxTokens: 5 });
    const { body } = anthropic.formatChatRequest({
      model: 'm', stream: false,
      messages: [{ role: 'assistant', content: [{ type: 'tool_call', id: 'functions.get:0', name: 'get', arguments: 'not json' }] }],
    });
    expect((body as { messages: Array<{ content: unknown }> }).messages[0]!.content).toEqual([{ type: 'tool_use', id: 'functions_get_0', name: 'get', input: {} }]);
  });

  it('gemini: systemInstruction, model/user roles, functionCall/functionResponse, toolConfig, generationConfig', () => {
    const { path, body } = gemini.formatChatRequest({ ...conversation(), toolChoice: { name: 'get_time' } });
    expect(path).toBe('/v1beta/models/model-x:generateContent');
    expect(gemini.formatChatRequest({ ...conversation(), stream: true }).path).toBe('/v1beta/models/model-x:streamGenerateContent?alt=sse');
    expect(body).toMatchObject({
      systemInstruction: { parts: [{ text: 'You are terse.' }] },
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_time'] } },
      generationConfig: { maxOutputTokens: 256, temperature: 0.5, topP: 0.9, stopSequences: ['END'] },
      tools: [{ functionDeclarations: [{ name: 'get_weather', description: 'Current weather of a city', parametersJsonSchema: conversation().tools![0]!.parameters }, expect.anything()] }],
    });
    const contents = (body as { contents: Array<{ role: string; parts: unknown[] }> }).contents;
    expect(contents.map((c) => c.role)).toEqual(['user', 'model', 'user', 'model', 'user', 'model', 'user']);
    expect(contents[2]!.parts).toEqual([{ functionResponse: { name: 'get_weather', response: { tempC: 21 } } }]);
    expect(contents[6]!.parts).toEqual([{ functionResponse: { name: 'get_time', response: { content: '14:05' } } }, { text: 'Thanks!' }]);
  });

  it('gemini: snake_case fields, OpenAPI Schema parameters, thought parts, ids by name, modes', () => {
    const req = gemini.parseChatRequest({
      system_instruction: { parts: [{ text: 'S' }] },
      contents: [
        { parts: [{ text: 'q' }] },
        { role: 'model', parts: [{ text: 'hmm', thought: true }, { function_call: { name: 'f', args: { a: 1 } } }, { functionCall: { name: 'g' } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'g', response: { ok: true } } }, { functionResponse: { name: 'f', response: { content: 'x' } } }] },
      ],
      tools: [{ function_declarations: [{ name: 'f', parameters: { type: 'OBJECT', properties: { a: { type: 'INTEGER', nullable: true } }, propertyOrdering: ['a'] } }] }],
      tool_config: { function_calling_config: { mode: 'ANY' } },
      generation_config: { max_output_tokens: 7, stop_sequences: ['Z'] },
    }, { model: 'models/gm', stream: true });
    expect(req).toEqual({
      model: 'gm', system: 'S', stream: true, maxTokens: 7, stop: ['Z'], toolChoice: 'required',
      tools: [{ name: 'f', parameters: { type: 'object', properties: { a: { type: ['integer', 'null'] } } } }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'q' }] },
        { role: 'assistant', content: [{ type: 'tool_call', id: 'call_0', name: 'f', arguments: '{"a":1}' }, { type: 'tool_call', id: 'call_1', name: 'g', arguments: '{}' }] },
        { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'call_1', name: 'g', content: '{"ok":true}' }, { type: 'tool_result', toolCallId: 'call_0', name: 'f', content: 'x' }] },
      ],
    });
    const none = gemini.parseChatRequest({ contents: [], toolConfig: { functionCallingConfig: { mode: 'NONE' } } }, { model: 'm' });
    expect(none.toolChoice).toBe('none');
  });
});

describe('responses', () => {
  const cases = { text: textResponse, tools: toolResponse };
  it.each(APIS.flatMap((api) => (['text', 'tools'] as const).map((k) => [api, k] as const)))('%s: %s response round trip', (api, k) => {
    const res = cases[k]();
    const back = viaResponse(protocols[api], res);
    expect({ ...back, id: '' }).toEqual({ ...res, id: '' });
    expect(back.id).toMatch({ openai: /^chatcmpl-resp-/, anthropic: /^msg_resp-/, gemini: /^resp-/ }[api]);
  });

  it.each(APIS.flatMap((a) => APIS.map((b) => [a, b] as const)))('%s upstream → %s client keeps a tool-call response', (a, b) => {
    const res = viaResponse(protocols[b], viaResponse(protocols[a], toolResponse()));
    expect(res.content).toEqual(toolResponse().content);
    expect(res.finishReason).toBe('tool_calls');
    expect(res.usage).toEqual(toolResponse().usage);
  });

  it.each(['stop', 'length', 'content_filter'] as const)('finish reason %s survives every vendor', (r) => {
    for (const api of APIS) expect(viaResponse(protocols[api], { ...textResponse(), finishReason: r }).finishReason).toBe(r);
  });

  it('maps vendor finish reasons', () => {
    const a = (stop_reason: string) => anthropic.parseChatResponse({ content: [], stop_reason }).finishReason;
    expect([a('end_turn'), a('stop_sequence'), a('max_tokens'), a('tool_use'), a('refusal')]).toEqual(['stop', 'stop', 'length', 'tool_calls', 'content_filter']);
    const g = (finishReason: string, parts: unknown[] = []) => gemini.parseChatResponse({ candidates: [{ content: { parts }, finishReason }] }).finishReason;
    expect([g('STOP'), g('MAX_TOKENS'), g('SAFETY'), g('RECITATION'), g('STOP', [{ functionCall: { name: 'f' } }])]).toEqual(['stop', 'length', 'content_filter', 'content_filter', 'tool_calls']);
    expect(gemini.parseChatResponse({ promptFeedback: { blockReason: 'SAFETY' } }).finishReason).toBe('content_filter');
    const o = (finish_reason: string) => openai.parseChatResponse({ choices: [{ message: { content: 'x' }, finish_reason }] }).finishReason;
    expect([o('stop'), o('length'), o('tool_calls'), o('content_filter')]).toEqual(['stop', 'length', 'tool_calls', 'content_filter']);
  });

  it('reads usage the way each vendor counts it', () => {
    expect(openai.usageFromResponse({ usage: { prompt_tokens: 10, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 4 } } })).toEqual({ inputTokens: 10, outputTokens: 3, cachedTokens: 4 });
    expect(anthropic.usageFromResponse({ usage: { input_tokens: 6, cache_read_input_tokens: 4, cache_creation_input_tokens: 2, output_tokens: 3 } })).toEqual({ inputTokens: 12, outputTokens: 3, cachedTokens: 4 });
    expect(gemini.usageFromResponse({ usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 3, thoughtsTokenCount: 5, cachedContentTokenCount: 4 } })).toEqual({ inputTokens: 10, outputTokens: 8, cachedTokens: 4 });
    expect(gemini.usageFromResponse({})).toEqual({ inputTokens: 0, outputTokens: 0, cachedTokens: 0 });
  });

  it('skips thinking blocks and thought parts', () => {
    expect(anthropic.parseChatResponse({ content: [{ type: 'thinking', thinking: 'x', signature: 's' }, { type: 'text', text: 'y' }], stop_reason: 'end_turn' }).content).toEqual([{ type: 'text', text: 'y' }]);
    expect(gemini.parseChatResponse({ candidates: [{ content: { parts: [{ text: 'x', thought: true }, { text: 'y' }] }, finishReason: 'STOP' }] }).content).toEqual([{ type: 'text', text: 'y' }]);
  });
});

describe('model lists and errors', () => {
  const models = [{ id: 'a', displayName: 'A', createdAt: new Date(0), ownedBy: 'o' }, { id: 'b', displayName: 'B', createdAt: new Date(1000), ownedBy: 'o' }];
  it('formats the three model-list shapes', () => {
    expect(openai.formatModelList(models)).toEqual({ object: 'list', data: [{ id: 'a', object: 'model', created: 0, owned_by: 'o' }, { id: 'b', object: 'model', created: 1, owned_by: 'o' }] });
    expect(anthropic.formatModelList(models)).toMatchObject({ has_more: false, first_id: 'a', last_id: 'b', data: [{ type: 'model', id: 'a', display_name: 'A', created_at: '1970-01-01T00:00:00.000Z' }, expect.anything()] });
    expect(gemini.formatModelList(models)).toMatchObject({ models: [{ name: 'models/a', displayName: 'A', supportedGenerationMethods: expect.arrayContaining(['generateContent']) }, expect.anything()] });
  });

  it('formats the three error shapes', () => {
    expect(openai.formatError('invalid_request', 'bad', 'messages[0].role')).toEqual({ status: 400, body: { error: { message: 'bad', type: 'invalid_request_error', param: 'messages[0].role', code: null } } });
    expect(anthropic.formatError('rate_limit', 'slow')).toEqual({ status: 429, body: { type: 'error', error: { type: 'rate_limit_error', message: 'slow' }, request_id: null } });
    expect(gemini.formatError('not_found', 'nope')).toEqual({ status: 404, body: { error: { code: 404, message: 'nope', status: 'NOT_FOUND' } } });
    expect([openai, anthropic, gemini].map((p) => p.formatError('budget', 'x').status)).toEqual([402, 402, 402]);
  });
});

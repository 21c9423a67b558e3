import { ProtocolError, UpstreamFormatError, anthropic, gemini, openai } from './index';

/** The ProtocolError thrown by fn, checked: status 400, the field it names. */
function paramOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ProtocolError);
    expect((e as ProtocolError).status).toBe(400);
    expect((e as ProtocolError).message.length).toBeGreaterThan(5);
    return (e as ProtocolError).param;
  }
  throw new Error('expected a ProtocolError');
}

const user = { role: 'user', content: 'hi' };

describe('openai request validation', () => {
  const p = (body: unknown) => paramOf(() => openai.parseChatRequest(body));
  it.each([
    ['body not an object', [1], undefined],
    ['missing model', { messages: [user] }, 'model'],
    ['model not a string', { model: 3, messages: [user] }, 'model'],
    ['messages not an array', { model: 'm', messages: {} }, 'messages'],
    ['message not an object', { model: 'm', messages: ['hi'] }, 'messages[0]'],
    ['unknown role', { model: 'm', messages: [user, { role: 'robot', content: 'x' }] }, 'messages[1].role'],
    ['legacy function role', { model: 'm', messages: [{ role: 'function', name: 'f', content: 'x' }] }, 'messages[0].role'],
    ['content of a wrong type', { model: 'm', messages: [{ role: 'user', content: 42 }] }, 'messages[0].content'],
    ['image part', { model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] }, 'messages[0].content[0].type'],
    ['system content parts not text', { model: 'm', messages: [{ role: 'system', content: [{ type: 'image_url' }] }] }, 'messages[0].content[0]'],
    ['tool message without tool_call_id', { model: 'm', messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].tool_call_id'],
    ['tool call without name', { model: 'm', messages: [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: {} }] }] }, 'messages[0].tool_calls[0].function.name'],
    ['tool call arguments not a string', { model: 'm', messages: [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: {} } }] }] }, 'messages[0].tool_calls[0].function.arguments'],
    ['custom tool', { model: 'm', messages: [user], tools: [{ type: 'custom', custom: { name: 'x' } }] }, 'tools[0].type'],
    ['tool parameters not an object', { model: 'm', messages: [user], tools: [{ type: 'function', function: { name: 'f', parameters: 'x' } }] }, 'tools[0].function.parameters'],
    ['bad tool_choice', { model: 'm', messages: [user], tool_choice: 'always' }, 'tool_choice'],
    ['temperature not a number', { model: 'm', messages: [user], temperature: 'hot' }, 'temperature'],
    ['max_tokens not a positive integer', { model: 'm', messages: [user], max_tokens: 0 }, 'max_tokens'],
    ['stop of a wrong type', { model: 'm', messages: [user], stop: [1] }, 'stop[0]'],
    ['n > 1', { model: 'm', messages: [user], n: 2 }, 'n'],
    ['stream not a boolean', { model: 'm', messages: [user], stream: 'yes' }, 'stream'],
  ])('%s', (_name, body, param) => expect(p(body)).toBe(param));

  it('validates embedding requests', () => {
    expect(paramOf(() => openai.parseEmbeddingRequest({ model: 'e', input: [[1, 2]] }))).toBe('input');
    expect(paramOf(() => openai.parseEmbeddingRequest({ model: 'e', input: [1, 2] }))).toBe('input');
    expect(paramOf(() => openai.parseEmbeddingRequest({ model: 'e', input: [] }))).toBe('input');
    expect(paramOf(() => openai.parseEmbeddingRequest({ input: 'x' }))).toBe('model');
    expect(paramOf(() => openai.parseEmbeddingRequest({ model: 'e', input: 'x', encoding_format: 'hex' }))).toBe('encoding_format');
  });

  it('formats a ProtocolError as the OpenAI error body with its param', () => {
    const e = (() => { try { openai.parseChatRequest({ messages: [] }); } catch (x) { return x as ProtocolError; } })()!;
    expect(openai.formatError('invalid_request', e.message, e.param).body).toMatchObject({ error: { type: 'invalid_request_error', param: 'model' } });
  });
});

describe('anthropic request validation', () => {
  const base = { model: 'm', max_tokens: 10 };
  const p = (body: unknown) => paramOf(() => anthropic.parseChatRequest(body));
  it.each([
    ['missing model', { max_tokens: 1, messages: [user] }, 'model'],
    ['missing max_tokens', { model: 'm', messages: [user] }, 'max_tokens'],
    ['messages not an array', { ...base, messages: 'hi' }, 'messages'],
    ['unknown role', { ...base, messages: [user, { role: 'tool', content: 'x' }] }, 'messages[1].role'],
    ['content of a wrong type', { ...base, messages: [{ role: 'user', content: { text: 'x' } }] }, 'messages[0].content'],
    ['block not an object', { ...base, messages: [{ role: 'user', content: ['x'] }] }, 'messages[0].content[0]'],
    ['image block', { ...base, messages: [{ role: 'user', content: [{ type: 'image', source: {} }] }] }, 'messages[0].content[0].type'],
    ['text block without text', { ...base, messages: [{ role: 'user', content: [{ type: 'text' }] }] }, 'messages[0].content[0].text'],
    ['tool_use in a user turn', { ...base, messages: [{ role: 'user', content: [{ type: 'tool_use', id: 'a', name: 'f', input: {} }] }] }, 'messages[0].content[0].type'],
    ['tool_result without tool_use_id', { ...base, messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }] }, 'messages[0].content[0].tool_use_id'],
    ['system of a wrong type', { ...base, system: 5, messages: [user] }, 'system'],
    ['server tool', { ...base, messages: [user], tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, 'tools[0].type'],
    ['tool without input_schema', { ...base, messages: [user], tools: [{ name: 'f' }] }, 'tools[0].input_schema'],
    ['bad tool_choice', { ...base, messages: [user], tool_choice: { type: 'tool' } }, 'tool_choice'],
    ['stop_sequences as a string', { ...base, messages: [user], stop_sequences: 'X' }, 'stop_sequences'],
  ])('%s', (_name, body, param) => expect(p(body)).toBe(param));
});

describe('gemini request validation', () => {
  const p = (body: unknown, model: string | null) => paramOf(() => gemini.parseChatRequest(body, { model: model ?? undefined, stream: false }));
  const parts = [{ text: 'hi' }];
  it.each([
    ['no model in the path', { contents: [{ parts }] }, 'model', null],
    ['contents not an array', { contents: { parts } }, 'contents', 'm'],
    ['content not an object', { contents: ['hi'] }, 'contents[0]', 'm'],
    ['unknown role', { contents: [{ parts }, { role: 'assistant', parts }] }, 'contents[1].role', 'm'],
    ['parts of a wrong type', { contents: [{ role: 'user', parts: 'hi' }] }, 'contents[0].parts', 'm'],
    ['inline data', { contents: [{ parts: [{ inlineData: { mimeType: 'image/png', data: '' } }] }] }, 'contents[0].parts[0]', 'm'],
    ['functionCall without name', { contents: [{ role: 'model', parts: [{ functionCall: { args: {} } }] }] }, 'contents[0].parts[0].functionCall.name', 'm'],
    ['non-function tool', { contents: [{ parts }], tools: [{ googleSearch: {} }] }, 'tools[0]', 'm'],
    ['bad calling mode', { contents: [{ parts }], toolConfig: { functionCallingConfig: { mode: 'SOMETIMES' } } }, 'toolConfig.functionCallingConfig.mode', 'm'],
    ['generationConfig temperature', { contents: [{ parts }], generationConfig: { temperature: '1' } }, 'generationConfig.temperature', 'm'],
    ['candidateCount > 1', { contents: [{ parts }], generationConfig: { candidateCount: 2 } }, 'generationConfig.candidateCount', 'm'],
  ])('%s', (_name, body, param, model) => expect(p(body, model)).toBe(param));

  it('validates embedding requests', () => {
    expect(paramOf(() => gemini.parseEmbedContentRequest({ content: { parts: [{ inlineData: {} }] } }, { model: 'e' }))).toBe('content.parts[0]');
    expect(paramOf(() => gemini.parseBatchEmbedContentsRequest({ requests: [] }, { model: 'e' }))).toBe('requests');
    expect(gemini.parseEmbedContentRequest({ content: { parts: [{ text: 'a' }, { text: 'b' }] }, outputDimensionality: 8 }, { model: 'models/e' }))
      .toEqual({ model: 'e', inputs: ['a\nb'], dimensions: 8 });
  });
});

it('throws UpstreamFormatError (502) for upstream bodies that are not objects', () => {
  for (const p of [openai, anthropic, gemini]) {
    expect(() => p.parseChatResponse('oops')).toThrow(UpstreamFormatError);
    expect(() => p.parseChatResponse(null)).toThrow(expect.objectContaining({ status: 502 }));
  }
});

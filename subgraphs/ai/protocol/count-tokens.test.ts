import {
  CHARS_PER_TOKEN, estimateTokens, formatAnthropicCountTokensRequest, formatAnthropicCountTokensResponse, formatGeminiCountTokensRequest,
  formatGeminiCountTokensResponse, parseAnthropicCountTokensRequest, parseAnthropicCountTokensResponse, parseGeminiCountTokensRequest,
  parseGeminiCountTokensResponse, type ChatRequest,
} from './index';
import { conversation, withoutSampling } from './test-fixtures';

describe('estimateTokens', () => {
  it('counts ~4 characters per token, at least 1 per message', () => {
    const req: ChatRequest = { model: 'm', stream: false, messages: [{ role: 'user', content: [{ type: 'text', text: 'x'.repeat(40) }] }, { role: 'assistant', content: [{ type: 'text', text: '' }] }] };
    expect(estimateTokens(req)).toBe(40 / CHARS_PER_TOKEN + 1);
    expect(estimateTokens({ ...req, system: 'abcdefgh' })).toBe(10 + 1 + 2);
  });

  it('includes tool definitions, tool calls and tool results', () => {
    const base: ChatRequest = { model: 'm', stream: false, messages: [] };
    const tool = { name: 'f', description: 'ddd', parameters: { type: 'object' } };
    expect(estimateTokens({ ...base, tools: [tool] })).toBe(Math.ceil((1 + 3 + JSON.stringify(tool.parameters).length) / 4));
    const call: ChatRequest = { ...base, messages: [{ role: 'assistant', content: [{ type: 'tool_call', id: 'c', name: 'abcd', arguments: '{"a":1}' }] }] };
    expect(estimateTokens(call)).toBe(Math.ceil(11 / 4));
    expect(estimateTokens(conversation())).toBeGreaterThan(estimateTokens({ ...conversation(), tools: undefined }));
  });
});

describe('count endpoints', () => {
  it('anthropic: /v1/messages/count_tokens body ↔ canonical, {input_tokens}', () => {
    const { path, body } = formatAnthropicCountTokensRequest(conversation());
    expect(path).toBe('/v1/messages/count_tokens');
    expect(body).not.toHaveProperty('max_tokens');
    const { maxTokens: _m, ...want } = withoutSampling(conversation());
    expect(parseAnthropicCountTokensRequest(body)).toEqual({ ...want, stop: undefined, toolChoice: 'auto' });
    expect(formatAnthropicCountTokensResponse(42)).toEqual({ input_tokens: 42 });
    expect(parseAnthropicCountTokensResponse({ input_tokens: 42 })).toBe(42);
  });

  it('gemini: :countTokens with generateContentRequest or bare contents, {totalTokens}', () => {
    const { path, body } = formatGeminiCountTokensRequest(conversation());
    expect(path).toBe('/v1beta/models/model-x:countTokens');
    const parsed = parseGeminiCountTokensRequest(body, { model: 'model-x' });
    expect(parsed.system).toBe('You are terse.');
    expect(parsed.messages).toEqual(conversation().messages);
    expect(parsed.tools).toEqual(conversation().tools);
    const bare = parseGeminiCountTokensRequest({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }, { model: 'g' });
    expect(bare).toEqual({ model: 'g', stream: false, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] });
    expect(formatGeminiCountTokensResponse(7)).toEqual({ totalTokens: 7 });
    expect(parseGeminiCountTokensResponse({ totalTokens: 7 })).toBe(7);
  });
});

import { parseSse, protocols, type StreamEvent, type VendorApi, type VendorProtocol } from './index';
import { decodeChunks, everySplit, randomChunks, rng, streamEvents, summarize, type StreamSummary } from './test-fixtures';

const APIS: VendorApi[] = ['openai', 'anthropic', 'gemini'];

function encode(p: VendorProtocol, events: StreamEvent[]): Buffer {
  const enc = p.createStreamEncoder({ id: 'resp-3', model: 'model-x', includeUsage: true });
  let s = '';
  for (const e of events) s += enc.push(e);
  return Buffer.from(s + enc.end());
}

const EXPECTED: StreamSummary = {
  text: 'Héllo wörld ✓ 🌍\n',
  tools: [
    { index: 0, id: 'call_0', name: 'get_weather', args: { city: 'Paris' } },
    { index: 1, id: 'call_1', name: 'get_time', args: { tz: 'CET' } },
  ],
  finish: ['tool_calls'],
  usage: { inputTokens: 120, outputTokens: 30, cachedTokens: 40 },
  starts: 1,
};

describe('encode → decode, cut at every byte', () => {
  it.each(APIS)('%s', (api) => {
    const p = protocols[api];
    const bytes = encode(p, streamEvents());
    expect(summarize(decodeChunks(p.createStreamDecoder(), [bytes]))).toEqual(EXPECTED);
    for (const chunks of everySplit(bytes)) {
      const d = p.createStreamDecoder();
      expect(summarize(decodeChunks(d, chunks))).toEqual(EXPECTED);
      expect(d.complete()).toBe(true);
      expect(d.malformed()).toBe(false);
    }
    const rand = rng(api.length);
    for (let i = 0; i < 200; i++) expect(summarize(decodeChunks(p.createStreamDecoder(), randomChunks(bytes, rand)))).toEqual(EXPECTED);
    // CRLF line endings, cut randomly (and one cut between CR and LF at each line end).
    const crlf = Buffer.from(bytes.toString().replace(/\n/g, '\r\n'));
    expect(summarize(decodeChunks(p.createStreamDecoder(), randomChunks(crlf, rand, 3)))).toEqual(EXPECTED);
    const crCut = crlf.toString().split(/(?<=\r)/);
    expect(summarize(decodeChunks(p.createStreamDecoder(), crCut))).toEqual(EXPECTED);
  });
});

describe('decode one vendor → encode another → decode', () => {
  it.each(APIS.flatMap((a) => APIS.map((b) => [a, b] as const)))('%s upstream → %s client', (a, b) => {
    const rand = rng(a.length * 7 + b.length);
    const upstream = encode(protocols[a], streamEvents());
    for (let i = 0; i < 25; i++) {
      const events = decodeChunks(protocols[a].createStreamDecoder(), randomChunks(upstream, rand));
      const client = encode(protocols[b], events);
      expect(summarize(decodeChunks(protocols[b].createStreamDecoder(), randomChunks(client, rand)))).toEqual(EXPECTED);
    }
  });
});

describe('encoders', () => {
  it('anthropic: event order and block indexes', () => {
    const events = parseSse(encode(protocols.anthropic, streamEvents())).map((e) => {
      const d = JSON.parse(e.data) as { type: string; index?: number; content_block?: { type: string }; delta?: { type?: string } };
      expect(d.type).toBe(e.event);
      return [e.event, d.index, d.content_block?.type ?? d.delta?.type].filter((x) => x !== undefined).join(':');
    });
    expect(events).toEqual([
      'message_start',
      'content_block_start:0:text', 'content_block_delta:0:text_delta', 'content_block_delta:0:text_delta', 'content_block_stop:0',
      'content_block_start:1:tool_use', 'content_block_delta:1:input_json_delta', 'content_block_delta:1:input_json_delta', 'content_block_stop:1',
      'content_block_start:2:tool_use', 'content_block_delta:2:input_json_delta', 'content_block_stop:2',
      'message_delta', 'message_stop',
    ]);
  });

  it('openai: role first, finish chunk, usage chunk only when asked, [DONE] last', () => {
    const withUsage = parseSse(encode(protocols.openai, streamEvents())).map((e) => e.data);
    expect(JSON.parse(withUsage[0]!).choices[0].delta).toEqual({ role: 'assistant', content: '' });
    expect(withUsage[withUsage.length - 1]).toBe('[DONE]');
    const usageChunk = JSON.parse(withUsage[withUsage.length - 2]!);
    expect(usageChunk).toMatchObject({ object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 120, completion_tokens: 30 } });
    expect(JSON.parse(withUsage[withUsage.length - 3]!).choices[0]).toEqual({ index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' });
    const enc = protocols.openai.createStreamEncoder({ id: 'x', model: 'm' });
    const plain = [...streamEvents().map((e) => enc.push(e)), enc.end()].join('');
    expect(plain).not.toContain('"usage"');
    expect(plain.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('gemini: function calls whole in the last chunk with finishReason and usage', () => {
    const chunks = parseSse(encode(protocols.gemini, streamEvents())).map((e) => JSON.parse(e.data));
    const last = chunks[chunks.length - 1];
    expect(last.candidates[0]).toEqual({
      content: { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }, { functionCall: { name: 'get_time', args: { tz: 'CET' } } }] },
      finishReason: 'STOP',
      index: 0,
    });
    expect(last.usageMetadata).toEqual({ promptTokenCount: 120, candidatesTokenCount: 30, totalTokenCount: 150, cachedContentTokenCount: 40 });
    expect(last.responseId).toBe('resp-3');
  });

  it.each(APIS)('%s: end() without a finish reports an error to the client', (api) => {
    const enc = protocols[api].createStreamEncoder({ id: 'x', model: 'm' });
    const s = enc.push({ type: 'start', id: 'x', model: 'm' }) + enc.push({ type: 'text', text: 'partial' }) + enc.end();
    const d = protocols[api].createStreamDecoder();
    expect(summarize(decodeChunks(d, [s])).finish).toEqual(['error']);
  });
});

// ---------------------------------------------------------------- real-looking upstream streams

const oaBase = '"id":"chatcmpl-AB1","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_1"';
const oa = (choices: string, usage = 'null') => `data: {${oaBase},"choices":${choices},"usage":${usage}}\n\n`;
const OPENAI_STREAM = [
  oa('[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]'),
  oa('[{"index":0,"delta":{"content":"Bonjour"},"logprobs":null,"finish_reason":null}]'),
  oa('[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_DdmO9pD3","type":"function","function":{"name":"get_weather","arguments":""}}]},"logprobs":null,"finish_reason":null}]'),
  oa('[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"city\\""}}]},"logprobs":null,"finish_reason":null}]'),
  oa('[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":\\"Paris\\"}"}}]},"logprobs":null,"finish_reason":null}]'),
  oa('[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]'),
  oa('[]', '{"prompt_tokens":82,"completion_tokens":17,"total_tokens":99,"prompt_tokens_details":{"cached_tokens":64,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}'),
  'data: [DONE]\n\n',
].join('');

const an = (event: string, data: string) => `event: ${event}\ndata: ${data}\n\n`;
const ANTHROPIC_STREAM = [
  an('message_start', '{"type":"message_start","message":{"id":"msg_01XFD","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"cache_creation_input_tokens":5,"cache_read_input_tokens":64,"output_tokens":1}}}'),
  an('content_block_start', '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}'),
  an('ping', '{"type": "ping"}'),
  an('content_block_delta', '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Bonjour"}}'),
  an('content_block_stop', '{"type":"content_block_stop","index":0}'),
  an('content_block_start', '{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01T1x","name":"get_weather","input":{}}}'),
  an('content_block_delta', '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}'),
  an('content_block_delta', '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"city\\": \\"Par"}}'),
  an('content_block_delta', '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"is\\"}"}}'),
  an('content_block_stop', '{"type":"content_block_stop","index":1}'),
  an('message_delta', '{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":17}}'),
  an('message_stop', '{"type":"message_stop"}'),
].join('');

const gm = (json: string) => `data: ${json}\r\n\r\n`;
const GEMINI_STREAM = [
  gm('{"candidates": [{"content": {"parts": [{"text": "Bonjour"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 89,"candidatesTokenCount": 2,"totalTokenCount": 91,"cachedContentTokenCount": 64},"modelVersion": "gemini-2.5-flash","responseId": "mTJWaO2cL4qD"}'),
  gm('{"candidates": [{"content": {"parts": [{"functionCall": {"name": "get_weather","args": {"city": "Paris"}}}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 89,"candidatesTokenCount": 12,"totalTokenCount": 106,"cachedContentTokenCount": 64,"thoughtsTokenCount": 5},"modelVersion": "gemini-2.5-flash","responseId": "mTJWaO2cL4qD"}'),
].join('');

const REAL: Record<VendorApi, { stream: string; usage: { inputTokens: number; outputTokens: number; cachedTokens: number }; id: string }> = {
  openai: { stream: OPENAI_STREAM, usage: { inputTokens: 82, outputTokens: 17, cachedTokens: 64 }, id: 'call_DdmO9pD3' },
  anthropic: { stream: ANTHROPIC_STREAM, usage: { inputTokens: 94, outputTokens: 17, cachedTokens: 64 }, id: 'toolu_01T1x' },
  gemini: { stream: GEMINI_STREAM, usage: { inputTokens: 89, outputTokens: 17, cachedTokens: 64 }, id: 'call_0' },
};

describe('real-looking upstream streams', () => {
  it.each(APIS)('%s: decoder reads text, tool call, finish and usage at any cut', (api) => {
    const { stream, usage, id } = REAL[api];
    const want: StreamSummary = {
      text: 'Bonjour', tools: [{ index: 0, id, name: 'get_weather', args: { city: 'Paris' } }], finish: ['tool_calls'], usage, starts: 1,
    };
    const bytes = Buffer.from(stream);
    for (const chunks of everySplit(bytes)) expect(summarize(decodeChunks(protocols[api].createStreamDecoder(), chunks))).toEqual(want);
  });

  it.each(APIS)('%s: usage tap at any cut', (api) => {
    const { stream, usage } = REAL[api];
    const bytes = Buffer.from(stream);
    const rand = rng(3);
    const cuts = [...everySplit(bytes), ...Array.from({ length: 100 }, () => randomChunks(bytes, rand, 40))];
    for (const chunks of cuts) {
      const tap = protocols[api].createUsageTap();
      for (const c of chunks) tap.push(c);
      expect([tap.usage(), tap.complete(), tap.malformed()]).toEqual([usage, true, false]);
    }
  });

  it.each(APIS)('%s: a stream cut short is not complete; the decoder finishes with an error', (api) => {
    const bytes = Buffer.from(REAL[api].stream);
    for (const cut of [10, Math.floor(bytes.length / 2), bytes.length - 5]) {
      const tap = protocols[api].createUsageTap();
      tap.push(bytes.subarray(0, cut));
      expect(tap.complete()).toBe(false);
      expect(tap.malformed()).toBe(false);
      const d = protocols[api].createStreamDecoder();
      const events = decodeChunks(d, [bytes.subarray(0, cut)]);
      expect(d.complete()).toBe(false);
      if (cut < bytes.length / 2) expect(summarize(events).finish).toEqual(['error']);
    }
  });

  it.each(APIS)('%s: bad JSON in a data line → tap malformed, decoder reports an error and stops', (api) => {
    const good = REAL[api].stream;
    const sep = api === 'gemini' ? '\r\n\r\n' : '\n\n';
    const at = good.indexOf(sep) + sep.length;
    const bad = `${good.slice(0, at)}data: {"candidates": [{"content": ${sep}${good.slice(at)}`;
    const tap = protocols[api].createUsageTap();
    tap.push(Buffer.from(bad));
    expect(tap.malformed()).toBe(true);
    const d = protocols[api].createStreamDecoder();
    const first = d.push(Buffer.from(bad));
    expect(first.filter((e) => e.type === 'finish')).toEqual([{ type: 'finish', finishReason: 'error' }]);
    expect(d.malformed()).toBe(true);
    expect(d.push('data: {}\n\n')).toEqual([]);
    expect(d.end()).toEqual([]);
  });

  it.each([
    ['openai', 'data: {"error":{"message":"overloaded","type":"server_error"}}\n\n'],
    ['anthropic', an('error', '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')],
    ['gemini', gm('{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}')],
  ] as const)('%s: an upstream error event finishes with error (not malformed)', (api, errorEvent) => {
    const head = api === 'anthropic' ? ANTHROPIC_STREAM.slice(0, ANTHROPIC_STREAM.indexOf('event: content_block_stop')) : '';
    const d = protocols[api].createStreamDecoder();
    const events = decodeChunks(d, [head + errorEvent]);
    expect(summarize(events).finish).toEqual(['error']);
    expect(d.malformed()).toBe(false);
    const tap = protocols[api].createUsageTap();
    tap.push(Buffer.from(head + errorEvent));
    expect(tap.complete()).toBe(false);
  });
});

describe('usage taps: what they parse', () => {
  it('openai: spaced JSON (OpenAI-compatible servers), "usage" inside text, usage null', () => {
    const tap = protocols.openai.createUsageTap();
    tap.push('data: {"choices": [{"index": 0, "delta": {"content": "the \\"usage\\": {x} of it"}}], "usage": null}\n\n');
    tap.push('data: {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2}}\n\ndata: [DONE]\n\n');
    expect([tap.usage(), tap.complete(), tap.malformed()]).toEqual([{ inputTokens: 5, outputTokens: 2, cachedTokens: 0 }, true, false]);
  });

  it.each(APIS)('%s: a payload that is not a JSON object is malformed', (api) => {
    for (const bad of ['data: [1,2]\n\n', 'data: {"a":1}{"b":2\n\n', 'data: oops\n\n']) {
      const tap = protocols[api].createUsageTap();
      tap.push(api === 'anthropic' ? `event: content_block_delta\n${bad}` : bad);
      expect(tap.malformed()).toBe(true);
    }
  });

  it('gemini: the latest chunk\'s usage counts even without a finish chunk', () => {
    const tap = protocols.gemini.createUsageTap();
    tap.push(GEMINI_STREAM.slice(0, GEMINI_STREAM.indexOf('\r\n\r\n') + 4));
    expect(tap.usage()).toEqual({ inputTokens: 89, outputTokens: 2, cachedTokens: 64 });
    expect(tap.complete()).toBe(false);
  });
});


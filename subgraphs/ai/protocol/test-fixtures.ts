/** Shared fixtures and helpers of the protocol tests (not part of the library's API). */
import type { ChatRequest, ChatResponse, StreamDecoder, StreamEvent, ToolDefinition, Usage } from './types';

export const weatherTool: ToolDefinition = {
  name: 'get_weather',
  description: 'Current weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
};

export const timeTool: ToolDefinition = {
  name: 'get_time',
  description: 'Local time of a timezone',
  parameters: { type: 'object', properties: { tz: { type: 'string', enum: ['UTC', 'CET'] } }, required: ['tz'] },
};

/** System prompt, three user turns, two tools, an assistant tool call and its result. */
export function conversation(): ChatRequest {
  return {
    model: 'model-x',
    system: 'You are terse.',
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_call', id: 'call_0', name: 'get_weather', arguments: '{"city":"Paris"}' },
        ],
      },
      { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'call_0', name: 'get_weather', content: '{"tempC":21}' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'It is 21°C.' }] },
      { role: 'user', content: [{ type: 'text', text: 'And the time in CET?' }] },
      { role: 'assistant', content: [{ type: 'tool_call', id: 'call_1', name: 'get_time', arguments: '{"tz":"CET"}' }] },
      { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'call_1', name: 'get_time', content: '14:05' }] },
      { role: 'user', content: [{ type: 'text', text: 'Thanks!' }] },
    ],
    tools: [weatherTool, timeTool],
    toolChoice: 'auto',
    maxTokens: 256,
    temperature: 0.5,
    topP: 0.9,
    stop: ['END'],
    stream: false,
  };
}

/** The request as it reads back after Anthropic, whose API (2026-10-21) has no temperature/top_p. */
export function withoutSampling(req: ChatRequest): ChatRequest {
  const { temperature: _t, topP: _p, ...rest } = req;
  return rest;
}

export const usage: Usage = { inputTokens: 120, outputTokens: 30, cachedTokens: 40 };

export function textResponse(): ChatResponse {
  return { id: 'resp-1', model: 'model-x', content: [{ type: 'text', text: 'Hello, wörld ✓' }], finishReason: 'stop', usage: { ...usage } };
}

export function toolResponse(): ChatResponse {
  return {
    id: 'resp-2',
    model: 'model-x',
    content: [
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_call', id: 'call_0', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'tool_call', id: 'call_1', name: 'get_time', arguments: '{"tz":"CET"}' },
    ],
    finishReason: 'tool_calls',
    usage: { ...usage },
  };
}

/** A small canonical stream: text with non-ASCII characters, two streamed tool calls, finish, usage. */
export function streamEvents(): StreamEvent[] {
  return [
    { type: 'start', id: 'resp-3', model: 'model-x' },
    { type: 'usage', usage: { inputTokens: 120, cachedTokens: 40 } },
    { type: 'text', text: 'Héllo ' },
    { type: 'text', text: 'wörld ✓ 🌍\n' },
    { type: 'tool_call_start', index: 0, id: 'call_0', name: 'get_weather' },
    { type: 'tool_call_delta', index: 0, arguments: '{"city":' },
    { type: 'tool_call_delta', index: 0, arguments: '"Paris"}' },
    { type: 'tool_call_start', index: 1, id: 'call_1', name: 'get_time' },
    { type: 'tool_call_delta', index: 1, arguments: '{"tz":"CET"}' },
    { type: 'finish', finishReason: 'tool_calls' },
    { type: 'usage', usage: { outputTokens: 30 } },
  ];
}

export interface StreamSummary {
  text: string;
  tools: Array<{ index: number; id: string; name: string; args: unknown }>;
  finish: string[];
  usage: Usage;
  starts: number;
}

/** What a stream says, independent of how it was cut into events (arguments compared as parsed JSON). */
export function summarize(events: StreamEvent[]): StreamSummary {
  const s: StreamSummary = { text: '', tools: [], finish: [], usage: { inputTokens: 0, outputTokens: 0, cachedTokens: 0 }, starts: 0 };
  const raw: string[] = [];
  for (const e of events) {
    switch (e.type) {
      case 'start': s.starts++; break;
      case 'text': s.text += e.text; break;
      case 'tool_call_start': s.tools[e.index] = { index: e.index, id: e.id, name: e.name, args: undefined }; raw[e.index] = ''; break;
      case 'tool_call_delta': raw[e.index] += e.arguments; break;
      case 'finish': s.finish.push(e.finishReason); break;
      case 'usage': Object.assign(s.usage, e.usage); break;
    }
  }
  s.tools.forEach((t, i) => { t.args = raw[i] ? JSON.parse(raw[i]!) : {}; });
  return s;
}

export function decodeChunks(decoder: StreamDecoder, chunks: Array<Buffer | string>): StreamEvent[] {
  const out: StreamEvent[] = [];
  for (const c of chunks) out.push(...decoder.push(c));
  out.push(...decoder.end());
  return out;
}

/** Deterministic PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Cuts bytes into random chunks of 1..max bytes (UTF-8 sequences cut too). */
export function randomChunks(buf: Buffer, rand: () => number, max = 9): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < buf.length; ) {
    const n = 1 + Math.floor(rand() * max);
    out.push(buf.subarray(i, i + n));
    i += n;
  }
  return out;
}

/** Every two-chunk cut of buf: [0, i) and [i, n) for i in 1..n-1. */
export function* everySplit(buf: Buffer): Generator<Buffer[]> {
  for (let i = 1; i < buf.length; i++) yield [buf.subarray(0, i), buf.subarray(i)];
}

/**
 * A fetch for the vendor SDKs that never touches the network: records each request and answers with
 * `respond(url, body)` — a JSON value, or {sse: string[], status?} streamed chunk by chunk.
 */
export function fakeFetch(respond: (url: string, body: unknown) => { status?: number; json?: unknown; sse?: string[] }) {
  const calls: Array<{ url: string; method: string; body: unknown }> = [];
  const fetch = async (input: unknown, init?: { method?: string; body?: unknown }): Promise<Response> => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : (input as Request).url;
    const text = typeof init?.body === 'string' ? init.body : undefined;
    const body: unknown = text ? JSON.parse(text) : undefined;
    calls.push({ url, method: init?.method ?? 'GET', body });
    const r = respond(url, body);
    if (r.sse) {
      const enc = new TextEncoder();
      const chunks = r.sse.map((c) => enc.encode(c));
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          const c = chunks.shift();
          if (c) controller.enqueue(c);
          else controller.close();
        },
      });
      return new Response(stream, { status: r.status ?? 200, headers: { 'content-type': 'text/event-stream' } });
    }
    return new Response(JSON.stringify(r.json), { status: r.status ?? 200, headers: { 'content-type': 'application/json' } });
  };
  return { fetch, calls };
}

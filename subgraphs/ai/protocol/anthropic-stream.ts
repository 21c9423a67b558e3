/** Anthropic Messages streams (event: message_start … message_stop): decoder, encoder, usage tap. */
import { SseParser } from './sse';
import type { FinishReason, StreamDecoder, StreamEncoder, StreamEncoderMeta, StreamEvent, Usage, UsageTap } from './types';
import { anthropicToolId, isObj, looksLikeObject, mergeUsage, num, vendorResponseId, zeroUsage, type Obj } from './util';

export function anthropicFinish(r: unknown): FinishReason {
  switch (r) {
    case 'max_tokens':
    case 'model_context_window_exceeded': return 'length';
    case 'tool_use': return 'tool_calls';
    case 'refusal': return 'content_filter';
    default: return 'stop'; // end_turn, stop_sequence, pause_turn
  }
}

export function toAnthropicStop(r: FinishReason): string {
  switch (r) {
    case 'length': return 'max_tokens';
    case 'tool_calls': return 'tool_use';
    case 'content_filter': return 'refusal';
    default: return 'end_turn';
  }
}

/**
 * Anthropic counts cache reads and cache writes outside input_tokens; the canonical inputTokens is the
 * whole prompt (input + cache read + cache creation), cachedTokens the cache reads.
 */
export function anthropicUsageIn(u: unknown): Usage {
  if (!isObj(u)) return zeroUsage();
  const cached = num(u.cache_read_input_tokens);
  return {
    inputTokens: num(u.input_tokens) + cached + num(u.cache_creation_input_tokens),
    outputTokens: num(u.output_tokens),
    cachedTokens: cached,
  };
}

export function anthropicUsageOut(u: Usage): Obj {
  return {
    input_tokens: Math.max(0, u.inputTokens - u.cachedTokens),
    output_tokens: u.outputTokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: u.cachedTokens,
    cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: 0 },
    server_tool_use: null,
    service_tier: 'standard',
    inference_geo: null,
    output_tokens_details: null,
    speed: null,
  };
}

/** Running Anthropic usage counters (message_delta repeats cumulative totals, omitting inapplicable ones). */
class AnthropicUsage {
  input = 0;
  cacheRead = 0;
  cacheWrite = 0;
  output = 0;
  update(u: unknown): void {
    if (!isObj(u)) return;
    if (typeof u.input_tokens === 'number') this.input = u.input_tokens;
    if (typeof u.cache_read_input_tokens === 'number') this.cacheRead = u.cache_read_input_tokens;
    if (typeof u.cache_creation_input_tokens === 'number') this.cacheWrite = u.cache_creation_input_tokens;
    if (typeof u.output_tokens === 'number') this.output = u.output_tokens;
  }
  canonical(): Usage {
    return { inputTokens: this.input + this.cacheRead + this.cacheWrite, outputTokens: this.output, cachedTokens: this.cacheRead };
  }
}

class AnthropicDecoder implements StreamDecoder {
  private out: StreamEvent[] = [];
  private readonly parser = new SseParser((event, data) => this.onEvent(event, data));
  private readonly u = new AnthropicUsage();
  private finished = false;
  private done = false;
  private bad = false;
  private stopped = false;
  /** content block index → tool-call ordinal */
  private readonly blockTool: number[] = [];
  private tools = 0;

  push(chunk: Buffer | string): StreamEvent[] {
    if (this.stopped) return [];
    this.out = [];
    this.parser.push(chunk);
    return this.out;
  }

  end(): StreamEvent[] {
    this.out = [];
    this.parser.end();
    if (!this.finished) this.finish(this.done ? 'stop' : 'error');
    this.stopped = true;
    return this.out;
  }

  complete(): boolean {
    return this.done;
  }

  malformed(): boolean {
    return this.bad;
  }

  private finish(reason: FinishReason): void {
    this.finished = true;
    this.out.push({ type: 'finish', finishReason: reason });
  }

  private abort(malformed: boolean): void {
    if (malformed) this.bad = true;
    if (!this.finished) this.finish('error');
    this.stopped = true;
  }

  private onEvent(event: string, data: string): void {
    if (this.stopped || this.done) return;
    let c: unknown;
    try {
      c = JSON.parse(data);
    } catch {
      return this.abort(true);
    }
    if (!isObj(c)) return this.abort(true);
    const out = this.out;
    switch (c.type ?? event) {
      case 'message_start': {
        const m = isObj(c.message) ? c.message : {};
        out.push({ type: 'start', id: typeof m.id === 'string' ? m.id : '', model: typeof m.model === 'string' ? m.model : '' });
        if (isObj(m.usage)) {
          this.u.update(m.usage);
          out.push({ type: 'usage', usage: this.u.canonical() });
        }
        break;
      }
      case 'content_block_start': {
        const b = c.content_block;
        if (!isObj(b) || typeof c.index !== 'number') break;
        if (b.type === 'text') {
          if (typeof b.text === 'string' && b.text.length) out.push({ type: 'text', text: b.text });
        } else if (b.type === 'tool_use') {
          const index = this.tools++;
          this.blockTool[c.index] = index;
          out.push({ type: 'tool_call_start', index, id: typeof b.id === 'string' ? b.id : `toolu_${index}`, name: typeof b.name === 'string' ? b.name : '' });
          if (isObj(b.input) && Object.keys(b.input).length) out.push({ type: 'tool_call_delta', index, arguments: JSON.stringify(b.input) });
        }
        break;
      }
      case 'content_block_delta': {
        const d = c.delta;
        if (!isObj(d)) break;
        if (d.type === 'text_delta') {
          if (typeof d.text === 'string' && d.text.length) out.push({ type: 'text', text: d.text });
        } else if (d.type === 'input_json_delta' && typeof c.index === 'number') {
          const index = this.blockTool[c.index];
          if (index !== undefined && typeof d.partial_json === 'string' && d.partial_json.length) {
            out.push({ type: 'tool_call_delta', index, arguments: d.partial_json });
          }
        }
        break; // thinking_delta, signature_delta, citations_delta: dropped
      }
      case 'message_delta': {
        const d = c.delta;
        if (isObj(d) && typeof d.stop_reason === 'string' && !this.finished) this.finish(anthropicFinish(d.stop_reason));
        if (isObj(c.usage)) {
          this.u.update(c.usage);
          out.push({ type: 'usage', usage: this.u.canonical() });
        }
        break;
      }
      case 'message_stop':
        this.done = true;
        break;
      case 'error':
        return this.abort(false);
      // ping, content_block_stop, unknown events: nothing to report
    }
  }
}

export function createAnthropicDecoder(): StreamDecoder {
  return new AnthropicDecoder();
}

const STREAM_ERROR = `event: error\ndata: ${JSON.stringify({
  type: 'error',
  error: { type: 'api_error', message: 'The upstream model stream failed.' },
})}\n\n`;

/**
 * Emits message_start lazily (at the first content/finish event, so that input usage already known
 * goes into it), one content block per run of text or per tool call with proper indexes, and holds
 * message_delta (stop_reason + usage) and message_stop until end(), since usage may follow finish.
 */
class AnthropicEncoder implements StreamEncoder {
  private readonly u = zeroUsage();
  private headSent = false;
  private open = -1;
  private openText = false;
  private next = 0;
  private readonly toolBlock: number[] = [];
  private stop: string | null = null;
  private finished = false;
  private failed = false;

  constructor(private readonly meta: StreamEncoderMeta) {}

  private head(): string {
    if (this.headSent) return '';
    this.headSent = true;
    const message = {
      id: vendorResponseId('anthropic', this.meta.id),
      type: 'message',
      role: 'assistant',
      model: this.meta.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      stop_details: null,
      container: null,
      usage: {
        input_tokens: Math.max(0, this.u.inputTokens - this.u.cachedTokens),
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: this.u.cachedTokens,
        output_tokens: this.u.outputTokens,
      },
    };
    return `event: message_start\ndata: {"type":"message_start","message":${JSON.stringify(message)}}\n\n`;
  }

  private close(): string {
    if (this.open < 0) return '';
    const s = `event: content_block_stop\ndata: {"type":"content_block_stop","index":${this.open}}\n\n`;
    this.open = -1;
    this.openText = false;
    return s;
  }

  push(e: StreamEvent): string {
    if (e.type === 'usage') {
      mergeUsage(this.u, e.usage);
      return '';
    }
    if (this.finished || e.type === 'start') return '';
    let s = this.head();
    switch (e.type) {
      case 'text':
        if (!this.openText) {
          s += this.close();
          this.open = this.next++;
          this.openText = true;
          s += `event: content_block_start\ndata: {"type":"content_block_start","index":${this.open},"content_block":{"type":"text","text":""}}\n\n`;
        }
        return s + `event: content_block_delta\ndata: {"type":"content_block_delta","index":${this.open},"delta":{"type":"text_delta","text":${JSON.stringify(e.text)}}}\n\n`;
      case 'tool_call_start': {
        s += this.close();
        const index = (this.open = this.next++);
        this.toolBlock[e.index] = index;
        const block = `{"type":"tool_use","id":${JSON.stringify(anthropicToolId(e.id))},"name":${JSON.stringify(e.name)},"input":{}}`;
        return s + `event: content_block_start\ndata: {"type":"content_block_start","index":${index},"content_block":${block}}\n\n`;
      }
      case 'tool_call_delta': {
        const index = this.toolBlock[e.index];
        if (index === undefined) return s;
        return s + `event: content_block_delta\ndata: {"type":"content_block_delta","index":${index},"delta":{"type":"input_json_delta","partial_json":${JSON.stringify(e.arguments)}}}\n\n`;
      }
      case 'finish':
        this.finished = true;
        s += this.close();
        if (e.finishReason === 'error') {
          this.failed = true;
          return s + STREAM_ERROR;
        }
        this.stop = toAnthropicStop(e.finishReason);
        return s;
    }
  }

  end(): string {
    if (this.failed) return '';
    let s = this.head();
    if (!this.finished) {
      this.finished = this.failed = true;
      return s + this.close() + STREAM_ERROR;
    }
    const usage = {
      input_tokens: Math.max(0, this.u.inputTokens - this.u.cachedTokens),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: this.u.cachedTokens,
      output_tokens: this.u.outputTokens,
    };
    s += `event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"${this.stop}","stop_sequence":null,"stop_details":null,"container":null},"usage":${JSON.stringify(usage)}}\n\n`;
    return s + 'event: message_stop\ndata: {"type":"message_stop"}\n\n';
  }
}

export function createAnthropicEncoder(meta: StreamEncoderMeta): StreamEncoder {
  return new AnthropicEncoder(meta);
}

/**
 * Usage from message_start.message.usage and message_delta.usage; complete = message_stop seen.
 * Every payload is checked structurally (a `{…}` object); only message_start, message_delta, error
 * (and events without an `event:` name) are JSON-parsed.
 */
class AnthropicTap implements UsageTap {
  private readonly parser = new SseParser((event, data) => this.onEvent(event, data));
  private readonly u = new AnthropicUsage();
  private done = false;
  private bad = false;

  push(chunk: Buffer | string): void {
    if (!this.done) this.parser.push(chunk);
  }

  usage(): Usage {
    return this.u.canonical();
  }

  complete(): boolean {
    return this.done;
  }

  malformed(): boolean {
    return this.bad;
  }

  private onEvent(event: string, data: string): void {
    if (this.done) return;
    if (!looksLikeObject(data)) {
      this.bad = true;
      return;
    }
    if (event === 'message_stop') {
      this.done = true;
      return;
    }
    if (event !== 'message_start' && event !== 'message_delta' && event !== 'error' && event !== '') return;
    let c: unknown;
    try {
      c = JSON.parse(data);
    } catch {
      this.bad = true;
      return;
    }
    if (!isObj(c)) return;
    const type = c.type ?? event;
    if (type === 'message_start') {
      if (isObj(c.message)) this.u.update(c.message.usage);
    } else if (type === 'message_delta') this.u.update(c.usage);
    else if (type === 'message_stop') this.done = true;
  }
}

export function createAnthropicTap(): UsageTap {
  return new AnthropicTap();
}

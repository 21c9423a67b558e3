/** OpenAI chat.completion.chunk streams: decoder, encoder, pass-through usage tap. */
import { SseParser } from './sse';
import type { FinishReason, StreamDecoder, StreamEncoder, StreamEncoderMeta, StreamEvent, Usage, UsageTap } from './types';
import { hasObjectKey, isObj, looksLikeObject, startsWithErrorKey, mergeUsage, nowSeconds, num, vendorResponseId, zeroUsage, type Obj } from './util';

export function openaiFinish(r: unknown): FinishReason {
  switch (r) {
    case 'length': return 'length';
    case 'tool_calls':
    case 'function_call': return 'tool_calls';
    case 'content_filter': return 'content_filter';
    default: return 'stop';
  }
}

/** Canonical → OpenAI finish_reason; 'error' has no OpenAI value and reads as 'stop'. */
export function toOpenAIFinish(r: FinishReason): string {
  return r === 'error' ? 'stop' : r;
}

export function openaiUsageIn(u: unknown): Usage {
  if (!isObj(u)) return { inputTokens: 0, outputTokens: 0, cachedTokens: 0 };
  const details = u.prompt_tokens_details;
  return {
    inputTokens: num(u.prompt_tokens),
    outputTokens: num(u.completion_tokens),
    cachedTokens: isObj(details) ? num(details.cached_tokens) : 0,
  };
}

export function openaiUsageOut(u: Usage): Obj {
  return {
    prompt_tokens: u.inputTokens,
    completion_tokens: u.outputTokens,
    total_tokens: u.inputTokens + u.outputTokens,
    prompt_tokens_details: { cached_tokens: u.cachedTokens },
  };
}


class OpenAIDecoder implements StreamDecoder {
  private out: StreamEvent[] = [];
  private readonly parser = new SseParser((_event, data) => this.onData(data));
  private started = false;
  private finished = false;
  private done = false;
  private bad = false;
  private stopped = false;
  /** Tool-call indexes already announced with tool_call_start. */
  private readonly tools: boolean[] = [];

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

  private onData(data: string): void {
    if (this.stopped || this.done) return;
    if (data === '[DONE]') {
      this.done = true;
      return;
    }
    let c: unknown;
    try {
      c = JSON.parse(data);
    } catch {
      return this.abort(true);
    }
    if (!isObj(c)) return this.abort(true);
    if (c.error !== undefined && c.error !== null) return this.abort(false);
    const out = this.out;
    if (!this.started) {
      this.started = true;
      out.push({ type: 'start', id: typeof c.id === 'string' ? c.id : '', model: typeof c.model === 'string' ? c.model : '' });
    }
    const choices = c.choices;
    if (Array.isArray(choices) && choices.length > 0) {
      const ch = choices[0];
      if (isObj(ch)) {
        const d = ch.delta;
        if (isObj(d)) {
          if (typeof d.content === 'string' && d.content.length) out.push({ type: 'text', text: d.content });
          else if (typeof d.refusal === 'string' && d.refusal.length) out.push({ type: 'text', text: d.refusal });
          if (Array.isArray(d.tool_calls)) {
            for (const tc of d.tool_calls) {
              if (!isObj(tc)) continue;
              const index = typeof tc.index === 'number' ? tc.index : 0;
              const fn = isObj(tc.function) ? tc.function : undefined;
              if (!this.tools[index]) {
                this.tools[index] = true;
                out.push({
                  type: 'tool_call_start',
                  index,
                  id: typeof tc.id === 'string' ? tc.id : `call_${index}`,
                  name: typeof fn?.name === 'string' ? fn.name : '',
                });
              }
              const args = fn?.arguments;
              if (typeof args === 'string' && args.length) out.push({ type: 'tool_call_delta', index, arguments: args });
            }
          }
        }
        if (typeof ch.finish_reason === 'string' && !this.finished) this.finish(openaiFinish(ch.finish_reason));
      }
    }
    if (isObj(c.usage)) out.push({ type: 'usage', usage: openaiUsageIn(c.usage) });
  }
}

export function createOpenAIDecoder(): StreamDecoder {
  return new OpenAIDecoder();
}

const STREAM_ERROR = `data: ${JSON.stringify({
  error: { message: 'The upstream model stream failed.', type: 'server_error', param: null, code: null },
})}\n\n`;

class OpenAIEncoder implements StreamEncoder {
  /** `{"id":…,"object":"chat.completion.chunk","created":…,"model":…` */
  private readonly base: string;
  private readonly choice: string;
  private started = false;
  private finished = false;
  private failed = false;
  private usage: Usage | null = null;

  constructor(private readonly meta: StreamEncoderMeta) {
    this.base = `{"id":${JSON.stringify(vendorResponseId('openai', meta.id))},"object":"chat.completion.chunk","created":${nowSeconds()},"model":${JSON.stringify(meta.model)}`;
    this.choice = `data: ${this.base},"choices":[{"index":0,"delta":`;
  }

  private chunk(delta: string, finish: string): string {
    return `${this.choice}${delta},"logprobs":null,"finish_reason":${finish}}]}\n\n`;
  }

  private head(): string {
    if (this.started) return '';
    this.started = true;
    return this.chunk('{"role":"assistant","content":""}', 'null');
  }

  push(e: StreamEvent): string {
    if (this.finished) {
      if (e.type === 'usage') mergeUsage((this.usage ??= zeroUsage()), e.usage);
      return '';
    }
    switch (e.type) {
      case 'start':
        return this.head();
      case 'text':
        return this.head() + this.chunk(`{"content":${JSON.stringify(e.text)}}`, 'null');
      case 'tool_call_start':
        return this.head() + this.chunk(
          `{"tool_calls":[{"index":${e.index},"id":${JSON.stringify(e.id)},"type":"function","function":{"name":${JSON.stringify(e.name)},"arguments":""}}]}`,
          'null',
        );
      case 'tool_call_delta':
        return this.head() + this.chunk(`{"tool_calls":[{"index":${e.index},"function":{"arguments":${JSON.stringify(e.arguments)}}}]}`, 'null');
      case 'usage':
        mergeUsage((this.usage ??= zeroUsage()), e.usage);
        return '';
      case 'finish':
        this.finished = true;
        if (e.finishReason === 'error') {
          this.failed = true;
          return STREAM_ERROR;
        }
        return this.head() + this.chunk('{}', `"${toOpenAIFinish(e.finishReason)}"`);
    }
  }

  /** The usage chunk (choices: []) when the client asked for it, then `data: [DONE]`; an error if no finish came. */
  end(): string {
    if (!this.finished) {
      this.finished = this.failed = true;
      return STREAM_ERROR;
    }
    if (this.failed) return '';
    let s = '';
    if (this.meta.includeUsage) {
      s = `data: ${this.base},"choices":[],"usage":${JSON.stringify(openaiUsageOut(this.usage ?? zeroUsage()))}}\n\n`;
    }
    return s + 'data: [DONE]\n\n';
  }
}

export function createOpenAIEncoder(meta: StreamEncoderMeta): StreamEncoder {
  return new OpenAIEncoder(meta);
}

/**
 * Reads the final chunk's usage (include_usage) off the forwarded bytes; complete = `data: [DONE]` seen.
 * Every payload is checked structurally (a `{…}` object); only those holding a `"usage": {…}` or an
 * error (`{"error": …}`) are JSON-parsed, which keeps the tap several times cheaper than decoding.
 */
class OpenAITap implements UsageTap {
  private readonly parser = new SseParser((_event, data) => this.onData(data));
  private readonly u = zeroUsage();
  private done = false;
  private bad = false;

  push(chunk: Buffer | string): void {
    if (!this.done) this.parser.push(chunk);
  }

  usage(): Usage {
    return { ...this.u };
  }

  complete(): boolean {
    return this.done;
  }

  malformed(): boolean {
    return this.bad;
  }

  private onData(data: string): void {
    if (this.done) return;
    if (data === '[DONE]') {
      this.done = true;
      return;
    }
    if (!looksLikeObject(data)) {
      this.bad = true;
      return;
    }
    if (!hasObjectKey(data, '"usage"') && !startsWithErrorKey(data)) return;
    let c: unknown;
    try {
      c = JSON.parse(data);
    } catch {
      this.bad = true;
      return;
    }
    if (isObj(c) && isObj(c.usage)) mergeUsage(this.u, openaiUsageIn(c.usage));
  }
}

export function createOpenAITap(): UsageTap {
  return new OpenAITap();
}

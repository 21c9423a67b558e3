/** Gemini streamGenerateContent?alt=sse streams (`data: {GenerateContentResponse}`): decoder, encoder, usage tap. */
import { SseParser } from './sse';
import type { FinishReason, StreamDecoder, StreamEncoder, StreamEncoderMeta, StreamEvent, Usage, UsageTap } from './types';
import { argsObject, isObj, looksLikeObject, startsWithErrorKey, mergeUsage, num, vendorResponseId, zeroUsage, type Obj } from './util';

/** Gemini finishReason → canonical; STOP with function calls in the turn → 'tool_calls'. */
export function geminiFinish(r: unknown, hadCalls: boolean): FinishReason {
  switch (r) {
    case 'MAX_TOKENS': return 'length';
    case 'SAFETY':
    case 'RECITATION':
    case 'BLOCKLIST':
    case 'PROHIBITED_CONTENT':
    case 'SPII':
    case 'IMAGE_SAFETY':
    case 'IMAGE_PROHIBITED_CONTENT':
    case 'IMAGE_RECITATION':
    case 'LANGUAGE': return 'content_filter';
    case 'MALFORMED_FUNCTION_CALL':
    case 'UNEXPECTED_TOOL_CALL':
    case 'TOO_MANY_TOOL_CALLS': return 'error';
    default: return hadCalls ? 'tool_calls' : 'stop'; // STOP, OTHER, …
  }
}

export function toGeminiFinish(r: FinishReason): string {
  switch (r) {
    case 'length': return 'MAX_TOKENS';
    case 'content_filter': return 'SAFETY';
    case 'error': return 'OTHER';
    default: return 'STOP'; // Gemini ends function-call turns with STOP too
  }
}

/** promptTokenCount (+ toolUsePromptTokenCount) in, candidates + thoughts out, cachedContentTokenCount cached. */
export function geminiUsageIn(u: unknown): Usage {
  if (!isObj(u)) return zeroUsage();
  return {
    inputTokens: num(u.promptTokenCount) + num(u.toolUsePromptTokenCount),
    outputTokens: num(u.candidatesTokenCount) + num(u.thoughtsTokenCount),
    cachedTokens: num(u.cachedContentTokenCount),
  };
}

export function geminiUsageOut(u: Usage): Obj {
  const out: Obj = {
    promptTokenCount: u.inputTokens,
    candidatesTokenCount: u.outputTokens,
    totalTokenCount: u.inputTokens + u.outputTokens,
  };
  if (u.cachedTokens) out.cachedContentTokenCount = u.cachedTokens;
  return out;
}

class GeminiDecoder implements StreamDecoder {
  private out: StreamEvent[] = [];
  private readonly parser = new SseParser((_event, data) => this.onData(data));
  private started = false;
  private finished = false;
  private bad = false;
  private stopped = false;
  private calls = 0;

  push(chunk: Buffer | string): StreamEvent[] {
    if (this.stopped) return [];
    this.out = [];
    this.parser.push(chunk);
    return this.out;
  }

  end(): StreamEvent[] {
    this.out = [];
    this.parser.end();
    if (!this.finished) this.finish('error');
    this.stopped = true;
    return this.out;
  }

  /** The chunk with a finishReason arrived and no partial event follows it. */
  complete(): boolean {
    return this.finished && !this.bad && !this.parser.pending;
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
    if (this.stopped) return;
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
      out.push({ type: 'start', id: typeof c.responseId === 'string' ? c.responseId : '', model: typeof c.modelVersion === 'string' ? c.modelVersion : '' });
    }
    const cand = Array.isArray(c.candidates) ? c.candidates[0] : undefined;
    let reason: unknown;
    if (isObj(cand)) {
      const parts = isObj(cand.content) && Array.isArray(cand.content.parts) ? cand.content.parts : undefined;
      if (parts) {
        for (const part of parts) {
          if (!isObj(part)) continue;
          if (typeof part.text === 'string') {
            if (part.text.length && part.thought !== true) out.push({ type: 'text', text: part.text });
          } else if (isObj(part.functionCall)) {
            const fc = part.functionCall;
            const index = this.calls++;
            const id = typeof fc.id === 'string' && fc.id ? fc.id : `call_${index}`;
            out.push({ type: 'tool_call_start', index, id, name: typeof fc.name === 'string' ? fc.name : '' });
            out.push({ type: 'tool_call_delta', index, arguments: JSON.stringify(fc.args ?? {}) });
          }
        }
      }
      reason = cand.finishReason;
    } else if (isObj(c.promptFeedback) && c.promptFeedback.blockReason !== undefined) {
      reason = 'SAFETY';
    }
    if (typeof reason === 'string' && reason !== 'FINISH_REASON_UNSPECIFIED' && !this.finished) {
      this.finish(geminiFinish(reason, this.calls > 0));
    }
    if (isObj(c.usageMetadata)) out.push({ type: 'usage', usage: geminiUsageIn(c.usageMetadata) });
  }
}

export function createGeminiDecoder(): StreamDecoder {
  return new GeminiDecoder();
}

const STREAM_ERROR = `data: ${JSON.stringify({ error: { code: 500, message: 'The upstream model stream failed.', status: 'INTERNAL' } })}\n\n`;

/**
 * One `data:` chunk per text delta; function calls (streamed as deltas by other vendors) are
 * gathered and sent whole, as Gemini does; the last chunk carries finishReason and usageMetadata
 * (held until end(), since usage may follow finish).
 */
class GeminiEncoder implements StreamEncoder {
  private readonly tail: string;
  private readonly u = zeroUsage();
  private hasUsage = false;
  private calls: Array<{ name: string; args: string }> = [];
  private reason: string | null = null;
  private finished = false;
  private failed = false;

  constructor(meta: StreamEncoderMeta) {
    this.tail = `,"modelVersion":${JSON.stringify(meta.model)},"responseId":${JSON.stringify(vendorResponseId('gemini', meta.id))}}\n\n`;
  }

  private chunk(parts: string, finish: string | null): string {
    const usage = this.hasUsage ? `,"usageMetadata":${JSON.stringify(geminiUsageOut(this.u))}` : '';
    const fr = finish ? `,"finishReason":"${finish}"` : '';
    return `data: {"candidates":[{"content":{"parts":[${parts}],"role":"model"}${fr},"index":0}]${usage}${this.tail}`;
  }

  private callParts(): string {
    let s = '';
    for (const c of this.calls) {
      if (!c) continue;
      s += `${s ? ',' : ''}{"functionCall":{"name":${JSON.stringify(c.name)},"args":${JSON.stringify(argsObject(c.args))}}}`;
    }
    this.calls = [];
    return s;
  }

  push(e: StreamEvent): string {
    switch (e.type) {
      case 'usage':
        mergeUsage(this.u, e.usage);
        this.hasUsage = true;
        return '';
      case 'start':
        return '';
      case 'text': {
        if (this.finished) return '';
        const calls = this.calls.length ? this.callParts() : '';
        return (calls ? this.chunk(calls, null) : '') + this.chunk(`{"text":${JSON.stringify(e.text)}}`, null);
      }
      case 'tool_call_start':
        if (!this.finished) this.calls[e.index] = { name: e.name, args: '' };
        return '';
      case 'tool_call_delta': {
        const c = this.calls[e.index];
        if (c && !this.finished) c.args += e.arguments;
        return '';
      }
      case 'finish':
        if (this.finished) return '';
        this.finished = true;
        if (e.finishReason === 'error') {
          this.failed = true;
          return STREAM_ERROR;
        }
        this.reason = toGeminiFinish(e.finishReason);
        return '';
    }
  }

  end(): string {
    if (this.failed) return '';
    if (!this.finished) {
      this.finished = this.failed = true;
      return STREAM_ERROR;
    }
    return this.chunk(this.callParts() || '{"text":""}', this.reason);
  }
}

export function createGeminiEncoder(meta: StreamEncoderMeta): StreamEncoder {
  return new GeminiEncoder(meta);
}

/**
 * usageMetadata of the latest chunk (Gemini repeats cumulative totals in every chunk); complete = a
 * chunk with finishReason (or a prompt block) and nothing partial after it. Every payload is checked
 * structurally (a `{…}` object); chunks with finishReason/blockReason/error are JSON-parsed at once,
 * others only when they turn out to be the latest when usage() is read.
 */
class GeminiTap implements UsageTap {
  private readonly parser = new SseParser((_event, data) => this.onData(data));
  private readonly u = zeroUsage();
  /** The latest chunk not parsed yet (only its usage matters). */
  private latest: string | null = null;
  private finished = false;
  private bad = false;

  push(chunk: Buffer | string): void {
    this.parser.push(chunk);
  }

  usage(): Usage {
    if (this.latest !== null) this.read(this.latest);
    this.latest = null;
    return { ...this.u };
  }

  complete(): boolean {
    return this.finished && !this.bad && !this.parser.pending;
  }

  malformed(): boolean {
    return this.bad;
  }

  private onData(data: string): void {
    if (!looksLikeObject(data)) {
      this.bad = true;
      return;
    }
    // finishReason / blockReason (searched from the end, where they sit), or an error object.
    if (data.lastIndexOf('Reason"') >= 0 || startsWithErrorKey(data)) {
      this.latest = null;
      this.read(data);
    } else this.latest = data;
  }

  private read(data: string): void {
    let c: unknown;
    try {
      c = JSON.parse(data);
    } catch {
      this.bad = true;
      return;
    }
    if (!isObj(c)) return;
    if (isObj(c.usageMetadata)) mergeUsage(this.u, geminiUsageIn(c.usageMetadata));
    const cand = Array.isArray(c.candidates) ? c.candidates[0] : undefined;
    const reason = isObj(cand) ? cand.finishReason : undefined;
    if (typeof reason === 'string' && reason !== 'FINISH_REASON_UNSPECIFIED') this.finished = true;
    else if (isObj(c.promptFeedback) && c.promptFeedback.blockReason !== undefined) this.finished = true;
  }
}

export function createGeminiTap(): UsageTap {
  return new GeminiTap();
}

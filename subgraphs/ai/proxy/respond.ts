import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { ChatRequest, ErrorKind, StreamEncoder, Usage, UsageTap, VendorApi } from '../protocol';
import type { CircuitBreakers } from './circuit';
import { readAll, upstreamErrorMessage, whenBodyDone, type CommittedAnswer, type Exchange, type FailoverFailure } from './forward';
import { estimateChatTokens, PROTOCOLS, ResponseAssembler, streamErrorFrame } from './protocols';
import type { UpstreamAnswer } from './upstream';
import type { UsageRecorder } from './usage';

const EMPTY = Buffer.alloc(0);

/** Largest upstream body buffered whole (non-stream translation, usage of non-stream pass-through). */
const MAX_BUFFERED_ANSWER = 64 * 1024 * 1024;
/** Bytes of a pass-through stream kept for a cut stream's estimate and for conversations. */
const MAX_KEPT_STREAM = 4 * 1024 * 1024;

/** What every responder needs. */
export interface ResponderContext {
  res: ServerResponse;
  exchange: Exchange;
  recorder: UsageRecorder;
  breakers: CircuitBreakers;
  clientApi: VendorApi;
  /** The client's request in canonical form, when known (translation), or a way to get it (estimates, conversations). */
  canonical: () => ChatRequest | null;
  /** Store the request and response bodies (the key's or pool's choice). */
  storeConversation: boolean;
  /** The client's request body (conversations). */
  requestBody: unknown;
  clientGone: () => boolean;
}

/** Sends a vendor-shaped error and records the request. */
export function sendVendorError(
  ctx: Pick<ResponderContext, 'res' | 'exchange' | 'recorder' | 'clientApi'> | { res: ServerResponse; clientApi: VendorApi; exchange?: undefined; recorder?: undefined },
  kind: ErrorKind,
  message: string,
  options: { status?: number; headers?: Record<string, string> } = {},
): void {
  const formatted = PROTOCOLS[ctx.clientApi].formatError(kind, message);
  const status = options.status ?? formatted.status;
  writeJson(ctx.res, status, formatted.body, options.headers);
  if (ctx.exchange && ctx.recorder) ctx.exchange.finish(ctx.recorder, status, message);
}

export function writeJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const payload = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers });
  res.end(payload);
}

/** The answer when failover found no member that answered usably. */
export function sendFailoverFailure(ctx: ResponderContext, failure: FailoverFailure): void {
  if (failure.kind === 'client_gone') return ctx.exchange.finish(ctx.recorder, 499, 'The client closed the request');
  if (failure.kind === 'all_open') {
    // 503 for every vendor (Anthropic's own overloaded status would be 529).
    return sendVendorError(ctx, 'overloaded', 'Every upstream that serves this model is temporarily unavailable; retry later.', { status: 503 });
  }
  if (failure.status === 429) {
    const seconds = Math.max(1, Math.ceil((failure.retryAfterMs ?? 1000) / 1000));
    return sendVendorError(ctx, 'rate_limit', `The upstream is rate limiting: ${failure.message}`, { headers: { 'retry-after': String(seconds) } });
  }
  if (failure.reason === 'timeout') return sendVendorError(ctx, 'timeout', `The upstream did not answer in time: ${failure.message}`);
  sendVendorError(ctx, 'upstream', `The upstream failed: ${failure.message}`);
}

/** Error kind of an upstream 4xx status, for translating it into the client's vendor shape. */
export function kindOfStatus(status: number): ErrorKind {
  switch (status) {
    case 401:
      return 'authentication';
    case 402:
      return 'budget';
    case 403:
      return 'permission';
    case 404:
      return 'not_found';
    case 429:
      return 'rate_limit';
    default:
      return 'invalid_request';
  }
}

/**
 * An upstream 4xx (other than 429) given back: as it is when the vendors match, else its
 * message in the client's vendor shape.
 */
export async function relayClientError(ctx: ResponderContext, answer: UpstreamAnswer, sameVendor: boolean): Promise<void> {
  const raw = await readAll(answer.body, 1024 * 1024).catch(() => Buffer.alloc(0));
  const message = upstreamErrorMessage(raw.toString('utf8')) ?? `The upstream answered ${answer.status}`;
  if (sameVendor) {
    if (!ctx.res.headersSent && !ctx.res.destroyed) {
      const contentType = answer.headers['content-type'];
      ctx.res.writeHead(answer.status, { 'content-type': typeof contentType === 'string' ? contentType : 'application/json', 'content-length': raw.length });
      ctx.res.end(raw);
    }
    return ctx.exchange.finish(ctx.recorder, answer.status, message);
  }
  sendVendorError(ctx, kindOfStatus(answer.status), message);
}

function headOf(answer: UpstreamAnswer, stream: boolean, keepLength: boolean): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  const contentType = answer.headers['content-type'];
  headers['content-type'] = typeof contentType === 'string' ? contentType : stream ? 'text/event-stream' : 'application/json';
  // Never asked for, but should an upstream compress anyway, the client must know.
  if (answer.headers['content-encoding'] !== undefined) headers['content-encoding'] = answer.headers['content-encoding'];
  if (stream) {
    headers['cache-control'] = 'no-cache';
    headers['x-accel-buffering'] = 'no';
  } else if (keepLength && answer.headers['content-length'] !== undefined) {
    headers['content-length'] = answer.headers['content-length'];
  }
  return headers;
}

/**
 * Same vendor: the upstream's bytes go to the client as they arrive. A stream feeds the usage tap
 * (and, when the proxy itself asked for OpenAI's usage chunk, loses that chunk on the way); a
 * non-stream body is kept as it passes and read for usage after it has been sent.
 */
export function pipeThrough(
  ctx: ResponderContext,
  committed: CommittedAnswer,
  options: { stream: boolean; dropUsageChunk: boolean; /** Usage of a non-stream answer (default: the vendor's usage field). */ usageOf?: (json: unknown) => Usage },
): Promise<void> {
  const { res, exchange } = ctx;
  const { answer, first, controller, candidate } = committed;
  const proto = PROTOCOLS[candidate.member.api];
  const tap = options.stream ? proto.createUsageTap() : null;
  const filter = options.dropUsageChunk ? new UsageChunkFilter() : null;
  const kept: Buffer[] = [];
  let keptBytes = 0;
  exchange.streamed = options.stream;

  res.writeHead(answer.status, headOf(answer, options.stream, !filter));
  const body = answer.body;
  return new Promise<void>((resolve) => {
    let settled = false;
    const settle = (outcome: 'end' | 'error' | 'gone', error?: Error) => {
      if (settled) return;
      settled = true;
      body.off('data', onData);
      res.off('drain', onDrain);
      res.off('close', onClose);
      if (outcome === 'gone') controller.abort();
      resolve();
      // Accounting after the bytes are out.
      finishPassThrough(ctx, committed, { tap, kept, stream: options.stream, outcome, error, usageOf: options.usageOf });
    };
    const write = (chunk: Buffer) => {
      if (tap) tap.push(chunk);
      if (keptBytes < MAX_KEPT_STREAM || !options.stream) {
        kept.push(chunk);
        keptBytes += chunk.length;
      }
      const out = filter ? filter.push(chunk) : chunk;
      if (out.length === 0) return;
      exchange.firstByte();
      if (!res.write(out)) body.pause();
    };
    const onData = (chunk: Buffer) => write(chunk);
    const onDrain = () => body.resume();
    const onClose = () => {
      if (!res.writableFinished) settle('gone');
    };
    res.on('drain', onDrain);
    res.on('close', onClose);
    if (ctx.clientGone()) return settle('gone');
    if (first) write(first);
    if (first === null) {
      // The body ended before any byte (an empty answer).
      exchange.firstByte();
      res.end();
      return settle('end');
    }
    body.on('data', onData);
    whenBodyDone(
      body,
      () => {
        const tail = filter?.end();
        if (tail && tail.length) {
          exchange.firstByte();
          res.end(tail);
        } else res.end();
        settle('end');
      },
      (err: Error) => {
        if (ctx.clientGone()) return settle('gone');
        if (options.stream && !res.destroyed) res.end(streamErrorFrame(ctx.clientApi));
        else res.destroy();
        settle('error', err);
      },
    );
    body.resume();
  });
}

function finishPassThrough(
  ctx: ResponderContext,
  committed: CommittedAnswer,
  state: { tap: UsageTap | null; kept: Buffer[]; stream: boolean; outcome: 'end' | 'error' | 'gone'; error?: Error; usageOf?: (json: unknown) => Usage },
): void {
  const { exchange } = ctx;
  const member = committed.candidate.member;
  const proto = PROTOCOLS[member.api];
  let error: string | null = null;
  if (state.outcome === 'gone') error = 'The client closed the request';
  else if (state.outcome === 'error') {
    error = `The upstream stream was cut: ${state.error?.message ?? 'connection closed'}`;
    ctx.breakers.failure(member.id);
  }
  let responseBody: unknown = null;
  if (state.stream && state.tap) {
    const tap = state.tap;
    if (state.outcome === 'end' && !tap.complete()) error = tap.malformed() ? 'The upstream stream was malformed' : 'The upstream stream ended before its end marker';
    let assembler: ResponseAssembler | null = null;
    const assemble = () => {
      if (assembler) return assembler;
      assembler = new ResponseAssembler();
      const decoder = proto.createStreamDecoder();
      for (const chunk of state.kept) assembler.pushAll(decoder.push(chunk));
      assembler.pushAll(decoder.end());
      return assembler;
    };
    applyStreamUsage(ctx, tap.usage(), tap.complete(), () => assemble().outputChars);
    if (ctx.storeConversation) responseBody = proto.formatChatResponse(assemble().response(exchange.upstreamModel ?? exchange.model));
  } else if (state.outcome === 'end') {
    const text = state.kept.length === 1 ? state.kept[0].toString('utf8') : Buffer.concat(state.kept).toString('utf8');
    try {
      const json: unknown = JSON.parse(text);
      Object.assign(exchange.usage, (state.usageOf ?? proto.usageFromResponse)(json));
      responseBody = json;
    } catch {
      error = 'The upstream answer was not JSON';
    }
  }
  if (ctx.storeConversation) exchange.conversation = { requestBody: ctx.requestBody, responseBody };
  exchange.finish(ctx.recorder, state.outcome === 'gone' ? 499 : committed.answer.status, error);
}

/**
 * Usage of a stream: the upstream's own numbers when the stream completed; for a cut stream, the
 * input the upstream reported (Anthropic and Gemini send it early) or else an estimate from the
 * request, and the larger of the output reported so far and an estimate from the text and tool
 * arguments seen (4 characters per token).
 */
function applyStreamUsage(ctx: ResponderContext, reported: Usage, complete: boolean, outputChars: () => number): void {
  const usage = ctx.exchange.usage;
  if (complete) {
    Object.assign(usage, reported);
    return;
  }
  let input = reported.inputTokens;
  if (input === 0) {
    try {
      const canonical = ctx.canonical();
      input = canonical ? estimateChatTokens(canonical) : 0;
    } catch {
      input = 0;
    }
  }
  usage.inputTokens = input;
  usage.cachedTokens = Math.min(reported.cachedTokens, input);
  usage.outputTokens = Math.max(reported.outputTokens, Math.ceil(outputChars() / 4));
}

/**
 * Different vendors: the upstream's stream is decoded into canonical events and encoded in the
 * client's vendor's stream format, written as each chunk decodes.
 */
export function pipeTranslatedStream(ctx: ResponderContext, committed: CommittedAnswer, options: { includeUsage: boolean }): Promise<void> {
  const { res, exchange } = ctx;
  const { answer, first, controller, candidate } = committed;
  const upstream = PROTOCOLS[candidate.member.api];
  const client = PROTOCOLS[ctx.clientApi];
  const decoder = upstream.createStreamDecoder();
  const assembler = new ResponseAssembler();
  let encoder: StreamEncoder | null = null;
  exchange.streamed = true;

  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
  const body = answer.body;
  const encode = (events: ReturnType<typeof decoder.push>): string => {
    let out = '';
    for (const event of events) {
      assembler.push(event);
      encoder ??= client.createStreamEncoder({
        id: event.type === 'start' ? event.id : '',
        model: (event.type === 'start' && event.model) || candidate.upstreamModel,
        includeUsage: options.includeUsage,
      });
      out += encoder.push(event);
    }
    return out;
  };
  const finalText = (): string => {
    const out = encode(decoder.end());
    encoder ??= client.createStreamEncoder({ id: '', model: candidate.upstreamModel, includeUsage: options.includeUsage });
    return out + encoder.end();
  };

  return new Promise<void>((resolve) => {
    let settled = false;
    const settle = (outcome: 'end' | 'error' | 'gone' | 'malformed', error?: Error) => {
      if (settled) return;
      settled = true;
      body.off('data', onData);
      res.off('drain', onDrain);
      res.off('close', onClose);
      if (outcome === 'gone' || outcome === 'malformed') controller.abort();
      resolve();
      let message: string | null = null;
      if (outcome === 'gone') message = 'The client closed the request';
      else if (outcome === 'malformed') message = 'The upstream stream was malformed';
      else if (outcome === 'error') message = `The upstream stream was cut: ${error?.message ?? 'connection closed'}`;
      else if (!decoder.complete()) message = 'The upstream stream ended before its end marker';
      if (outcome === 'error' || outcome === 'malformed') ctx.breakers.failure(candidate.member.id);
      applyStreamUsage(ctx, assembler.usage, decoder.complete() && outcome === 'end', () => assembler.outputChars);
      if (ctx.storeConversation) {
        exchange.conversation = { requestBody: ctx.requestBody, responseBody: client.formatChatResponse(assembler.response(candidate.upstreamModel)) };
      }
      exchange.finish(ctx.recorder, outcome === 'gone' ? 499 : 200, message);
    };
    const push = (chunk: Buffer) => {
      const out = encode(decoder.push(chunk));
      if (decoder.malformed()) {
        res.end(out + finalText());
        exchange.firstByte();
        return settle('malformed');
      }
      if (out.length === 0) return;
      exchange.firstByte();
      if (!res.write(out)) body.pause();
    };
    const onData = (chunk: Buffer) => push(chunk);
    const onDrain = () => body.resume();
    const onClose = () => {
      if (!res.writableFinished) settle('gone');
    };
    res.on('drain', onDrain);
    res.on('close', onClose);
    if (ctx.clientGone()) return settle('gone');
    if (first) push(first);
    if (settled) return;
    if (first === null) {
      res.end(finalText());
      return settle('end');
    }
    body.on('data', onData);
    whenBodyDone(
      body,
      () => {
        if (settled) return;
        const tail = finalText();
        exchange.firstByte();
        res.end(tail);
        settle('end');
      },
      (err: Error) => {
        if (settled) return;
        if (ctx.clientGone()) return settle('gone');
        if (!res.destroyed) res.end(finalText());
        settle('error', err);
      },
    );
    body.resume();
  });
}

/**
 * Different vendors, no stream: the whole upstream answer is read, translated and sent.
 * `translate` turns the upstream's JSON into the client's body and reports its usage.
 */
export async function sendTranslated(ctx: ResponderContext, committed: CommittedAnswer, translate: (json: unknown) => { body: unknown; usage: Usage }): Promise<void> {
  const { exchange } = ctx;
  let raw: Buffer;
  try {
    raw = await readAll(committed.answer.body, MAX_BUFFERED_ANSWER, committed.first);
  } catch (err) {
    if (ctx.clientGone()) return exchange.finish(ctx.recorder, 499, 'The client closed the request');
    ctx.breakers.failure(committed.candidate.member.id);
    return sendVendorError(ctx, 'upstream', `The upstream answer failed: ${(err as Error).message}`);
  }
  let translated: { body: unknown; usage: Usage };
  try {
    translated = translate(JSON.parse(raw.toString('utf8')));
  } catch (err) {
    return sendVendorError(ctx, 'upstream', `The upstream answer could not be read: ${(err as Error).message}`);
  }
  Object.assign(exchange.usage, translated.usage);
  if (ctx.clientGone()) return exchange.finish(ctx.recorder, 499, 'The client closed the request');
  exchange.firstByte();
  writeJson(ctx.res, 200, translated.body);
  if (ctx.storeConversation) exchange.conversation = { requestBody: ctx.requestBody, responseBody: translated.body };
  exchange.finish(ctx.recorder, 200);
}

/**
 * Drops OpenAI's usage-only chunk (`"choices":[]` with usage) that the proxy asked for on the
 * client's behalf. Bytes pass unchanged up to the last complete event of each chunk; only a chunk
 * holding that marker is split into events and filtered.
 */
export class UsageChunkFilter {
  private carry: Buffer = EMPTY;

  push(chunk: Buffer): Buffer {
    // Bytes, not text: '\n' never occurs inside a multi-byte UTF-8 sequence.
    const data = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    const boundary = data.lastIndexOf('\n\n');
    if (boundary === -1) {
      this.carry = data;
      return EMPTY;
    }
    const complete = data.subarray(0, boundary + 2);
    this.carry = data.subarray(boundary + 2);
    if (complete.indexOf('"choices":[]') === -1) return complete;
    const kept = complete
      .toString('utf8')
      .split('\n\n')
      .filter((event) => event !== '' && !isUsageOnlyEvent(event))
      .map((event) => `${event}\n\n`)
      .join('');
    return Buffer.from(kept);
  }

  end(): Buffer {
    const rest = this.carry;
    this.carry = EMPTY;
    return rest;
  }
}


function isUsageOnlyEvent(event: string): boolean {
  if (!event.includes('"choices":[]')) return false;
  const data = event
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trimStart())
    .join('\n');
  try {
    const parsed = JSON.parse(data) as { choices?: unknown[]; usage?: unknown };
    return Array.isArray(parsed.choices) && parsed.choices.length === 0 && parsed.usage !== undefined && parsed.usage !== null;
  } catch {
    return false;
  }
}

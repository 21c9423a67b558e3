import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import type { Usage } from '../protocol';
import { costOf } from '../pricing';
import type { CircuitBreakers } from './circuit';
import type { MemberSelector } from './select';
import type { Candidate, Operation, RouteMember } from './types';
import { retryAfterMs, UpstreamUnreachable, type UpstreamAnswer, type UpstreamCall, type UpstreamClient } from './upstream';
import type { ConversationRecord, KeyCounters, UsageRecorder } from './usage';

/** The longest `retry-after` the proxy waits out before retrying the same member. */
export const MAX_HONOURED_RETRY_AFTER_MS = 2_000;

/**
 * One request's facts as they accumulate, turned into exactly one usage row by `finish` (later
 * calls do nothing).
 */
export class Exchange {
  readonly startedAt = performance.now();
  readonly createdAt = new Date();
  member: RouteMember | null = null;
  /** The model name sent to the upstream (priced and recorded). */
  upstreamModel: string | null = null;
  attempts = 0;
  ttfbMs: number | null = null;
  streamed = false;
  readonly usage: Usage = { inputTokens: 0, outputTokens: 0, cachedTokens: 0 };
  /** Request and response bodies, when the key or pool stores conversations. */
  conversation: { requestBody: unknown; responseBody: unknown } | null = null;
  private done = false;

  constructor(
    readonly requestId: string,
    readonly workspaceId: string,
    readonly keyId: string | null,
    readonly poolId: string | null,
    readonly clientApi: string,
    readonly operation: Operation,
    public model: string,
    readonly counters: KeyCounters | null,
  ) {}

  /** The first byte of the response body went to the client. */
  firstByte(): void {
    if (this.ttfbMs === null) this.ttfbMs = performance.now() - this.startedAt;
  }

  get finished(): boolean {
    return this.done;
  }

  elapsedMs(): number {
    return performance.now() - this.startedAt;
  }

  finish(recorder: UsageRecorder, status: number, error: string | null = null): void {
    if (this.done) return;
    this.done = true;
    const model = this.upstreamModel ?? this.model;
    const cost = costOf(model, this.usage);
    let conversation: ConversationRecord | undefined;
    if (this.conversation) {
      conversation = {
        requestId: this.requestId,
        workspaceId: this.workspaceId,
        keyId: this.keyId,
        poolId: this.poolId,
        model,
        requestBody: this.conversation.requestBody,
        responseBody: this.conversation.responseBody,
        status,
      };
    }
    recorder.record(
      {
        requestId: this.requestId,
        workspaceId: this.workspaceId,
        keyId: this.keyId,
        poolId: this.poolId,
        upstreamId: this.member?.upstreamId ?? null,
        platformModelId: this.member?.platformModelId ?? null,
        clientApi: this.clientApi,
        upstreamApi: this.member?.api ?? null,
        operation: this.operation,
        model,
        inputTokens: this.usage.inputTokens,
        outputTokens: this.usage.outputTokens,
        cachedTokens: this.usage.cachedTokens,
        costUsd: cost,
        latencyMs: Math.round(this.elapsedMs()),
        ttfbMs: this.ttfbMs === null ? null : Math.round(this.ttfbMs),
        status,
        streamed: this.streamed,
        attempts: this.attempts,
        error,
        createdAt: this.createdAt,
      },
      this.counters,
      conversation,
    );
  }
}

/** What the attempts ended with when no member answered usably. */
export type FailoverFailure =
  | { kind: 'client_gone' }
  /** Every member serving the model is skipped by its circuit breaker. */
  | { kind: 'all_open' }
  | { kind: 'exhausted'; status: number | null; reason: 'timeout' | 'connection' | 'status'; message: string; retryAfterMs: number | null };

/** A 2xx head and the body's first chunk (or its end): the point after which there is no failover. */
export interface CommittedAnswer {
  candidate: Candidate;
  answer: UpstreamAnswer;
  /** The first body chunk, null when the body was empty. */
  first: Buffer | null;
  controller: AbortController;
}

export type AttemptOutcome =
  | { kind: 'success'; committed: CommittedAnswer }
  /** A 4xx other than 429: the upstream's answer to this request, given back to the client. */
  | { kind: 'client_error'; candidate: Candidate; answer: UpstreamAnswer; controller: AbortController }
  | { kind: 'failed'; failure: FailoverFailure };

export interface FailoverOptions {
  client: UpstreamClient;
  breakers: CircuitBreakers;
  selector: MemberSelector;
  /** First backoff between attempts, doubling per attempt. */
  backoffMs: number;
}

/**
 * Tries the candidates in order, up to `maxAttempts` attempts (cycling: a pool with fewer
 * members than attempts retries the same member). 429, 5xx, connection errors and head timeouts
 * count against the member's circuit breaker and move on after a backoff; a member that timed
 * out or asked to wait longer than 2 s (`retry-after`) is not tried again for this request. A
 * 2xx answer commits once its first body byte (or its end) arrives: a connection that dies
 * before that still fails over.
 */
export async function forwardWithFailover(
  options: FailoverOptions,
  exchange: Exchange,
  candidates: Candidate[],
  maxAttempts: number,
  clientSignal: AbortSignal,
  build: (candidate: Candidate) => UpstreamCall,
): Promise<AttemptOutcome> {
  const { client, breakers, selector } = options;
  const excluded = new Set<string>();
  const waitUntil = new Map<string, number>();
  let last: FailoverFailure | null = null;
  let cursor = 0;
  while (exchange.attempts < maxAttempts) {
    if (clientSignal.aborted) return { kind: 'failed', failure: { kind: 'client_gone' } };
    // The next candidate that is neither excluded nor skipped by its breaker, cycling once round.
    let candidate: Candidate | null = null;
    for (let step = 0; step < candidates.length; step++) {
      const c = candidates[(cursor + step) % candidates.length];
      if (excluded.has(c.member.id)) continue;
      if (!breakers.tryAcquire(c.member.id)) continue;
      candidate = c;
      cursor = (cursor + step + 1) % candidates.length;
      break;
    }
    if (!candidate) break;
    const { member } = candidate;
    if (exchange.attempts > 0) {
      const backoff = options.backoffMs * 2 ** (exchange.attempts - 1);
      const wait = Math.max(backoff, (waitUntil.get(member.id) ?? 0) - Date.now());
      if (wait > 0 && !(await sleep(wait, clientSignal))) return { kind: 'failed', failure: { kind: 'client_gone' } };
    }
    exchange.attempts++;
    exchange.member = member;
    exchange.upstreamModel = candidate.upstreamModel;
    const call = build(candidate);
    const controller = new AbortController();
    const onClientGone = () => controller.abort();
    clientSignal.addEventListener('abort', onClientGone, { once: true });
    const sentAt = performance.now();
    let answer: UpstreamAnswer;
    try {
      answer = await client.send(member, call, controller);
    } catch (err) {
      clientSignal.removeEventListener('abort', onClientGone);
      if (clientSignal.aborted) return { kind: 'failed', failure: { kind: 'client_gone' } };
      const reason = err instanceof UpstreamUnreachable && err.reason === 'timeout' ? 'timeout' : 'connection';
      breakers.failure(member.id);
      if (reason === 'timeout') excluded.add(member.id);
      last = { kind: 'exhausted', status: null, reason, message: (err as Error).message, retryAfterMs: null };
      continue;
    }
    selector.recordTtfb(member.id, performance.now() - sentAt);
    // An error between two owners of the body must not go unheard (it would crash the process);
    // owners check `body.errored` / `readableEnded` when they take over (see whenBodyDone).
    answer.body.on('error', ignore);
    const status = answer.status;
    if (status === 429 || status >= 500) {
      clientSignal.removeEventListener('abort', onClientGone);
      breakers.failure(member.id);
      const retryAfter = retryAfterMs(answer.headers['retry-after']);
      if (retryAfter !== null && retryAfter > MAX_HONOURED_RETRY_AFTER_MS) excluded.add(member.id);
      else if (retryAfter !== null) waitUntil.set(member.id, Date.now() + retryAfter);
      const text = await readText(answer.body, 16 * 1024).catch(() => '');
      last = { kind: 'exhausted', status, reason: 'status', message: upstreamErrorMessage(text) ?? `The upstream answered ${status}`, retryAfterMs: retryAfter };
      continue;
    }
    if (status >= 400) {
      // The member is healthy; the request is what it refused.
      breakers.success(member.id);
      clientSignal.removeEventListener('abort', onClientGone);
      return { kind: 'client_error', candidate, answer, controller };
    }
    const first = await firstChunk(answer.body);
    clientSignal.removeEventListener('abort', onClientGone);
    if (first.error) {
      if (clientSignal.aborted) return { kind: 'failed', failure: { kind: 'client_gone' } };
      breakers.failure(member.id);
      last = { kind: 'exhausted', status: null, reason: 'connection', message: first.error.message || 'The upstream closed the connection', retryAfterMs: null };
      continue;
    }
    breakers.success(member.id);
    // From here the responder owns the abort: a client going away must still end the body.
    clientSignal.addEventListener('abort', () => controller.abort(), { once: true });
    if (clientSignal.aborted) controller.abort();
    return { kind: 'success', committed: { candidate, answer, first: first.chunk, controller } };
  }
  return { kind: 'failed', failure: last ?? { kind: 'all_open' } };
}

function ignore(): void {}

/**
 * Calls `onEnd` or `onError` once the body is done, including when that already happened (an
 * 'end' emitted while nobody listened, between the first chunk and the body's new owner).
 */
export function whenBodyDone(body: Readable, onEnd: () => void, onError: (err: Error) => void): void {
  if (body.errored) return onError(body.errored);
  if (body.readableEnded) return onEnd();
  body.once('end', onEnd);
  body.once('error', onError);
}

/** Waits `ms`; false when the signal aborted first. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** The first chunk of a body (paused after it), its end (chunk null), or its error. */
export function firstChunk(body: Readable): Promise<{ chunk: Buffer | null; error?: Error }> {
  return new Promise((resolve) => {
    const done = (result: { chunk: Buffer | null; error?: Error }) => {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      body.pause();
      done({ chunk });
    };
    const onEnd = () => done({ chunk: null });
    const onError = (error: Error) => done({ chunk: null, error });
    body.on('data', onData);
    body.once('end', onEnd);
    body.once('error', onError);
  });
}

/** A body as text, up to `limit` bytes (the rest is drained). */
export function readText(body: Readable, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      if (size < limit) chunks.push(chunk);
      size += chunk.length;
    });
    whenBodyDone(body, () => resolve(Buffer.concat(chunks).toString('utf8').slice(0, limit)), reject);
  });
}

/** A body in full, with a bound (larger: rejects). */
export function readAll(body: Readable, limit: number, first: Buffer | null = null): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = first ? [first] : [];
    let size = first?.length ?? 0;
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        body.destroy();
        reject(new Error(`The upstream answer exceeds ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    whenBodyDone(body, () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)), reject);
    body.resume();
  });
}

/** The message of a vendor error body (`{error:{message}}` in all three vendors' shapes). */
export function upstreamErrorMessage(text: string): string | null {
  if (!text) return null;
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    if (body && typeof body.error === 'object' && body.error && typeof body.error.message === 'string') return body.error.message;
    if (body && typeof body.error === 'string') return body.error;
    if (body && typeof body.message === 'string') return body.message;
  } catch {
    /* not JSON */
  }
  return text.slice(0, 500);
}

import { DomainError, RateLimitedError, UnavailableError, ValidationError } from '../../../core/errors';
import type { PlaygroundEngine, PlaygroundRouting } from '../management/playground';
import { UpstreamFormatError, type ChatRequest, type ChatResponse, type EmbeddingRequest, type EmbeddingResponse, type Usage } from '../protocol';
import { Exchange, forwardWithFailover, readAll, upstreamErrorMessage, type FailoverFailure } from './forward';
import { EMBEDDINGS, estimateTextTokens, PROTOCOLS } from './protocols';
import type { ProxyServices } from './services';
import { upstreamModelFor } from './select';
import type { Candidate, CachedPool, Operation, RouteMember } from './types';
import { credentialHeaders, type UpstreamCall } from './upstream';

const NEVER = new AbortController().signal;
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/**
 * The playground's way through the proxy: the same member selection, failover, circuit breakers
 * and usage recording as a vendor route, with canonical requests in and out (no key: the row's
 * key_id is null, client_api `playground`). Never streams.
 */
export function createPlaygroundEngine(services: ProxyServices): PlaygroundEngine {
  /** The members to try for `model`, in order, and the pool (a direct upstream: a one-member pool of one attempt). */
  const route = async (input: PlaygroundRouting, model: string, operation: Operation): Promise<{ pool: CachedPool | null; candidates: Candidate[]; maxAttempts: number; store: boolean }> => {
    if (input.poolId) {
      const loaded = await services.routes.loadPool(input.workspaceId, input.poolId);
      if (!loaded) throw new ValidationError(`Pool ${input.poolId} not found`, { field: 'poolId' });
      const candidates = services.selector.candidates(loaded.pool, loaded.members, model, operation);
      return { pool: loaded.pool, candidates, maxAttempts: loaded.pool.maxAttempts, store: loaded.pool.storeConversations };
    }
    const member = input.upstreamId ? await services.routes.loadUpstream(input.workspaceId, input.upstreamId) : null;
    if (!member) throw new UnavailableError('The upstream is disabled or its credential cannot be used', { upstreamId: input.upstreamId });
    // A direct test names the upstream: its model list does not restrict the playground.
    const upstreamModel = upstreamModelFor(member, model, operation) ?? (operation === 'embeddings' && member.api === 'anthropic' ? null : model);
    return { pool: null, candidates: upstreamModel === null ? [] : [{ member, upstreamModel }], maxAttempts: 1, store: false };
  };

  async function run<T>(
    input: PlaygroundRouting,
    operation: Operation,
    model: string,
    requestBody: unknown,
    build: (candidate: Candidate) => UpstreamCall,
    read: (json: unknown, candidate: Candidate) => { value: T; usage: Usage; responseBody: unknown },
  ): Promise<{ value: T; upstreamId: string | null; latencyMs: number }> {
    const target = await route(input, model, operation);
    const exchange = new Exchange(input.requestId, input.workspaceId, null, target.pool?.id ?? null, 'playground', operation, model, null);
    if (target.candidates.length === 0) {
      exchange.finish(services.recorder, 404, `The model '${model}' is not served here`);
      throw new ValidationError(`The model '${model}' is not served by this ${input.poolId ? 'pool' : 'upstream'}`, { field: 'model' });
    }
    const signal = input.signal ?? NEVER;
    /** The caller hung up, before or during the answer: recorded as 499, nothing metered. */
    const callerGone = (): never => {
      exchange.finish(services.recorder, 499, 'The caller went away');
      throw new UnavailableError('The caller went away before the upstream answered');
    };
    const outcome = await forwardWithFailover(services.failover, exchange, target.candidates, target.maxAttempts, signal, build);
    if (outcome.kind === 'failed' && outcome.failure.kind === 'client_gone') callerGone();
    if (outcome.kind === 'failed') {
      const error = failureError(outcome.failure);
      exchange.finish(services.recorder, error.status, error.message);
      throw error;
    }
    if (outcome.kind === 'client_error') {
      const text = (await readAll(outcome.answer.body, 1024 * 1024).catch(() => Buffer.alloc(0))).toString('utf8');
      const message = upstreamErrorMessage(text) ?? `The upstream answered ${outcome.answer.status}`;
      exchange.finish(services.recorder, outcome.answer.status, message);
      throw new ValidationError(`The upstream refused the request (${outcome.answer.status}): ${message}`, { upstreamStatus: outcome.answer.status });
    }
    const { committed } = outcome;
    let result: { value: T; usage: Usage; responseBody: unknown };
    try {
      const raw = await readAll(committed.answer.body, MAX_ANSWER_BYTES, committed.first);
      exchange.firstByte();
      result = read(JSON.parse(raw.toString('utf8')), committed.candidate);
    } catch (err) {
      if (signal.aborted) callerGone();
      const message = err instanceof UpstreamFormatError || err instanceof SyntaxError ? `The upstream answer could not be read: ${err.message}` : `The upstream answer failed: ${(err as Error).message}`;
      exchange.finish(services.recorder, 502, message);
      throw new DomainError('UPSTREAM_UNAVAILABLE', message);
    }
    Object.assign(exchange.usage, result.usage);
    if (target.store) exchange.conversation = { requestBody, responseBody: result.responseBody };
    exchange.finish(services.recorder, 200);
    return { value: result.value, upstreamId: committed.candidate.member.upstreamId, latencyMs: exchange.elapsedMs() };
  }

  return {
    async chat(input) {
      const request: ChatRequest = { ...input.request, stream: false };
      const result = await run<ChatResponse>(
        input,
        'chat',
        request.model,
        request,
        (candidate) => {
          const formatted = PROTOCOLS[candidate.member.api].formatChatRequest({ ...request, model: candidate.upstreamModel });
          return call(candidate.member, formatted, false);
        },
        (json, candidate) => {
          const response = PROTOCOLS[candidate.member.api].parseChatResponse(json);
          if (!response.model) response.model = candidate.upstreamModel;
          return { value: response, usage: response.usage, responseBody: response };
        },
      );
      return { response: result.value, upstreamId: result.upstreamId, latencyMs: result.latencyMs };
    },

    async embed(input) {
      const request: EmbeddingRequest = input.request;
      const result = await run<EmbeddingResponse>(
        input,
        'embeddings',
        request.model,
        request,
        (candidate) => call(candidate.member, EMBEDDINGS[candidate.member.api]!.formatRequest({ ...request, model: candidate.upstreamModel }), false),
        (json, candidate) => {
          const response = EMBEDDINGS[candidate.member.api]!.parseResponse(json, candidate.upstreamModel);
          if (response.usage.inputTokens === 0) response.usage = { inputTokens: request.inputs.reduce((n, text) => n + estimateTextTokens(text), 0), outputTokens: 0, cachedTokens: 0 };
          return { value: response, usage: response.usage, responseBody: { model: response.model, vectors: response.vectors.length, usage: response.usage } };
        },
      );
      return { response: result.value, upstreamId: result.upstreamId, latencyMs: result.latencyMs };
    },
  };
}

function call(member: RouteMember, formatted: { path: string; body: unknown }, stream: boolean): UpstreamCall {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json' };
  if (member.api === 'anthropic') headers['anthropic-version'] = '2023-06-01';
  return { method: 'POST', path: member.basePath + formatted.path, headers: credentialHeaders(member, headers), body: JSON.stringify(formatted.body), timeoutMs: member.timeoutMs };
}

function failureError(failure: FailoverFailure): DomainError {
  if (failure.kind === 'all_open' || failure.kind === 'client_gone') return new UnavailableError('Every upstream that serves this model is temporarily unavailable');
  if (failure.status === 429) return new RateLimitedError(`The upstream is rate limiting: ${failure.message}`, Math.max(1, Math.ceil((failure.retryAfterMs ?? 1000) / 1000)));
  return new DomainError('UPSTREAM_UNAVAILABLE', `The upstream failed: ${failure.message}`);
}

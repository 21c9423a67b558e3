import { DomainError, UnavailableError, isErrorCode } from './errors';
import type { Logger } from './logger';
import { ENVELOPE_HEADER, signEnvelope } from './principal';

export interface InternalClientOptions {
  /** Base URL of the subgraph (without /graphql). */
  baseUrl: string;
  internalSigningSecret: string;
  /** Where an unreachable subgraph is reported; omit when the caller reports failures itself. */
  logger?: Logger;
  /** Longest wait for an answer, ms. @defaultValue 10000 */
  timeoutMs?: number;
  /** How an unreachable subgraph is named in the error (`The compute service is …`). @defaultValue 'service' */
  serviceName?: string;
}

/** Options of one call, over the client's. */
export interface InternalCallOptions {
  /** Aborts the call (the caller gave up: a cancelled workflow step, a closed request); the signal's reason is thrown. */
  signal?: AbortSignal;
  /** Longest wait for this answer, ms. @defaultValue the client's `timeoutMs` */
  timeoutMs?: number;
}

/**
 * Calls a subgraph's internal API (`POST /internal/<name>`) with a signed envelope, as raw HTTP
 * handlers do. A domain error the subgraph answers (its platform error body) is thrown again
 * here with its code, so the caller's answer keeps it; an unreachable subgraph is 503.
 */
export class InternalClient {
  constructor(private readonly options: InternalClientOptions) {}

  async call<T>(name: string, body: unknown, request: { requestId: string; clientIp: string }, callOptions: InternalCallOptions = {}): Promise<T> {
    const { baseUrl, internalSigningSecret, logger } = this.options;
    const envelope = signEnvelope(internalSigningSecret, { principal: null, requestId: request.requestId, clientIp: request.clientIp, iat: Math.floor(Date.now() / 1000) });
    const timeoutMs = callOptions.timeoutMs ?? this.options.timeoutMs ?? 10_000;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = callOptions.signal ? AbortSignal.any([callOptions.signal, timeout]) : timeout;
    let response: Response;
    try {
      response = await fetch(`${baseUrl}/internal/${name}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [ENVELOPE_HEADER]: envelope },
        body: JSON.stringify(body),
        signal,
      });
    } catch (err) {
      // The caller's own abort is not the subgraph's failure: it gets its reason back, unlogged.
      if (callOptions.signal?.aborted) throw callOptions.signal.reason ?? err;
      logger?.error('internal call failed', { route: name, err, requestId: request.requestId });
      if (timeout.aborted) throw this.timedOut(timeoutMs);
      throw new UnavailableError(`The ${this.options.serviceName ?? 'service'} is temporarily unavailable`);
    }
    const json = (await response.json().catch(() => undefined)) as { data?: T; error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined;
    // An abort while the body was read leaves no answer either.
    if (json === undefined && callOptions.signal?.aborted) throw callOptions.signal.reason;
    if (json === undefined && timeout.aborted) throw this.timedOut(timeoutMs);
    if (response.ok && json && 'data' in json) return json.data as T;
    const error = json?.error;
    if (error && isErrorCode(error.code) && error.code !== 'INTERNAL') {
      throw new DomainError(error.code, String(error.message ?? error.code), error.details as Record<string, unknown> | undefined);
    }
    throw new Error(`internal route ${name} answered ${response.status}`);
  }

  private timedOut(timeoutMs: number): UnavailableError {
    return new UnavailableError(`The ${this.options.serviceName ?? 'service'} did not answer within ${Math.ceil(timeoutMs / 1000)} s`);
  }
}

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
}

/**
 * Calls a subgraph's internal API (`POST /internal/<name>`) with a signed envelope, as raw HTTP
 * handlers do. A domain error the subgraph answers (its platform error body) is thrown again
 * here with its code, so the caller's answer keeps it; an unreachable subgraph is 503.
 */
export class InternalClient {
  constructor(private readonly options: InternalClientOptions) {}

  async call<T>(name: string, body: unknown, request: { requestId: string; clientIp: string }): Promise<T> {
    const { baseUrl, internalSigningSecret, logger } = this.options;
    const envelope = signEnvelope(internalSigningSecret, { principal: null, requestId: request.requestId, clientIp: request.clientIp, iat: Math.floor(Date.now() / 1000) });
    let response: Response;
    try {
      response = await fetch(`${baseUrl}/internal/${name}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [ENVELOPE_HEADER]: envelope },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
      });
    } catch (err) {
      logger?.error('internal call failed', { route: name, err, requestId: request.requestId });
      throw new UnavailableError('The service is temporarily unavailable');
    }
    const json = (await response.json().catch(() => undefined)) as { data?: T; error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined;
    if (response.ok && json && 'data' in json) return json.data as T;
    const error = json?.error;
    if (error && isErrorCode(error.code) && error.code !== 'INTERNAL') {
      throw new DomainError(error.code, String(error.message ?? error.code), error.details as Record<string, unknown> | undefined);
    }
    throw new Error(`internal route ${name} answered ${response.status}`);
  }
}

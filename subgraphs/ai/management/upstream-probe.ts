import type { VendorApiName } from '../model/entities';
import type { AiUpstreamTestResult } from './upstreams.types';

/** How long a live check waits for the upstream. */
export const PROBE_TIMEOUT_MS = 10_000;
/** Model ids kept from a models list (a vendor's full catalogue can be long). */
const MAX_LISTED_MODELS = 1000;
/** Characters of an upstream's error body quoted in `error`. */
const ERROR_EXCERPT = 300;

export interface ProbeTarget {
  api: VendorApiName;
  baseUrl: string;
  authKind: 'api_key' | 'oauth';
  credential: string;
}

/**
 * The vendor's models list and the headers it authenticates with. OAuth access tokens are sent
 * as `Authorization: Bearer` by every vendor; API keys in each vendor's own header.
 */
export function modelsRequest(target: ProbeTarget): { url: string; headers: Record<string, string> } {
  const bearer = { authorization: `Bearer ${target.credential}` };
  switch (target.api) {
    case 'openai':
      return { url: `${target.baseUrl}/models`, headers: bearer };
    case 'anthropic':
      return {
        url: `${target.baseUrl}/v1/models`,
        headers: { ...(target.authKind === 'oauth' ? bearer : { 'x-api-key': target.credential }), 'anthropic-version': '2023-06-01' },
      };
    case 'gemini':
      return { url: `${target.baseUrl}/v1beta/models`, headers: target.authKind === 'oauth' ? bearer : { 'x-goog-api-key': target.credential } };
  }
}

/**
 * GETs the upstream's models list with its credential. Never throws for the upstream's sake: a
 * refusal, a non-JSON body, a timeout or a connection error is `ok: false` with what happened.
 * The credential is never part of the answer (an upstream echoing it back is cut out).
 */
export async function probeUpstream(target: ProbeTarget, model?: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<AiUpstreamTestResult> {
  const { url, headers } = modelsRequest(target);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const redact = (text: string) => text.split(target.credential).join('[redacted]');
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, { method: 'GET', headers: { accept: 'application/json', ...headers }, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    text = await response.text();
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
    const cause = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
    return { ok: false, status: null, latencyMs: elapsed(), error: timedOut ? `No answer within ${timeoutMs} ms` : redact(`Upstream unreachable: ${cause}`), models: [] };
  }
  const latencyMs = elapsed();
  if (!response.ok) {
    return { ok: false, status: response.status, latencyMs, error: redact(`Upstream answered ${response.status}: ${vendorMessage(text)}`), models: [] };
  }
  const models = modelIds(target.api, text);
  if (!models) return { ok: false, status: response.status, latencyMs, error: 'Upstream answered a body that is not a models list', models: [] };
  if (model && !models.includes(model)) {
    return { ok: false, status: response.status, latencyMs, error: `The upstream does not list model ${model.slice(0, 256)}`, models };
  }
  return { ok: true, status: response.status, latencyMs, error: null, models };
}

/** openai and anthropic: `{ data: [{ id }] }`; gemini: `{ models: [{ name: "models/x" }] }`. Null when the body is neither. */
function modelIds(api: VendorApiName, text: string): string[] | null {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  if (!body || typeof body !== 'object') return null;
  const list = api === 'gemini' ? (body as { models?: unknown }).models : (body as { data?: unknown }).data;
  if (!Array.isArray(list)) return null;
  const ids = list
    .map((entry) => {
      if (!entry || typeof entry !== 'object') return undefined;
      const id = api === 'gemini' ? (entry as { name?: unknown }).name : (entry as { id?: unknown }).id;
      return typeof id === 'string' ? id.replace(/^models\//, '') : undefined;
    })
    .filter((id): id is string => Boolean(id));
  return ids.slice(0, MAX_LISTED_MODELS);
}

/** The vendor's error message when its body has the usual `{ error: { message } }` shape, else an excerpt. */
function vendorMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const message = typeof body.error === 'string' ? body.error : (body.error?.message ?? body.message);
    if (typeof message === 'string') return message.slice(0, ERROR_EXCERPT);
  } catch {
    /* not JSON */
  }
  return text.slice(0, ERROR_EXCERPT) || 'empty body';
}

import { ValidationError } from '../../../core/errors';
import { POOL_STRATEGIES, type PoolStrategy, type VendorApiName } from '../model/entities';

/** Checks of the management API; each failure is a 400 VALIDATION_FAILED naming the field. */

/** Neutral provider tokens of the routes and records, and the vendor protocol each one speaks. */
export const PROVIDER_APIS = { 'vendor-a': 'openai', 'vendor-b': 'anthropic', 'vendor-c': 'gemini' } as const satisfies Record<string, VendorApiName>;
export type ProviderToken = keyof typeof PROVIDER_APIS;
export const PROVIDER_TOKENS = Object.keys(PROVIDER_APIS) as ProviderToken[];

export function providerOfApi(api: VendorApiName): ProviderToken {
  return PROVIDER_TOKENS.find((token) => PROVIDER_APIS[token] === api)!;
}

export function parseProvider(value: unknown, field = 'provider'): ProviderToken {
  if (typeof value !== 'string' || !(PROVIDER_TOKENS as string[]).includes(value)) {
    throw new ValidationError(`${field} must be one of ${PROVIDER_TOKENS.join(', ')}`, { field });
  }
  return value as ProviderToken;
}

/**
 * An upstream's base URL: http(s), no credentials, no fragment; the trailing slash dropped.
 * Credentials belong in apiKey, where they are encrypted; in a URL they would be stored and shown.
 */
export function parseBaseUrl(value: unknown, field = 'baseUrl'): string {
  if (typeof value !== 'string' || !value.trim() || value.length > 2048) throw new ValidationError(`${field} must be an http(s) URL of at most 2048 characters`, { field });
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new ValidationError(`${field} must be an http(s) URL`, { field });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ValidationError(`${field} must be an http(s) URL`, { field });
  if (url.username || url.password) throw new ValidationError(`${field} must not carry credentials: give them as apiKey`, { field });
  if (url.hash) throw new ValidationError(`${field} must not have a fragment`, { field });
  return url.toString().replace(/\/+$/, '');
}

/** An http(s) redirect URI of an OAuth client, kept exactly as given (the provider compares it byte for byte). */
export function parseRedirectUri(value: unknown, field = 'redirectUri'): string {
  if (typeof value !== 'string' || value.length > 2048) throw new ValidationError(`${field} must be an http(s) URL`, { field });
  try {
    const url = new URL(value);
    if ((url.protocol === 'http:' || url.protocol === 'https:') && !url.hash && !url.username && !url.password) return value;
  } catch {
    /* reported below */
  }
  throw new ValidationError(`${field} must be an http(s) URL without credentials or fragment`, { field });
}

export const API_KEY_MAX_LENGTH = 4096;

/** Never repeats the value: it is a credential. */
export function parseApiKey(value: unknown, field = 'apiKey'): string {
  if (typeof value !== 'string' || value.length < 1 || value.length > API_KEY_MAX_LENGTH) {
    throw new ValidationError(`${field} must be a string of 1 to ${API_KEY_MAX_LENGTH} characters`, { field });
  }
  if (/[\r\n\0]/.test(value)) throw new ValidationError(`${field} must not contain line breaks or NUL`, { field });
  return value;
}

export const MAX_MODELS = 200;
const MODEL_NAME_MAX = 256;

/** One model name of 1 to 256 characters (trimmed). */
export function requireModel(value: unknown, field = 'model'): string {
  if (typeof value !== 'string' || !value.trim() || value.length > MODEL_NAME_MAX) throw new ValidationError(`${field} must be a model name of 1 to ${MODEL_NAME_MAX} characters`, { field });
  return value.trim();
}

export function parseModels(value: unknown, field = 'models'): string[] {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) throw new ValidationError(`${field} must be an array of model names`, { field });
  if (value.length > MAX_MODELS) throw new ValidationError(`${field} may list at most ${MAX_MODELS} models`, { field });
  const out = new Set<string>();
  value.forEach((model, i) => {
    if (typeof model !== 'string' || !model.trim() || model.length > MODEL_NAME_MAX) {
      throw new ValidationError(`${field}[${i}] must be a model name of 1 to ${MODEL_NAME_MAX} characters`, { field: `${field}[${i}]` });
    }
    out.add(model.trim());
  });
  return [...out];
}

/** Client model name → upstream model name. */
export function parseModelMap(value: unknown, field = 'modelMap'): Record<string, string> {
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new ValidationError(`${field} must be an object of model names`, { field });
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_MODELS) throw new ValidationError(`${field} may have at most ${MAX_MODELS} entries`, { field });
  const out: Record<string, string> = {};
  for (const [from, to] of entries) {
    if (!from.trim() || from.length > MODEL_NAME_MAX) throw new ValidationError(`${field} has a key that is not a model name`, { field });
    if (typeof to !== 'string' || !to.trim() || to.length > MODEL_NAME_MAX) throw new ValidationError(`${field}.${from.slice(0, 64)} must be a model name`, { field: `${field}.${from.slice(0, 64)}` });
    out[from] = to.trim();
  }
  return out;
}

export function parseStrategy(value: unknown, field = 'strategy'): PoolStrategy {
  if (value === null || value === undefined) return 'weighted';
  if (typeof value !== 'string' || !(POOL_STRATEGIES as readonly string[]).includes(value)) {
    throw new ValidationError(`${field} must be one of ${POOL_STRATEGIES.join(', ')}`, { field });
  }
  return value as PoolStrategy;
}

/** An optional id argument: a non-empty string or nothing. */
export function optionalId(value: string | null | undefined): string | undefined {
  return value === null || value === undefined || value === '' ? undefined : value;
}

export { intInRange, parseIsoDate, requireName } from '../../../core/validation';

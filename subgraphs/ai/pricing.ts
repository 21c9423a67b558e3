/**
 * List prices of models, USD per million tokens, by model-name pattern. The proxy prices every
 * request with `costOf` when it records usage; unknown models cost 0 (the workspace's own
 * upstream bills it directly, the gateway only meters tokens).
 *
 * Patterns are tried in order, the first match wins, so more specific names come first
 * (`gpt-4o-mini` before `gpt-4o`). A pattern matches the start of the model name, so dated
 * snapshots (`gpt-4o-2024-08-06`, `claude-3-5-haiku-20241022`) and `models/` prefixes of the
 * Gemini API price like their family.
 */
export interface ModelPrice {
  /** USD per 1M input tokens that were not served from the prompt cache. */
  input: number;
  /** USD per 1M output tokens. */
  output: number;
  /** USD per 1M input tokens served from the prompt cache. @defaultValue input */
  cached?: number;
}

/** Tokens of one request. `inputTokens` counts every prompt token, cached ones included. */
export interface TokenCounts {
  inputTokens: number;
  outputTokens: number;
  cachedTokens?: number;
}

export const PRICE_TABLE: ReadonlyArray<{ pattern: RegExp; price: ModelPrice }> = [
  // vendor-a (OpenAI)
  { pattern: /^gpt-4o-mini/, price: { input: 0.15, output: 0.6, cached: 0.075 } },
  { pattern: /^gpt-4o/, price: { input: 2.5, output: 10, cached: 1.25 } },
  { pattern: /^gpt-4\.1-nano/, price: { input: 0.1, output: 0.4, cached: 0.025 } },
  { pattern: /^gpt-4\.1-mini/, price: { input: 0.4, output: 1.6, cached: 0.1 } },
  { pattern: /^gpt-4\.1/, price: { input: 2, output: 8, cached: 0.5 } },
  { pattern: /^o3-mini|^o4-mini/, price: { input: 1.1, output: 4.4, cached: 0.275 } },
  { pattern: /^text-embedding-3-small/, price: { input: 0.02, output: 0 } },
  { pattern: /^text-embedding-3-large/, price: { input: 0.13, output: 0 } },
  // vendor-b (Anthropic); cached = cache reads
  { pattern: /^claude-(opus-4|3-opus)/, price: { input: 15, output: 75, cached: 1.5 } },
  { pattern: /^claude-(sonnet-4|3-7-sonnet|3-5-sonnet)/, price: { input: 3, output: 15, cached: 0.3 } },
  { pattern: /^claude-(haiku-4|3-5-haiku)/, price: { input: 0.8, output: 4, cached: 0.08 } },
  { pattern: /^claude-3-haiku/, price: { input: 0.25, output: 1.25, cached: 0.03 } },
  // vendor-c (Gemini)
  { pattern: /^gemini-2\.5-pro/, price: { input: 1.25, output: 10, cached: 0.31 } },
  { pattern: /^gemini-2\.5-flash-lite/, price: { input: 0.1, output: 0.4, cached: 0.025 } },
  { pattern: /^gemini-2\.5-flash/, price: { input: 0.3, output: 2.5, cached: 0.075 } },
  { pattern: /^gemini-2\.0-flash/, price: { input: 0.1, output: 0.4, cached: 0.025 } },
  { pattern: /^gemini-1\.5-flash/, price: { input: 0.075, output: 0.3, cached: 0.01875 } },
  { pattern: /^gemini-embedding-001/, price: { input: 0.15, output: 0 } },
  { pattern: /^text-embedding-004/, price: { input: 0, output: 0 } },
];

const FREE: ModelPrice = { input: 0, output: 0, cached: 0 };
const cache = new Map<string, ModelPrice>();

/** The price of a model (0 for models the table does not know). */
export function priceOf(model: string): ModelPrice {
  let price = cache.get(model);
  if (!price) {
    const name = model.startsWith('models/') ? model.slice('models/'.length) : model;
    price = PRICE_TABLE.find((entry) => entry.pattern.test(name))?.price ?? FREE;
    if (cache.size > 10_000) cache.clear();
    cache.set(model, price);
  }
  return price;
}

/** USD cost of one request, rounded to 8 decimals (the precision of `ai.usage.cost_usd`). */
export function costOf(model: string, usage: TokenCounts): number {
  const price = priceOf(model);
  const cached = Math.min(Math.max(usage.cachedTokens ?? 0, 0), usage.inputTokens);
  const uncached = usage.inputTokens - cached;
  const usd = (uncached * price.input + cached * (price.cached ?? price.input) + usage.outputTokens * price.output) / 1_000_000;
  return Math.round(usd * 1e8) / 1e8;
}

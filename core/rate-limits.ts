/**
 * Workspace rate limits: the values, the plans they come from, and the request classes the
 * gateway meters. Shared by billing (which stores a workspace's effective limits) and the
 * gateway (which enforces the request limits); configuration overrides are read in config.ts.
 */

/** Classes of requests the gateway meters, each with its own per-minute budget. */
export const ROUTE_CLASSES = ['read', 'write'] as const;
export type RouteClass = (typeof ROUTE_CLASSES)[number];

/** One workspace's limits. Requests are counted per workspace across all its callers. */
export interface RateLimitValues {
  /** GraphQL queries and REST GET requests per minute. */
  readRequestsPerMinute: number;
  /** GraphQL mutations and REST POST/PUT/PATCH/DELETE requests per minute. */
  writeRequestsPerMinute: number;
  /** Sandboxes running at once. */
  concurrentSandboxes: number;
  /** Browser sessions running at once. */
  concurrentBrowserSessions: number;
  /** Model tokens (input plus output) through the AI gateway per minute. */
  aiTokensPerMinute: number;
}

export const RATE_LIMIT_KEYS = [
  'readRequestsPerMinute',
  'writeRequestsPerMinute',
  'concurrentSandboxes',
  'concurrentBrowserSessions',
  'aiTokensPerMinute',
] as const satisfies readonly (keyof RateLimitValues)[];

export const PLAN_NAMES = ['free', 'pro', 'enterprise'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

/** The limits each plan grants before overrides. */
export const PLAN_LIMITS: Record<PlanName, RateLimitValues> = {
  free: { readRequestsPerMinute: 600, writeRequestsPerMinute: 120, concurrentSandboxes: 3, concurrentBrowserSessions: 2, aiTokensPerMinute: 50_000 },
  pro: { readRequestsPerMinute: 3_000, writeRequestsPerMinute: 600, concurrentSandboxes: 20, concurrentBrowserSessions: 10, aiTokensPerMinute: 500_000 },
  enterprise: { readRequestsPerMinute: 20_000, writeRequestsPerMinute: 5_000, concurrentSandboxes: 200, concurrentBrowserSessions: 100, aiTokensPerMinute: 5_000_000 },
};

/**
 * Overrides from configuration (`RATE_LIMIT_OVERRIDES`): by workspace id, or `*` for every
 * workspace; a workspace's own entry wins over `*`, key by key.
 */
export type RateLimitOverrides = Record<string, Partial<RateLimitValues>>;

/** Largest limit value: GraphQL's Int is 32-bit signed. */
export const MAX_LIMIT_VALUE = 2_147_483_647;

/** Parses and validates RATE_LIMIT_OVERRIDES; problems are reported, never thrown. */
export function parseRateLimitOverrides(raw: string | undefined, problems: string[]): RateLimitOverrides {
  if (!raw) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    problems.push('RATE_LIMIT_OVERRIDES must be JSON: {"<workspaceId>|*": {"readRequestsPerMinute": 100, ...}}');
    return {};
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    problems.push('RATE_LIMIT_OVERRIDES must be a JSON object keyed by workspace id or "*"');
    return {};
  }
  const result: RateLimitOverrides = {};
  for (const [workspace, values] of Object.entries(parsed as Record<string, unknown>)) {
    if (!values || typeof values !== 'object' || Array.isArray(values)) {
      problems.push(`RATE_LIMIT_OVERRIDES["${workspace}"] must be an object`);
      continue;
    }
    const entry: Partial<RateLimitValues> = {};
    for (const [key, value] of Object.entries(values as Record<string, unknown>)) {
      if (!(RATE_LIMIT_KEYS as readonly string[]).includes(key)) {
        problems.push(`RATE_LIMIT_OVERRIDES["${workspace}"] has unknown key "${key}" (known: ${RATE_LIMIT_KEYS.join(', ')})`);
      } else if (!Number.isInteger(value) || (value as number) < 0 || (value as number) > MAX_LIMIT_VALUE) {
        problems.push(`RATE_LIMIT_OVERRIDES["${workspace}"].${key} must be an integer between 0 and ${MAX_LIMIT_VALUE}`);
      } else {
        entry[key as keyof RateLimitValues] = value as number;
      }
    }
    result[workspace] = entry;
  }
  return result;
}

/** Plan limits with the configuration's overrides applied (`*` first, then the workspace's own). */
export function effectiveLimits(plan: PlanName, workspaceId: string, overrides: RateLimitOverrides, stored: Partial<RateLimitValues> = {}): RateLimitValues {
  return { ...PLAN_LIMITS[plan], ...overrides['*'], ...stored, ...overrides[workspaceId] };
}

/** Length of a request-counting window, seconds (fixed windows, opened by a workspace's first request). */
export const RATE_LIMIT_WINDOW_SECONDS = 60;

/** What the gateway counts requests under: a route class per workspace, or `anonymous` per client address. */
export type LimitedClass = RouteClass | 'anonymous';

/**
 * Redis key prefix of a class's request counters, for rate-limiter-flexible's `keyPrefix`. The
 * gateway consumes and billing reads (`RateLimiterRedis.get`) under the same prefix; the key
 * after it is the workspace id (`anonymous`: the client address). Full key:
 * `<redisPrefix>:rate-limit:<class>:<workspaceId | address>`, an integer with a TTL of the window.
 */
export function requestCounterPrefix(redisPrefix: string, routeClass: LimitedClass): string {
  return `${redisPrefix}:rate-limit:${routeClass}`;
}

/**
 * Redis keys of a workspace's live usage of the non-request limits. Billing only reads them;
 * the domain that owns each resource maintains it:
 * - `concurrentSandboxes` / `concurrentBrowserSessions`: `<redisPrefix>:usage:<workspaceId>:concurrent-sandboxes`
 *   and `...:concurrent-browser-sessions`, integers (INCR on start, DECR on stop; compute and sessions).
 * - `aiTokens(minute)`: `<redisPrefix>:usage:<workspaceId>:ai-tokens:<minute>`, where minute is
 *   `aiTokenMinute()` (whole minutes since the epoch, UTC); INCRBY tokens with a TTL of about
 *   two minutes (the AI gateway).
 */
export function usageKeys(redisPrefix: string, workspaceId: string) {
  const base = `${redisPrefix}:usage:${workspaceId}`;
  return {
    concurrentSandboxes: `${base}:concurrent-sandboxes`,
    concurrentBrowserSessions: `${base}:concurrent-browser-sessions`,
    aiTokens: (minute: number) => `${base}:ai-tokens:${minute}`,
  };
}

/** The minute the AI-token counter of `now` belongs to: whole minutes since the epoch. */
export function aiTokenMinute(now = Date.now()): number {
  return Math.floor(now / 60_000);
}

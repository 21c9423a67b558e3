import { ValidationError } from '../../../core/errors';
import { intInRange, parseIsoDate, requireName } from '../../../core/validation';
import type { FunnelStep } from '../model/entities';

/** Input checks of the analytics API; each failure is a 400 VALIDATION_FAILED naming the field. */

export { intInRange, requireName };

const DAY_MS = 86_400_000;
/** Window of a report when `from` is not given. */
export const DEFAULT_RANGE_DAYS = 7;
/** Longest window one report covers (a leap year fits). */
export const MAX_RANGE_DAYS = 366;

export const MAX_DOMAINS = 50;
export const MIN_FUNNEL_STEPS = 2;
export const MAX_FUNNEL_STEPS = 10;
export const MAX_FUNNEL_WINDOW_SECONDS = 90 * 86_400;
/** Window of a funnel created without one: a day. */
export const DEFAULT_FUNNEL_WINDOW_SECONDS = 86_400;
const MAX_STEP_MATCH = 500;
const MAX_STEP_LABEL = 200;
const MAX_FILTER = 2000;

function fail(message: string, field: string): never {
  throw new ValidationError(message, { field });
}

/** A report's window [from, to): `to` defaults to now, `from` to 7 days before `to`; at most 366 days. */
export function reportRange(args: { from?: string | null; to?: string | null }, now = new Date()): { from: Date; to: Date } {
  const to = parseIsoDate(args.to, 'to') ?? now;
  const from = parseIsoDate(args.from, 'from') ?? new Date(to.getTime() - DEFAULT_RANGE_DAYS * DAY_MS);
  if (from.getTime() >= to.getTime()) fail('from must be before to', 'from');
  if (to.getTime() - from.getTime() > MAX_RANGE_DAYS * DAY_MS) fail(`from..to may span at most ${MAX_RANGE_DAYS} days`, 'from');
  return { from, to };
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * `domains`: 1 to 50 host names (`example.com`, `localhost`) or subdomain patterns
 * (`*.example.com`, which needs two labels after the star); lowercased, a trailing dot dropped,
 * duplicates removed.
 */
export function parseDomains(value: unknown, field = 'domains'): string[] {
  if (!Array.isArray(value) || value.length < 1 || value.length > MAX_DOMAINS) fail(`${field} must hold 1 to ${MAX_DOMAINS} host names`, field);
  const out: string[] = [];
  value.forEach((raw, i) => {
    const at = `${field}[${i}]`;
    const host = typeof raw === 'string' ? raw.trim().toLowerCase().replace(/\.$/, '') : '';
    const wildcard = host.startsWith('*.');
    const labels = (wildcard ? host.slice(2) : host).split('.');
    const ok = host.length > 0 && host.length <= 253 && labels.every((l) => LABEL.test(l)) && (!wildcard || labels.length >= 2);
    if (!ok) fail(`${at} must be a host name such as example.com, or a pattern such as *.example.com`, at);
    if (!out.includes(host)) out.push(host);
  });
  return out;
}

/** `steps`: 2 to 10 of { type: 'event' | 'page', match, label? }; a page match is a path where `*` matches any run of characters. */
export function parseFunnelSteps(value: unknown, field = 'steps'): FunnelStep[] {
  if (!Array.isArray(value) || value.length < MIN_FUNNEL_STEPS || value.length > MAX_FUNNEL_STEPS) {
    fail(`${field} must hold ${MIN_FUNNEL_STEPS} to ${MAX_FUNNEL_STEPS} steps`, field);
  }
  return value.map((raw, i) => {
    const at = `${field}[${i}]`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail(`${at} must be an object`, at);
    const { type, match, label } = raw as Record<string, unknown>;
    if (type !== 'event' && type !== 'page') fail(`${at}.type must be event or page`, `${at}.type`);
    if (typeof match !== 'string' || !match.trim() || match.length > MAX_STEP_MATCH) fail(`${at}.match must be a non-empty string of at most ${MAX_STEP_MATCH} characters`, `${at}.match`);
    if (type === 'page' && !/^[/*]/.test(match.trim())) fail(`${at}.match must be a path starting with / (or *)`, `${at}.match`);
    const step: FunnelStep = { type, match: match.trim() };
    if (label !== undefined && label !== null) {
      if (typeof label !== 'string' || !label.trim() || label.length > MAX_STEP_LABEL) fail(`${at}.label must be a non-empty string of at most ${MAX_STEP_LABEL} characters`, `${at}.label`);
      step.label = label.trim();
    }
    return step;
  });
}

export function parseWindowSeconds(value: number | null | undefined): number | null {
  return intInRange(value, 'windowSeconds', 1, MAX_FUNNEL_WINDOW_SECONDS);
}

const BIGINT_MAX = 2n ** 63n - 1n;

/** A visitor id as the API shows it: a decimal bigint (they are hashes, so negative ones occur). */
export function parseVisitorId(value: string | null | undefined, field = 'visitorId'): string | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  if (!/^-?\d{1,19}$/.test(value) || BigInt(value) > BIGINT_MAX || BigInt(value) < -BIGINT_MAX - 1n) fail(`${field} must be a visitor id (a decimal integer)`, field);
  return value;
}

/** An optional text filter (event name, path, user id). */
export function optionalFilter(value: string | null | undefined, field: string): string | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  if (value.length > MAX_FILTER) fail(`${field} must be at most ${MAX_FILTER} characters`, field);
  return value;
}

export const EVENT_KINDS = ['pageview', 'event', 'identify'] as const;

export function optionalKind(value: string | null | undefined): string | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  if (!(EVENT_KINDS as readonly string[]).includes(value)) fail(`kind must be one of ${EVENT_KINDS.join(', ')}`, 'kind');
  return value;
}

/** `limit` of a top list or an event list: default `fallback`, from 1 to `max`. */
export function limitOf(value: number | null | undefined, fallback: number, max: number): number {
  return intInRange(value, 'limit', 1, max) ?? fallback;
}

/** `page` (1-based) and `limit` of lists whose pages may be longer than core/pagination's 100. */
export function pageOf(args: { page?: number | null; limit?: number | null }, fallback: number, max: number): { page: number; limit: number; offset: number } {
  const page = intInRange(args.page, 'page', 1, 1_000_000) ?? 1;
  const limit = limitOf(args.limit, fallback, max);
  return { page, limit, offset: (page - 1) * limit };
}

/** `*` matches any run of characters, everything else itself: a LIKE pattern with `%`, `_` and `\` escaped. */
export function pathPattern(match: string): string {
  return match.replace(/[\\%_]/g, (c) => `\\${c}`).replace(/\*/g, '%');
}

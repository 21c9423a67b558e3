import { BadRequestError, ValidationError } from '../../../core/errors';

/**
 * The bodies of POST track / event / identify (README.md, "Ingestion"), validated whole before
 * anything is stored: the first bad field fails the request with a 400 naming it
 * (`events[3].url`). Unknown fields are ignored, so newer scripts keep working.
 */

export type EventKind = 'pageview' | 'event' | 'identify';

/** Limits of one request (README.md). */
export const INGEST_LIMITS = {
  bodyBytes: 64 * 1024,
  events: 100,
  nameChars: 200,
  urlChars: 2048,
  userIdChars: 200,
  propsBytes: 4096,
  propsKeys: 30,
  traitsBytes: 4096,
  /** Accepted `ts` window around the server's clock; outside it the server's now is used. */
  pastMs: 24 * 3600_000,
  futureMs: 5 * 60_000,
} as const;

const ID = /^[A-Za-z0-9_-]{1,64}$/;
const KEY = /^[A-Za-z0-9_-]{1,128}$/;

/** The parts of a page URL the events table keeps. */
export interface PageUrl {
  hostname: string;
  path: string;
  /** Without the `?`; null when there is none. */
  query: string | null;
  utmSource: string | null;
  utmMedium: string | null;
  utmCampaign: string | null;
}

/** One validated event; what the visitor's state (session, user) adds comes later. */
export interface IngestEvent {
  kind: EventKind;
  /** The client's id (duplicates of it are dropped), or null: the server assigns one. */
  id: string | null;
  name: string;
  /** Epoch ms, within the accepted window. */
  ts: number;
  url: PageUrl | null;
  referrer: string | null;
  /** The referrer's host without `www.`; null without a referrer or when it is the page's own host. */
  referrerDomain: string | null;
  screenWidth: number | null;
  /** Given by the event itself (identify: always). */
  userId: string | null;
  /** props (event) or traits (identify) as JSON text, for the events table. */
  props: string | null;
  /** identify: the traits, merged into analytics.users. */
  traits: Record<string, unknown> | null;
}

/** Parses a body as JSON whatever its content type (sendBeacon sends text/plain). */
export function parseBody(raw: Buffer): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new BadRequestError('Body is not valid JSON');
  }
  if (!isPlainObject(body)) throw new BadRequestError('Body must be a JSON object');
  return body;
}

/** The installation's public key, checked for shape only (whether it is known comes next). */
export function readKey(body: Record<string, unknown>): string {
  const key = body.key;
  if (typeof key !== 'string' || !key) throw new ValidationError('key must be the installation\'s public key', { field: 'key' });
  return key;
}

/** True when the key cannot be any installation's (skips the lookup). */
export function isMalformedKey(key: string): boolean {
  return !KEY.test(key);
}

/** The request's events: the body itself, or its `events` (1 to 100 of them). */
export function readEvents(kind: EventKind, body: Record<string, unknown>, now: number): IngestEvent[] {
  const batch = body.events;
  if (batch === undefined) return [readEvent(kind, body, '', now)];
  if (!Array.isArray(batch) || batch.length === 0 || batch.length > INGEST_LIMITS.events) {
    throw new ValidationError(`events must be an array of 1 to ${INGEST_LIMITS.events} events`, { field: 'events' });
  }
  const events: IngestEvent[] = new Array(batch.length);
  for (let i = 0; i < batch.length; i++) {
    const item: unknown = batch[i];
    const at = `events[${i}]`;
    if (!isPlainObject(item)) throw new ValidationError(`${at} must be an object`, { field: at });
    events[i] = readEvent(kind, item, `${at}.`, now);
  }
  return events;
}

function readEvent(kind: EventKind, input: Record<string, unknown>, at: string, now: number): IngestEvent {
  const id = optionalId(input.id, `${at}id`);
  const ts = readTs(input.ts, `${at}ts`, now);
  // Pageviews and identifies are named $pageview and $identify (custom event names are the caller's; the reports look for $pageview).
  let name: string = kind === 'pageview' ? '$pageview' : kind === 'identify' ? '$identify' : kind;
  let url: PageUrl | null = null;
  let referrer: string | null = null;
  let referrerDomain: string | null = null;
  let screenWidth: number | null = null;
  let userId = optionalUserId(input.userId, `${at}userId`);
  let props: string | null = null;
  let traits: Record<string, unknown> | null = null;

  if (kind === 'pageview') {
    if (input.url === undefined || input.url === null) throw new ValidationError(`${at}url is required`, { field: `${at}url` });
    url = readUrl(input.url, `${at}url`);
    if (input.referrer !== undefined && input.referrer !== null && input.referrer !== '') {
      referrer = requireString(input.referrer, `${at}referrer`, INGEST_LIMITS.urlChars);
      referrerDomain = referrerDomainOf(referrer, url.hostname, `${at}referrer`);
    }
    if (input.screenWidth !== undefined && input.screenWidth !== null) {
      const width = input.screenWidth;
      if (typeof width !== 'number' || !Number.isInteger(width) || width < 0 || width > 100_000) {
        throw new ValidationError(`${at}screenWidth must be an integer from 0 to 100000`, { field: `${at}screenWidth` });
      }
      screenWidth = width;
    }
  } else if (kind === 'event') {
    name = requireString(input.name, `${at}name`, INGEST_LIMITS.nameChars);
    // `$…` names are the platform's own ($pageview, $identify): a custom event may not pose as one.
    if (name.startsWith('$')) throw new ValidationError(`${at}name may not start with "$" (reserved for $pageview and $identify)`, { field: `${at}name` });
    if (input.url !== undefined && input.url !== null) url = readUrl(input.url, `${at}url`);
    if (input.props !== undefined && input.props !== null) props = readProps(input.props, `${at}props`);
  } else {
    if (input.userId === undefined || input.userId === null) throw new ValidationError(`${at}userId is required`, { field: `${at}userId` });
    userId = optionalUserId(input.userId, `${at}userId`);
    if (input.url !== undefined && input.url !== null) url = readUrl(input.url, `${at}url`);
    if (input.traits !== undefined && input.traits !== null) {
      const field = `${at}traits`;
      if (!isPlainObject(input.traits)) throw new ValidationError(`${field} must be an object`, { field });
      props = jsonText(input.traits, field, INGEST_LIMITS.traitsBytes);
      traits = input.traits;
    }
  }
  return { kind, id, name, ts, url, referrer, referrerDomain, screenWidth, userId, props, traits };
}

function requireString(value: unknown, field: string, max: number): string {
  if (typeof value !== 'string' || value.length === 0) throw new ValidationError(`${field} must be a non-empty string`, { field });
  if (value.length > max) throw new ValidationError(`${field} must be at most ${max} characters`, { field });
  if (value.includes('\u0000')) throw new ValidationError(`${field} must not contain NUL characters`, { field });
  return value;
}

/**
 * JSON text PostgreSQL's jsonb refuses: a `\u0000` escape, or an unpaired surrogate (which
 * JSON.stringify writes as a `\udXXX` escape; paired ones it writes as they are).
 */
const JSONB_UNSAFE = /\\u(0000|d[89a-f])/i;

/** Serialized `value`, at most `maxBytes`, storable as jsonb. */
function jsonText(value: Record<string, unknown>, field: string, maxBytes: number): string {
  const text = JSON.stringify(value);
  if (Buffer.byteLength(text) > maxBytes) throw new ValidationError(`${field} must be at most ${maxBytes} bytes as JSON`, { field });
  if (JSONB_UNSAFE.test(text)) throw new ValidationError(`${field} must not contain NUL characters or unpaired surrogates`, { field });
  return text;
}

function optionalId(value: unknown, field: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || !ID.test(value)) throw new ValidationError(`${field} must be 1 to 64 characters of A-Z, a-z, 0-9, "_" or "-"`, { field });
  return value;
}

function optionalUserId(value: unknown, field: string): string | null {
  if (value === undefined || value === null) return null;
  // Control characters would make the id unreadable in reports and logs.
  // eslint-disable-next-line no-control-regex
  if (typeof value !== 'string' || !value.trim() || value.length > INGEST_LIMITS.userIdChars || /[\u0000-\u001f\u007f]/.test(value)) {
    throw new ValidationError(`${field} must be 1 to ${INGEST_LIMITS.userIdChars} printable characters`, { field });
  }
  return value;
}

/** Epoch ms (number) or an ISO 8601 string; outside [now − 24 h, now + 5 min] the server's now. */
function readTs(value: unknown, field: string, now: number): number {
  if (value === undefined || value === null) return now;
  let ts: number;
  if (typeof value === 'number') ts = value;
  else if (typeof value === 'string') ts = Date.parse(value);
  else ts = Number.NaN;
  if (!Number.isFinite(ts)) throw new ValidationError(`${field} must be epoch milliseconds or an ISO 8601 time`, { field });
  return ts < now - INGEST_LIMITS.pastMs || ts > now + INGEST_LIMITS.futureMs ? now : Math.floor(ts);
}

function readUrl(value: unknown, field: string): PageUrl {
  const text = requireString(value, field, INGEST_LIMITS.urlChars);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ValidationError(`${field} must be an absolute http(s) URL`, { field });
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || !url.hostname) throw new ValidationError(`${field} must be an absolute http(s) URL`, { field });
  const search = url.search;
  let utmSource: string | null = null;
  let utmMedium: string | null = null;
  let utmCampaign: string | null = null;
  if (search.includes('utm_')) {
    const params = url.searchParams;
    utmSource = params.get('utm_source') || null;
    utmMedium = params.get('utm_medium') || null;
    utmCampaign = params.get('utm_campaign') || null;
    // Decoded: `%00` would be a NUL, which PostgreSQL text cannot hold.
    if (utmSource?.includes('\u0000') || utmMedium?.includes('\u0000') || utmCampaign?.includes('\u0000')) {
      throw new ValidationError(`${field} must not carry NUL characters in its utm_ parameters`, { field });
    }
  }
  return { hostname: url.hostname, path: url.pathname || '/', query: search.length > 1 ? search.slice(1) : null, utmSource, utmMedium, utmCampaign };
}

function referrerDomainOf(referrer: string, pageHost: string, field: string): string | null {
  let host: string;
  try {
    host = new URL(referrer).hostname;
  } catch {
    throw new ValidationError(`${field} must be an absolute URL`, { field });
  }
  if (!host || host === pageHost) return null;
  return host.startsWith('www.') ? host.slice(4) : host;
}

/** A flat-ish object: at most 30 keys, 4 KiB as JSON, values scalars or one level of arrays/objects of scalars. */
function readProps(value: unknown, field: string): string {
  if (!isPlainObject(value)) throw new ValidationError(`${field} must be an object`, { field });
  const keys = Object.keys(value);
  if (keys.length > INGEST_LIMITS.propsKeys) throw new ValidationError(`${field} must have at most ${INGEST_LIMITS.propsKeys} keys`, { field });
  for (const key of keys) {
    const member = value[key];
    if (isScalar(member)) continue;
    const inner = Array.isArray(member) ? member : isPlainObject(member) ? Object.values(member) : null;
    if (!inner || !inner.every(isScalar)) throw new ValidationError(`${field}.${key} must be a string, number, boolean, null, or an array or object of those`, { field: `${field}.${key}` });
  }
  return jsonText(value, field, INGEST_LIMITS.propsBytes);
}

function isScalar(value: unknown): boolean {
  return value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

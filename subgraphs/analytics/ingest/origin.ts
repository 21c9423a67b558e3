import type { IncomingMessage } from 'node:http';

/**
 * Where a request comes from (its Origin, or without one its Referer's origin) and whether an
 * installation's domains allow it, plus the CORS headers of the answers.
 */

/** The page a request comes from: the Origin header as sent (for CORS) and its host. */
export interface RequestOrigin {
  /** The Origin header, echoed in Access-Control-Allow-Origin; null when the host came from Referer. */
  origin: string | null;
  host: string;
}

const CACHE_LIMIT = 10_000;
const hostsOfOrigins = new Map<string, string | null>();

/** The request's origin, or null when it sent neither a usable Origin nor a Referer. */
export function requestOrigin(req: IncomingMessage): RequestOrigin | null {
  const origin = req.headers.origin;
  // "null" is what sandboxed frames and file: pages send: no host to check.
  if (origin && origin !== 'null') {
    let host = hostsOfOrigins.get(origin);
    if (host === undefined) {
      host = hostOf(origin);
      if (hostsOfOrigins.size >= CACHE_LIMIT) hostsOfOrigins.clear();
      hostsOfOrigins.set(origin, host);
    }
    return host ? { origin, host } : null;
  }
  const referer = req.headers.referer;
  const host = referer ? hostOf(referer) : null;
  return host ? { origin: null, host } : null;
}

function hostOf(url: string): string | null {
  try {
    const { protocol, hostname } = new URL(url);
    if (protocol !== 'https:' && protocol !== 'http:') return null;
    return normalizeHost(hostname);
  } catch {
    return null;
  }
}

/** Lower case, without a trailing dot. */
function normalizeHost(host: string): string {
  const lower = host.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/**
 * An installation's `domains` as matched: lower case, without scheme, port or path, so
 * `https://Example.com/` is `example.com`. `*.example.com` stays a wildcard.
 */
export function normalizeDomains(domains: readonly string[]): string[] {
  const out: string[] = [];
  for (const raw of domains) {
    let domain = raw.trim().toLowerCase();
    const scheme = domain.indexOf('://');
    if (scheme !== -1) domain = domain.slice(scheme + 3);
    domain = domain.split(/[/?#]/, 1)[0];
    // A port, but not an IPv6 literal's colons.
    if (!domain.startsWith('[')) domain = domain.split(':', 1)[0];
    domain = normalizeHost(domain);
    // A bare "*" (or "*.") names no host: it never matches.
    if (domain && domain !== '*') out.push(domain);
  }
  return out;
}

/** Exact host, or `*.example.com` for example.com and any of its subdomains; localhost only when listed. */
export function hostAllowed(domains: readonly string[], host: string): boolean {
  for (const domain of domains) {
    if (domain.startsWith('*.')) {
      const apex = domain.slice(2);
      if (host === apex || (host.endsWith(apex) && host.charCodeAt(host.length - apex.length - 1) === 46 /* . */)) return true;
    } else if (host === domain) return true;
  }
  return false;
}

/** Headers of an answer to an allowed page: it may read the answer; never credentials or cookies. */
export function corsHeaders(origin: string | null): Record<string, string> {
  return origin ? { 'access-control-allow-origin': origin, vary: 'Origin' } : { vary: 'Origin' };
}

/**
 * The preflight's answer. It carries no key, so it cannot be checked against an installation:
 * any origin may send the POST, which is checked itself (and stores nothing when refused).
 */
export function preflightHeaders(req: IncomingMessage): Record<string, string> {
  const origin = req.headers.origin;
  return {
    ...(origin ? { 'access-control-allow-origin': origin } : {}),
    'access-control-allow-methods': 'POST, OPTIONS',
    'access-control-allow-headers': 'content-type',
    'access-control-max-age': '86400',
    vary: 'Origin',
  };
}

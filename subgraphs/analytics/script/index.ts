import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { sendError } from '../../../core/http';
import { REPO_ROOT } from '../../../core/paths';

/**
 * The tracking script (track.src.js), read, minified and gzipped once when this module loads,
 * and served from memory at GET /v1/analytics/track.js (the ingestion's raw route calls
 * serveTrackScript).
 */

const SOURCE_NAME = 'track.src.js';

/** Next to this file when run from source; the repository copy when run from dist/ (tsc emits no .js sources). */
function readSource(): string {
  const candidates = [path.join(__dirname, SOURCE_NAME), path.join(REPO_ROOT, 'subgraphs', 'analytics', 'script', SOURCE_NAME)];
  const found = candidates.find((file) => existsSync(file));
  if (!found) throw new Error(`The analytics tracking script is missing: looked for ${candidates.join(' and ')}`);
  return readFileSync(found, 'utf8');
}

/**
 * esbuild is a development dependency (production images prune it): without it, the source goes
 * out with its comment lines and indentation dropped, which track.src.js is written to allow.
 */
function minify(source: string): string {
  let esbuild: typeof import('esbuild') | undefined;
  try {
    esbuild = require('esbuild') as typeof import('esbuild');
  } catch {
    esbuild = undefined;
  }
  if (esbuild) return esbuild.transformSync(source, { loader: 'js', minify: true, target: 'es2017', legalComments: 'none', charset: 'utf8' }).code;
  return source
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('//'))
    .join('\n');
}

const body = Buffer.from(minify(readSource()), 'utf8');
const gzipped = gzipSync(body, { level: 9 });
const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
// Each encoding its own strong validator (RFC 9110 §8.8.3); a match on either means the same script.
const gzipEtag = `${etag.slice(0, -1)}-gz"`;

/** Bytes of the served script, minified, plain and gzipped. */
export const TRACK_SCRIPT_SIZES: { raw: number; gzip: number } = { raw: body.length, gzip: gzipped.length };

const HEADERS = {
  'content-type': 'application/javascript; charset=utf-8',
  'cache-control': 'public, max-age=3600',
  'access-control-allow-origin': '*',
  // Pages that set Cross-Origin-Embedder-Policy may load it too.
  'cross-origin-resource-policy': 'cross-origin',
  'x-content-type-options': 'nosniff',
  vary: 'accept-encoding',
};

/**
 * Serves the script to GET and HEAD: gzip when the client accepts it, 304 on a matching
 * If-None-Match. Other methods get ROUTE_NOT_FOUND with `Allow`, as every route of the platform
 * answers a known path asked with another method (the error codes have no 405).
 */
export function serveTrackScript(req: IncomingMessage, res: ServerResponse, requestId = 'none'): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return sendError(res, 'ROUTE_NOT_FOUND', `No route ${req.method} /v1/analytics/track.js`, requestId, undefined, { allow: 'GET, HEAD' });
  }
  const gzip = acceptsGzip(req.headers['accept-encoding']);
  const tag = gzip ? gzipEtag : etag;
  if (matchesEtag(req.headers['if-none-match'])) {
    res.writeHead(304, { ...HEADERS, etag: tag });
    return void res.end();
  }
  const payload = gzip ? gzipped : body;
  res.writeHead(200, { ...HEADERS, etag: tag, 'content-length': payload.length, ...(gzip ? { 'content-encoding': 'gzip' } : {}) });
  res.end(req.method === 'HEAD' ? undefined : payload);
}

/** True unless the header is absent or refuses gzip (`gzip;q=0`, or `*;q=0` without gzip named). */
function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  let star: boolean | undefined;
  for (const part of header.split(',')) {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const accepted = q === undefined || Number(q.slice(2)) > 0;
    if (coding.trim() === 'gzip' || coding.trim() === 'x-gzip') return accepted;
    if (coding.trim() === '*') star = accepted;
  }
  return star ?? false;
}

function matchesEtag(header: string | undefined): boolean {
  if (!header) return false;
  return header.split(',').some((value) => {
    const candidate = value.trim().replace(/^W\//, '');
    return candidate === '*' || candidate === etag || candidate === gzipEtag;
  });
}

/** What `trackSnippet` writes into the page. */
export interface TrackSnippetOptions {
  /** Where the script is served, e.g. `https://api.example.com/v1/analytics/track.js`. */
  scriptUrl: string;
  /** Base of the ingestion routes the script posts to, e.g. `https://api.example.com/v1/analytics`. */
  apiUrl: string;
  /** The installation's `pk_…` key. */
  publicKey: string;
}

/** The tag a site pastes into its pages. */
export function trackSnippet(options: TrackSnippetOptions): string {
  return `<script defer src="${escapeAttribute(options.scriptUrl)}" data-key="${escapeAttribute(options.publicKey)}" data-api="${escapeAttribute(options.apiUrl)}"></script>`;
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

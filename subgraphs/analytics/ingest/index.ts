import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { DomainError, ForbiddenError, UnauthenticatedError } from '../../../core/errors';
import { clientAddress, readBody, sendError, sendJson } from '../../../core/http';
import { newId } from '../../../core/ids';
import type { Envelope } from '../../../core/principal';
import type { RawHttpRoutes } from '../../../core/subgraph';
import type { AnalyticsDeps } from '../index';
import { serveTrackScript } from '../script';
import { createInstallationLookup, type InstallationLookup } from './installations';
import { resolveIngestOptions, type IngestOptions } from './options';
import { corsHeaders, hostAllowed, preflightHeaders, requestOrigin } from './origin';
import { createPartitionKeeper } from './partitions';
import { INGEST_LIMITS, isMalformedKey, parseBody, readEvents, readKey, type EventKind, type IngestEvent } from './payload';
import { describeUserAgent } from './user-agent';
import { createVisitStore } from './visit-state';
import { createVisitorIds } from './visitors';
import { createEventWriter } from './writer';

export type { IngestOptions } from './options';

/**
 * The public ingestion routes and their batch writer (README.md, "Ingestion").
 * Raw routes under prefix `/analytics-public/` (the edge forwards /v1/analytics/<name> here):
 * `GET track.js` (the script, gzip when accepted), `POST|OPTIONS track`, `event`, `identify`.
 */
export interface AnalyticsIngest {
  routes: RawHttpRoutes;
  /** Writes everything accepted so far (tests, benchmarks). */
  flush(): Promise<void>;
  /** Drops cached installations (one, or all without an id). */
  invalidate(installationId?: string): void;
  /** Stops accepting, writes what is buffered. */
  close(): Promise<void>;
  /** Events accepted and not yet written. */
  readonly bufferedRows: number;
}

/** What a POST answers (202). */
export interface IngestAnswer {
  /** Events buffered for writing. */
  accepted: number;
  /** Events whose id was already seen in the last 24 h. */
  duplicates: number;
  /** Events of bots, not kept. */
  dropped: number;
}

const PREFIX = '/analytics-public/';
const KINDS: ReadonlyMap<string, EventKind> = new Map([
  ['track', 'pageview'],
  ['event', 'event'],
  ['identify', 'identify'],
]);
const UNAVAILABLE = 'Analytics ingestion is temporarily unavailable';
/** How long close() waits for requests already past the door to buffer their events, ms. */
const IN_FLIGHT_WAIT_MS = 5000;

export function createIngest(deps: AnalyticsDeps, ingestOptions: IngestOptions = {}): AnalyticsIngest {
  const options = resolveIngestOptions(ingestOptions);
  const logger = deps.logger.child({ component: 'ingest' });
  const installations: InstallationLookup = createInstallationLookup(deps.dataSource, { ttlMs: options.installationTtlMs, unknownTtlMs: options.unknownKeyTtlMs, now: options.now });
  const visitors = createVisitorIds(deps.dataSource);
  const visits = createVisitStore(deps.redis, deps.config.redisPrefix);
  const writer = createEventWriter({ dataSource: deps.dataSource, partitions: createPartitionKeeper(deps.dataSource, logger), logger, options });
  const serverIds = new ServerEventIds();
  let closing: Promise<void> | undefined;
  let inFlight = 0;

  /** POST track / event / identify: checks, then buffers, then 202. */
  const ingest = async (kind: EventKind, req: IncomingMessage, res: ServerResponse, envelope: Envelope | null, requestId: string, answerHeaders: { cors: Record<string, string> }): Promise<void> => {
    const raw = await readBody(req, INGEST_LIMITS.bodyBytes);
    const body = parseBody(raw);
    const key = readKey(body);
    const installation = isMalformedKey(key) ? null : await installations.byKey(key);
    if (!installation) throw new UnauthenticatedError('Unknown installation key', { field: 'key' });
    const from = requestOrigin(req);
    if (!from) throw new ForbiddenError('The request names no Origin or Referer: events are accepted only from the installation\'s domains');
    if (!hostAllowed(installation.domains, from.host)) throw new ForbiddenError(`${from.host} is not one of the installation's domains`, { host: from.host });
    const cors = corsHeaders(from.origin);
    answerHeaders.cors = cors;

    const now = options.now();
    const events = readEvents(kind, body, now);
    const userAgent = String(req.headers['user-agent'] ?? '');
    const agent = describeUserAgent(userAgent);
    if (agent.bot) return answer(res, requestId, cors, { accepted: 0, duplicates: 0, dropped: events.length });

    const visitorId = await visitors.visitorId(installation.id, envelope?.clientIp ?? clientAddress(req), userAgent, now);
    const clientIds: string[] = [];
    let identifiedAs: string | null = null;
    for (const event of events) {
      if (event.id !== null) clientIds.push(event.id);
      if (kind === 'identify') identifiedAs = event.userId;
    }
    const state = await visits.resolve(installation.id, visitorId, clientIds, identifiedAs, now);
    let kept: IngestEvent[] = events;
    if (clientIds.length) {
      kept = [];
      let asked = 0;
      for (const event of events) if (event.id === null || state.fresh[asked++]) kept.push(event);
    }
    for (const event of kept) event.id ??= serverIds.next();
    if (kept.length) {
      writer.add({ installationId: installation.id, visitorId, sessionId: state.sessionId, userId: state.userId, browser: agent.browser, os: agent.os, device: agent.device, events: kept });
    }
    answer(res, requestId, cors, { accepted: kept.length, duplicates: events.length - kept.length, dropped: 0 });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, envelope: Envelope | null): Promise<void> => {
    const requestId = envelope?.requestId ?? newId('req');
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const name = (q === -1 ? url : url.slice(0, q)).slice(PREFIX.length);
    const method = req.method ?? 'GET';
    if (name === 'track.js') return serveTrackScript(req, res, requestId);
    const kind = KINDS.get(name);
    if (!kind) {
      req.resume();
      return sendError(res, 'ROUTE_NOT_FOUND', `No route ${method} /v1/analytics/${name}`, requestId);
    }
    if (method === 'OPTIONS') {
      req.resume();
      res.writeHead(204, { ...preflightHeaders(req), 'x-request-id': requestId });
      return void res.end();
    }
    if (method !== 'POST') {
      // As everywhere on the platform: a known path asked with another method is ROUTE_NOT_FOUND, with Allow.
      req.resume();
      return sendError(res, 'ROUTE_NOT_FOUND', `No route ${method} /v1/analytics/${name}`, requestId, undefined, { allow: 'POST, OPTIONS' });
    }
    if (closing || writer.bufferedRows >= options.maxBufferedRows) {
      req.resume();
      const why = closing ? 'Analytics ingestion is shutting down' : 'Analytics ingestion is behind on writing events';
      return sendError(res, 'UNAVAILABLE', `${why}: retry after the Retry-After delay`, requestId, undefined, { 'retry-after': '1', ...corsOfRequest(req) });
    }
    // Errors are readable by the page only once its origin is known good (a 400 naming the field); before, CORS hides them.
    const answerHeaders = { cors: corsHeaders(null) };
    inFlight++;
    try {
      await ingest(kind, req, res, envelope, requestId, answerHeaders);
    } catch (err) {
      if (res.headersSent) return void res.destroy();
      if (err instanceof DomainError) return sendError(res, err.code, err.message, requestId, err.details, answerHeaders.cors);
      logger.error('analytics ingestion failed', { err, requestId });
      sendError(res, 'UNAVAILABLE', UNAVAILABLE, requestId, undefined, { 'retry-after': '1', ...answerHeaders.cors });
    } finally {
      inFlight--;
    }
  };

  return {
    routes: { prefix: PREFIX, handle },
    flush: () => writer.flush(),
    invalidate: (installationId) => installations.invalidate(installationId),
    close() {
      closing ??= (async () => {
        const deadline = Date.now() + IN_FLIGHT_WAIT_MS;
        while (inFlight > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
        await writer.close();
      })();
      return closing;
    },
    get bufferedRows() {
      return writer.bufferedRows;
    },
  };
}

function answer(res: ServerResponse, requestId: string, cors: Record<string, string>, counts: IngestAnswer): void {
  sendJson(res, 202, counts, { ...cors, 'cache-control': 'no-store', 'x-request-id': requestId });
}

/** A 503 carries no data of any installation: any page may read it (and retry). */
function corsOfRequest(req: IncomingMessage): Record<string, string> {
  return corsHeaders(req.headers.origin ?? null);
}

/**
 * Ids of events sent without one: `s.<process>.<counter>`. The dot is outside the client ids'
 * alphabet, so a server id never meets a client's; unique without a random draw per event.
 */
class ServerEventIds {
  private readonly process = randomBytes(6).toString('base64url');
  private counter = 0;

  next(): string {
    return `s.${this.process}.${(this.counter++).toString(36)}`;
  }
}

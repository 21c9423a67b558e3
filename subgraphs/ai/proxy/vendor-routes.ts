import type { IncomingMessage, ServerResponse } from 'node:http';
import { callerGoneSignal } from '../../../core/http';
import type { Envelope } from '../../../core/principal';
import type { RawHttpRoutes } from '../../../core/subgraph';
import { GATEWAY_KEY_PREFIX } from '../model/shared';
import { ProtocolError, UpstreamFormatError, type ChatRequest, type ModelListEntry, type VendorApi } from '../protocol';
import { Exchange, forwardWithFailover } from './forward';
import { COUNT_TOKENS, EMBEDDINGS, estimateChatTokens, estimateTextTokens, formatCountTokens, parseCountTokensRequest, PROTOCOLS } from './protocols';
import { pipeThrough, pipeTranslatedStream, relayClientError, sendFailoverFailure, sendTranslated, sendVendorError, writeJson, type ResponderContext } from './respond';
import { modelsOfPool } from './select';
import type { ProxyServices } from './services';
import { VENDOR_OF_TOKEN, type Candidate, type Operation, type RouteEntry, type RouteMember } from './types';
import type { UpstreamCall } from './upstream';
import { credentialHeaders } from './upstream';

export const VENDOR_PREFIX = '/vendor/';

/** What a vendor route asks for. */
type VendorOp =
  | { kind: 'chat'; model?: string; stream?: boolean }
  | { kind: 'embeddings'; model?: string; action?: string }
  | { kind: 'count_tokens'; model?: string }
  | { kind: 'models' }
  | { kind: 'model'; id: string };

interface Target {
  api: VendorApi;
  /** The path after the vendor token (`/v1/chat/completions`, `/v1beta/models/x:generateContent`). */
  rest: string;
  /** The query string without `?` ('' when none). */
  query: string;
  op: VendorOp | null;
  method: string;
}

type Json = Record<string, unknown>;

/** The client's body: parsed, and the bytes as they came (forwarded unchanged when nothing changes). */
interface ClientBody {
  json: Json;
  raw: Buffer;
}

const EMPTY = Buffer.alloc(0);

/**
 * The vendor-compatible routes under `/vendor/<vendor-a|vendor-b|vendor-c>/…`, which the edge
 * forwards unchanged. Per request, on the hot path: parse the path, look the key up in memory,
 * read the body, (only for keys with limits) one Redis round trip, choose members, forward.
 * Everything else (usage rows, counters, conversations) happens after the response.
 */
export function createVendorRoutes(services: ProxyServices): RawHttpRoutes {
  const handle = async (req: IncomingMessage, res: ServerResponse, envelope: Envelope | null): Promise<void> => {
    const target = parseTarget(req);
    if (!target) {
      drain(req);
      return writeJson(res, 404, { error: { message: `No route ${req.method} ${req.url}`, type: 'invalid_request_error', code: 'not_found' } });
    }
    const clientApi = target.api;
    const fail = (status: number, kind: Parameters<typeof sendVendorError>[1], message: string, headers?: Record<string, string>) => {
      drain(req);
      sendVendorError({ res, clientApi }, kind, message, { status, headers });
    };
    if (!target.op) return fail(404, 'not_found', `Unknown route: ${target.method} ${target.rest}`);
    const presented = presentedKey(req, target.query);
    if (!presented || !presented.startsWith(GATEWAY_KEY_PREFIX) || presented.length > 256) {
      return fail(401, 'authentication', 'Missing or invalid gateway key.');
    }
    let route = services.routes.resolve(presented);
    if (route instanceof Promise) {
      try {
        route = await route;
      } catch (err) {
        services.logger.error('ai proxy: gateway key lookup failed', { err });
        return fail(503, 'overloaded', 'The AI gateway is temporarily unavailable.');
      }
    }
    if (!route || route.key.revokedAt !== null || (route.key.expiresAt !== null && route.key.expiresAt <= Date.now())) {
      return fail(401, 'authentication', 'Missing, revoked or expired gateway key.');
    }

    const op = target.op;
    const operation: Operation = op.kind === 'model' ? 'models' : op.kind;
    const { key } = route;
    const exchange = new Exchange(
      services.recorder.requestIdFor(envelope?.requestId),
      key.workspaceId,
      key.id,
      route.pool.id,
      clientApi,
      operation,
      op.kind === 'model' ? op.id : ('model' in op && op.model) || '',
      route.limited ? { keyId: key.id, tokens: key.tokensPerMinute !== null, spend: key.monthlyBudgetUsd !== null } : null,
    );
    const clientGone = callerGoneSignal(res);
    const ctx: ResponderContext = {
      res,
      exchange,
      recorder: services.recorder,
      breakers: services.breakers,
      clientApi,
      canonical: () => null,
      storeConversation: false,
      requestBody: null,
      clientGone: () => clientGone.aborted,
    };

    let body: Json | null = null;
    let raw: Buffer = EMPTY;
    if (target.method === 'POST') {
      const read = await readRequestBody(req, services.config.ai.maxRequestBytes);
      if (read === 'too_large') return sendVendorError(ctx, 'invalid_request', `The request body exceeds ${services.config.ai.maxRequestBytes} bytes.`, { status: 413 });
      if (read === 'aborted') return exchange.finish(services.recorder, 499, 'The client closed the request');
      raw = read;
      try {
        const parsed: unknown = raw.length ? JSON.parse(raw.toString('utf8')) : null;
        if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
        body = parsed as Json;
      } catch {
        return sendVendorError(ctx, 'invalid_request', 'The request body is not a valid JSON object.');
      }
      if (op.kind === 'chat' || op.kind === 'embeddings' || op.kind === 'count_tokens') {
        if (clientApi !== 'gemini') {
          if (typeof body.model !== 'string' || !body.model) return sendVendorError(ctx, 'invalid_request', "'model' is required and must be a non-empty string.");
          op.model = body.model;
        }
        exchange.model = op.model ?? '';
      }
    }

    if (route.limited) {
      const refusal = await services.limits.check(key);
      if (refusal) {
        return sendVendorError(ctx, refusal.kind, refusal.message, refusal.retryAfter ? { headers: { 'retry-after': String(refusal.retryAfter) } } : {});
      }
    }

    try {
      switch (op.kind) {
        case 'models':
        case 'model':
          return serveModels(ctx, route, op, services);
        case 'count_tokens':
          return await countTokens(services, ctx, target, route, { json: body!, raw }, op.model!, clientGone);
        case 'embeddings':
          return await embeddings(services, ctx, target, route, { json: body!, raw }, op, clientGone);
        case 'chat':
          return await chat(services, ctx, target, route, { json: body!, raw }, op, clientGone);
      }
    } catch (err) {
      if (err instanceof ProtocolError) return sendVendorError(ctx, 'invalid_request', err.message);
      if (err instanceof UpstreamFormatError) return sendVendorError(ctx, 'upstream', err.message);
      services.logger.error('ai proxy: request failed', { err, requestId: exchange.requestId });
      if (res.headersSent) {
        res.destroy();
        return exchange.finish(services.recorder, 500, (err as Error)?.message ?? 'internal error');
      }
      return sendVendorError(ctx, 'upstream', 'The AI gateway failed to handle the request.', { status: 500 });
    }
  };

  return {
    prefix: VENDOR_PREFIX,
    handle,
    // Connections only: the requests this cuts are recorded by services.close() (the subgraph's onStop).
    close: () => services.closeConnections(),
  };
}

// ------------------------------------------------------------------------------------------ chat

async function chat(services: ProxyServices, ctx: ResponderContext, target: Target, route: RouteEntry, client: ClientBody, op: Extract<VendorOp, { kind: 'chat' }>, signal: AbortSignal): Promise<void> {
  const clientApi = target.api;
  const body = client.json;
  const model = op.model!;
  const stream = clientApi === 'gemini' ? op.stream === true : body.stream === true;
  const candidates = services.selector.candidates(route.pool, route.members, model, 'chat');
  if (candidates.length === 0) return sendVendorError(ctx, 'not_found', `The model '${model}' does not exist or is not served through this key.`);

  const proto = PROTOCOLS[clientApi];
  let canonical: ChatRequest | undefined;
  const parse = (): ChatRequest => (canonical ??= proto.parseChatRequest(body, clientApi === 'gemini' ? { model, stream } : undefined));
  // A request that must be translated is validated before any upstream sees it (400 at once).
  if (candidates.some((c) => c.member.api !== clientApi)) parse();
  ctx.canonical = () => parse();
  ctx.storeConversation = route.storeConversations;
  ctx.requestBody = body;

  const streamOptions = body.stream_options as Json | undefined;
  const clientWantsUsage = clientApi === 'openai' && stream && !!streamOptions && streamOptions.include_usage === true;
  const injectUsage = clientApi === 'openai' && stream && !clientWantsUsage;
  const passBodies = new Map<string, string | Buffer>();

  const build = (candidate: Candidate): UpstreamCall => {
    const { member, upstreamModel } = candidate;
    if (member.api === clientApi) {
      let payload = passBodies.get(upstreamModel);
      if (payload === undefined) {
        payload = passThroughBody(clientApi, client, model, upstreamModel, injectUsage);
        passBodies.set(upstreamModel, payload);
      }
      return {
        method: 'POST',
        path: passThroughPath(clientApi, member, target, model, upstreamModel),
        headers: passThroughHeaders(clientApi, member, ctx, stream),
        body: payload,
        timeoutMs: member.timeoutMs,
      };
    }
    const formatted = PROTOCOLS[member.api].formatChatRequest({ ...parse(), model: upstreamModel });
    return {
      method: 'POST',
      path: member.basePath + formatted.path,
      headers: upstreamHeaders(member, stream),
      body: JSON.stringify(formatted.body),
      timeoutMs: member.timeoutMs,
    };
  };

  const outcome = await forwardWithFailover(services.failover, ctx.exchange, candidates, route.pool.maxAttempts, signal, build);
  if (outcome.kind === 'failed') return sendFailoverFailure(ctx, outcome.failure);
  if (outcome.kind === 'client_error') return relayClientError(ctx, outcome.answer, outcome.candidate.member.api === clientApi);
  const { committed } = outcome;
  const upstreamApi = committed.candidate.member.api;
  if (upstreamApi === clientApi) return pipeThrough(ctx, committed, { stream, dropUsageChunk: injectUsage });
  if (stream) return pipeTranslatedStream(ctx, committed, { includeUsage: clientWantsUsage });
  return sendTranslated(ctx, committed, (json) => {
    const response = PROTOCOLS[upstreamApi].parseChatResponse(json);
    if (!response.model) response.model = committed.candidate.upstreamModel;
    return { body: proto.formatChatResponse(response), usage: response.usage };
  });
}

/** The client's body for a same-vendor upstream: the bytes as they are unless the model is renamed or usage is asked for. */
function passThroughBody(api: VendorApi, client: ClientBody, model: string, upstreamModel: string, injectUsage: boolean): string | Buffer {
  if (api === 'gemini' || (upstreamModel === model && !injectUsage)) return client.raw;
  const body = client.json;
  const copy: Json = { ...body };
  if (upstreamModel !== model) copy.model = upstreamModel;
  if (injectUsage) copy.stream_options = { ...((body.stream_options as Json | undefined) ?? {}), include_usage: true };
  return JSON.stringify(copy);
}

function passThroughPath(api: VendorApi, member: RouteMember, target: Target, model: string, upstreamModel: string): string {
  let path: string;
  if (api === 'openai') path = target.rest.slice('/v1'.length);
  else if (api === 'gemini' && upstreamModel !== model) path = target.rest.replace(/^(\/v1beta\/models\/)[^:]+(:.*)$/, (_m, head: string, action: string) => `${head}${upstreamModel}${action}`);
  else path = target.rest;
  const query = target.query ? withoutKeyParam(target.query) : '';
  return member.basePath + path + (query ? `?${query}` : '');
}

function passThroughHeaders(api: VendorApi, member: RouteMember, ctx: ResponderContext, stream: boolean): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json' };
  if (api === 'anthropic') {
    const req = requestOf(ctx);
    const version = req?.headers['anthropic-version'];
    headers['anthropic-version'] = typeof version === 'string' && version ? version : '2023-06-01';
    const beta = req?.headers['anthropic-beta'];
    if (typeof beta === 'string' && beta) headers['anthropic-beta'] = beta;
  }
  return credentialHeaders(member, headers);
}

/** Headers of a request the proxy formatted itself. */
function upstreamHeaders(member: RouteMember, stream: boolean): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json' };
  if (member.api === 'anthropic') headers['anthropic-version'] = '2023-06-01';
  return credentialHeaders(member, headers);
}

function requestOf(ctx: ResponderContext): IncomingMessage | undefined {
  return ctx.res.req;
}

// ------------------------------------------------------------------------------------ embeddings

async function embeddings(services: ProxyServices, ctx: ResponderContext, target: Target, route: RouteEntry, client: ClientBody, op: Extract<VendorOp, { kind: 'embeddings' }>, signal: AbortSignal): Promise<void> {
  const clientApi = target.api;
  const body = client.json;
  const codec = EMBEDDINGS[clientApi];
  if (!codec) return sendVendorError(ctx, 'not_found', 'This API has no embeddings.');
  const model = op.model!;
  const candidates = services.selector.candidates(route.pool, route.members, model, 'embeddings');
  if (candidates.length === 0) return sendVendorError(ctx, 'not_found', `The model '${model}' does not exist or is not served through this key.`);
  const request = codec.parseRequest(body, { model, action: op.action });
  const estimate = () => request.inputs.reduce((sum, text) => sum + estimateTextTokens(text), 0);

  const build = (candidate: Candidate): UpstreamCall => {
    const { member, upstreamModel } = candidate;
    if (member.api === clientApi) {
      return {
        method: 'POST',
        path: passThroughPath(clientApi, member, target, model, upstreamModel),
        headers: credentialHeaders(member, { 'content-type': 'application/json', accept: 'application/json' }),
        body: passThroughBody(clientApi, client, model, upstreamModel, false),
        timeoutMs: member.timeoutMs,
      };
    }
    const formatted = EMBEDDINGS[member.api]!.formatRequest({ ...request, model: upstreamModel });
    return { method: 'POST', path: member.basePath + formatted.path, headers: upstreamHeaders(member, false), body: JSON.stringify(formatted.body), timeoutMs: member.timeoutMs };
  };
  const outcome = await forwardWithFailover(services.failover, ctx.exchange, candidates, route.pool.maxAttempts, signal, build);
  if (outcome.kind === 'failed') return sendFailoverFailure(ctx, outcome.failure);
  if (outcome.kind === 'client_error') return relayClientError(ctx, outcome.answer, outcome.candidate.member.api === clientApi);
  const { committed } = outcome;
  const upstreamApi = committed.candidate.member.api;
  if (upstreamApi === clientApi) {
    return pipeThrough(ctx, committed, {
      stream: false,
      dropUsageChunk: false,
      // Gemini reports no tokens for embeddings: estimated from the inputs.
      usageOf: (json) => {
        const usage = PROTOCOLS[upstreamApi].usageFromResponse(json);
        return usage.inputTokens > 0 ? usage : { inputTokens: estimate(), outputTokens: 0, cachedTokens: 0 };
      },
    });
  }
  return sendTranslated(ctx, committed, (json) => {
    const response = EMBEDDINGS[upstreamApi]!.parseResponse(json, committed.candidate.upstreamModel);
    const usage = response.usage.inputTokens > 0 ? response.usage : { inputTokens: estimate(), outputTokens: 0, cachedTokens: 0 };
    return { body: codec.formatResponse({ ...response, usage }, { action: op.action, encodingFormat: request.encodingFormat }), usage };
  });
}

// ---------------------------------------------------------------------------------- count tokens

/**
 * Counted by an upstream that has a count endpoint (Anthropic or Gemini members, same vendor as
 * the client or not: the count is exact for that model); answered here with the protocol
 * library's estimate when no such member serves the model, or when they all fail. The row
 * carries no tokens either way: counting is free.
 */
async function countTokens(services: ProxyServices, ctx: ResponderContext, target: Target, route: RouteEntry, client: ClientBody, model: string, signal: AbortSignal): Promise<void> {
  const clientApi = target.api;
  const body = client.json;
  const candidates = services.selector.candidates(route.pool, route.members, model, 'count_tokens');
  if (candidates.length === 0) return sendVendorError(ctx, 'not_found', `The model '${model}' does not exist or is not served through this key.`);
  const canonical = parseCountTokensRequest(clientApi, body, { model });
  const counting = candidates.filter((c) => COUNT_TOKENS[c.member.api] !== undefined);
  const noTokens = () => ({ inputTokens: 0, outputTokens: 0, cachedTokens: 0 });
  if (counting.length > 0) {
    const build = (candidate: Candidate): UpstreamCall => {
      const { member, upstreamModel } = candidate;
      if (member.api === clientApi) {
        return {
          method: 'POST',
          path: passThroughPath(clientApi, member, target, model, upstreamModel),
          headers: passThroughHeaders(clientApi, member, ctx, false),
          body: passThroughBody(clientApi, client, model, upstreamModel, false),
          timeoutMs: member.timeoutMs,
        };
      }
      const formatted = COUNT_TOKENS[member.api]!.format({ ...canonical, model: upstreamModel });
      return { method: 'POST', path: member.basePath + formatted.path, headers: upstreamHeaders(member, false), body: JSON.stringify(formatted.body), timeoutMs: member.timeoutMs };
    };
    const outcome = await forwardWithFailover(services.failover, ctx.exchange, counting, route.pool.maxAttempts, signal, build);
    if (outcome.kind === 'client_error') return relayClientError(ctx, outcome.answer, outcome.candidate.member.api === clientApi);
    if (outcome.kind === 'success') {
      const upstreamApi = outcome.committed.candidate.member.api;
      if (upstreamApi === clientApi) return pipeThrough(ctx, outcome.committed, { stream: false, dropUsageChunk: false, usageOf: noTokens });
      return sendTranslated(ctx, outcome.committed, (json) => ({ body: formatCountTokens(clientApi, COUNT_TOKENS[upstreamApi]!.parse(json)), usage: noTokens() }));
    }
    if (outcome.failure.kind === 'client_gone') return sendFailoverFailure(ctx, outcome.failure);
    // Every counting member failed: the estimate still answers.
  }
  ctx.exchange.firstByte();
  writeJson(ctx.res, 200, formatCountTokens(clientApi, estimateChatTokens(canonical)));
  ctx.exchange.finish(services.recorder, 200);
}

// ---------------------------------------------------------------------------------------- models

const MODEL_CREATED_AT = new Date('2024-01-01T00:00:00Z');

function serveModels(ctx: ResponderContext, route: RouteEntry, op: Extract<VendorOp, { kind: 'models' | 'model' }>, services: ProxyServices): void {
  const proto = PROTOCOLS[ctx.clientApi];
  const displayNames = new Map(services.config.ai.platformModels.map((pm) => [pm.model, pm.displayName]));
  const entries: ModelListEntry[] = modelsOfPool(route.members).map((id) => ({
    id,
    displayName: displayNames.get(id) ?? id,
    createdAt: MODEL_CREATED_AT,
    ownedBy: displayNames.has(id) ? 'platform' : 'organization',
  }));
  ctx.exchange.firstByte();
  if (op.kind === 'models') {
    writeJson(ctx.res, 200, proto.formatModelList(entries));
    return ctx.exchange.finish(services.recorder, 200);
  }
  const id = op.id.startsWith('models/') ? op.id.slice('models/'.length) : op.id;
  const entry = entries.find((e) => e.id === id);
  if (!entry) return sendVendorError(ctx, 'not_found', `The model '${id}' does not exist or is not served through this key.`);
  const list = proto.formatModelList([entry]) as Record<string, unknown>;
  const items = Object.values(list).find((value): value is unknown[] => Array.isArray(value));
  writeJson(ctx.res, 200, items?.[0] ?? list);
  ctx.exchange.finish(services.recorder, 200);
}

// ------------------------------------------------------------------------------------ the request

function parseTarget(req: IncomingMessage): Target | null {
  const url = req.url ?? '/';
  if (!url.startsWith(VENDOR_PREFIX)) return null;
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const query = q === -1 ? '' : url.slice(q + 1);
  const slash = path.indexOf('/', VENDOR_PREFIX.length);
  const token = path.slice(VENDOR_PREFIX.length, slash === -1 ? undefined : slash);
  const api = (VENDOR_OF_TOKEN as Record<string, VendorApi | undefined>)[token];
  if (!api) return null;
  const rest = slash === -1 ? '/' : path.slice(slash);
  const method = req.method ?? 'GET';
  return { api, rest, query, method, op: opOf(api, method, rest) };
}

function opOf(api: VendorApi, method: string, rest: string): VendorOp | null {
  if (api === 'openai') {
    if (method === 'POST' && rest === '/v1/chat/completions') return { kind: 'chat' };
    if (method === 'POST' && rest === '/v1/embeddings') return { kind: 'embeddings' };
    if (method === 'GET' && rest === '/v1/models') return { kind: 'models' };
    if (method === 'GET' && rest.startsWith('/v1/models/') && rest.length > '/v1/models/'.length) return { kind: 'model', id: safeDecode(rest.slice('/v1/models/'.length)) };
    return null;
  }
  if (api === 'anthropic') {
    if (method === 'POST' && rest === '/v1/messages') return { kind: 'chat' };
    if (method === 'POST' && rest === '/v1/messages/count_tokens') return { kind: 'count_tokens' };
    if (method === 'GET' && rest === '/v1/models') return { kind: 'models' };
    if (method === 'GET' && rest.startsWith('/v1/models/') && rest.length > '/v1/models/'.length) return { kind: 'model', id: safeDecode(rest.slice('/v1/models/'.length)) };
    return null;
  }
  // gemini
  if (method === 'GET' && rest === '/v1beta/models') return { kind: 'models' };
  const match = /^\/v1beta\/models\/([^/:]+)(?::([A-Za-z]+))?$/.exec(rest);
  if (!match) return null;
  const model = safeDecode(match[1]);
  const action = match[2];
  if (method === 'GET' && action === undefined) return { kind: 'model', id: model };
  if (method !== 'POST') return null;
  switch (action) {
    case 'generateContent':
      return { kind: 'chat', model, stream: false };
    case 'streamGenerateContent':
      return { kind: 'chat', model, stream: true };
    case 'countTokens':
      return { kind: 'count_tokens', model };
    case 'embedContent':
    case 'batchEmbedContents':
      return { kind: 'embeddings', model, action };
    default:
      return null;
  }
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * The gateway key, wherever the client's SDK puts it: `Authorization: Bearer` (vendor-a, also
 * accepted by the others), `x-api-key` (vendor-b), `x-goog-api-key` or `?key=` (vendor-c).
 */
function presentedKey(req: IncomingMessage, query: string): string | null {
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && auth.length > 7 && auth.slice(0, 7).toLowerCase() === 'bearer ') return auth.slice(7).trim();
  const apiKey = req.headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey) return apiKey.trim();
  const googKey = req.headers['x-goog-api-key'];
  if (typeof googKey === 'string' && googKey) return googKey.trim();
  if (query) {
    for (const pair of query.split('&')) {
      if (pair.startsWith('key=')) return safeDecode(pair.slice(4));
    }
  }
  return null;
}

function withoutKeyParam(query: string): string {
  if (!query.includes('key=')) return query;
  return query
    .split('&')
    .filter((pair) => !pair.startsWith('key='))
    .join('&');
}

/** The request body, bounded; 'too_large' past `limit`, 'aborted' when the client went away first. */
function readRequestBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too_large' | 'aborted'> {
  return new Promise((resolve) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      return resolve('too_large');
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (value: Buffer | 'too_large' | 'aborted') => {
      if (settled) return;
      settled = true;
      resolve(value);
    };
    req.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > limit) {
        settle('too_large');
        return;
      }
      chunks.push(chunk);
    });
    req.once('end', () => settle(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    req.once('error', () => settle('aborted'));
    req.once('close', () => settle(req.complete ? (chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)) : 'aborted'));
  });
}

/** Reads and drops a request body that will not be used (keeps the connection reusable). */
function drain(req: IncomingMessage): void {
  if (!req.complete) req.resume();
}

/**
 * Local stand-in upstream servers for the AI gateway's tests and benchmark. Each speaks one vendor's HTTP
 * protocol as the official SDK expects it (openai, @anthropic-ai/sdk, @google/genai), on 127.0.0.1 only,
 * with deterministic replies and token counts and knobs for failures, latency and broken streams.
 *
 * Token accounting (exact, so tests can assert numbers):
 * - input tokens = whitespace-separated words of every text in the request (system prompt, message text,
 *   tool results) + 3 per message; a separate system prompt (anthropic `system`, gemini `systemInstruction`)
 *   counts as one message, as an openai system message does. Tool definitions, tool-call arguments and
 *   non-text parts are not counted.
 * - output tokens = words of the reply text; a tool call counts 5.
 * - cached tokens = floor(input / 2) when the system prompt contains `cache me`, else 0. OpenAI and Gemini report
 *   them inside the prompt count (prompt_tokens_details.cached_tokens, cachedContentTokenCount); Anthropic, as the
 *   real API does, reports them beside it: input_tokens = input - cached, cache_read_input_tokens = cached.
 *
 * Replies: when the last message is a tool result → `the weather is <result>`; when tools are defined (and not
 * disabled by tool_choice none / mode NONE) and the last message is a user message containing the word
 * `weather` → a call of the first tool with `{"city":"Paris"}`; otherwise `echo: <last user text>`.
 * `behavior.reply` replaces the text of text replies. A max-tokens limit below the reply's word count cuts the
 * reply to that many words (finish reason length / max_tokens / MAX_TOKENS).
 */
import { setMaxListeners } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { sleep, type Exchange, type Vendor } from './stand-in-core';
import { anthropicVendor, ANTHROPIC_DEFAULT_MODELS } from './stand-in-anthropic';
import { geminiVendor, GEMINI_DEFAULT_MODELS } from './stand-in-gemini';
import { openaiVendor, OPENAI_DEFAULT_MODELS } from './stand-in-openai';

export { countWords, standInEmbedding, splitForStream, TOOL_CALL_ARGS, TOOL_CALL_ARGS_JSON, TOOL_CALL_TOKENS } from './stand-in-core';

export type StandInApi = 'openai' | 'anthropic' | 'gemini';

export interface StandInBehavior {
  /** Answer every request with this status and the vendor's error body (e.g. 429 with retry-after: 1, 500, 503). */
  failWith?: number;
  /** Fail only the next N requests (then behave normally); with failWith's status, else 500. Counts down in place. */
  failTimes?: number;
  /** Wait before the response head (ms) — for timeouts and least-latency tests. */
  delayMs?: number;
  /** Streams: wait between chunks (ms). */
  chunkDelayMs?: number;
  /** Streams: send a few valid chunks then garbage (`data: {not json`) and end. */
  malformedStream?: boolean;
  /** Streams: send a few chunks then destroy the socket. */
  dropMidStream?: boolean;
  /** Reply text; default: `echo: <last user text>`. */
  reply?: string;
  /** retry-after (seconds) sent with 429s; default 1. */
  retryAfterSeconds?: number;
}

export interface StandInRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body (the raw text when it was not JSON; undefined when empty). */
  body: any;
  /** Query parameters. */
  query: Record<string, string>;
}

export interface StandIn {
  api: StandInApi;
  /** Base URL the gateway's upstream record uses: openai `http://127.0.0.1:<port>/v1`, anthropic `http://127.0.0.1:<port>`, gemini `http://127.0.0.1:<port>`. */
  baseUrl: string;
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  port: number;
  /** The API key it accepts (openai/anthropic/gemini headers: Authorization Bearer / x-api-key / x-goog-api-key or ?key=); anything else → 401 in the vendor's shape. */
  apiKey: string;
  behavior: StandInBehavior; // mutable: tests change it between requests
  /** Every request received (method, path, headers, parsed body), newest last (the last `recordLimit`); `clear()` empties it. */
  requests: StandInRequest[];
  /** Models the list endpoints return. */
  models: string[];
  clear(): void;
  close(): Promise<void>;
}

export interface StandInOptions {
  apiKey?: string;
  /** Port on 127.0.0.1; default: a free one. */
  port?: number;
  behavior?: StandInBehavior;
  /** Models served by the list endpoints; when given, requests naming another model get the vendor's 404. */
  models?: string[];
  /** How many requests `requests` keeps (oldest dropped first); default 1000. */
  recordLimit?: number;
  /** Largest accepted request body; default 16 MiB (larger → 413). */
  maxBodyBytes?: number;
}

const VENDORS: Record<StandInApi, { vendor: Vendor; models: readonly string[]; defaultKey: string }> = {
  openai: { vendor: openaiVendor, models: OPENAI_DEFAULT_MODELS, defaultKey: 'sk-standin-openai' },
  anthropic: { vendor: anthropicVendor, models: ANTHROPIC_DEFAULT_MODELS, defaultKey: 'sk-ant-standin' },
  gemini: { vendor: geminiVendor, models: GEMINI_DEFAULT_MODELS, defaultKey: 'standin-gemini-key' },
};

export async function startStandIn(api: StandInApi, options: StandInOptions = {}): Promise<StandIn> {
  const entry = VENDORS[api];
  if (!entry) throw new Error(`unknown stand-in api ${String(api)}`);
  const { vendor } = entry;
  const recordLimit = Math.max(1, options.recordLimit ?? 1000);
  const maxBodyBytes = options.maxBodyBytes ?? 16 * 1024 * 1024;
  const closing = new AbortController();
  setMaxListeners(0, closing.signal); // one listener per in-flight request; benchmarks run many at once
  const sockets = new Set<Socket>();

  const server = createServer({ noDelay: true, keepAlive: true }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      try {
        if (res.headersSent) throw err;
        vendor.sendError(bareExchange(req, res), { status: 500, message: `stand-in failure: ${(err as Error)?.message ?? String(err)}` });
      } catch {
        res.destroy();
      }
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;

  const standIn: StandIn = {
    api,
    origin,
    port,
    baseUrl: api === 'openai' ? `${origin}/v1` : origin,
    apiKey: options.apiKey ?? entry.defaultKey,
    behavior: { ...options.behavior },
    requests: [],
    models: [...(options.models ?? entry.models)],
    clear() {
      standIn.requests.length = 0;
    },
    async close() {
      if (closing.signal.aborted) return;
      closing.abort();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      });
    },
  };
  const enforceModels = options.models !== undefined;

  function bareExchange(req: IncomingMessage, res: ServerResponse): Exchange {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', origin);
    } catch {
      url = new URL('/', origin);
    }
    return {
      req,
      res,
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body: undefined,
      badJson: false,
      behavior: { ...standIn.behavior },
      signal: closing.signal,
      models: standIn.models,
      enforceModels,
    };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestAbort = new AbortController();
    const abort = () => requestAbort.abort();
    closing.signal.addEventListener('abort', abort, { once: true });
    res.once('close', () => {
      closing.signal.removeEventListener('abort', abort);
      if (!res.writableFinished) abort();
    });

    const ex = bareExchange(req, res);
    ex.signal = requestAbort.signal;
    const raw = await readBody(req, maxBodyBytes);
    if (raw === null) {
      res.setHeader('connection', 'close');
      vendor.sendError(ex, { status: 413, message: `request body larger than ${maxBodyBytes} bytes` });
      return;
    }
    if (raw.length > 0) {
      try {
        ex.body = JSON.parse(raw);
        ex.badJson = typeof ex.body !== 'object' || ex.body === null || Array.isArray(ex.body);
      } catch {
        ex.body = raw;
        ex.badJson = true;
      }
    }

    standIn.requests.push({
      method: ex.method,
      path: ex.path,
      headers: { ...req.headers },
      body: ex.body,
      query: Object.fromEntries(ex.query),
    });
    if (standIn.requests.length > recordLimit) standIn.requests.splice(0, standIn.requests.length - recordLimit);

    const live = standIn.behavior;
    if (ex.behavior.delayMs) await sleep(ex.behavior.delayMs, ex.signal);
    if (ex.signal.aborted) return;

    const keyState = vendor.checkKey(ex, standIn.apiKey);
    if (keyState !== 'ok') {
      vendor.sendError(ex, vendor.authError(ex, keyState));
      return;
    }

    let failStatus: number | undefined;
    if (live.failTimes !== undefined) {
      if (live.failTimes > 0) {
        live.failTimes -= 1;
        failStatus = live.failWith ?? 500;
      }
    } else if (live.failWith !== undefined) {
      failStatus = live.failWith;
    }
    if (failStatus !== undefined) {
      const error = vendor.failure(failStatus);
      if (failStatus === 429) error.headers = { ...error.headers, 'retry-after': String(live.retryAfterSeconds ?? 1) };
      vendor.sendError(ex, error);
      return;
    }

    await vendor.route(ex);
  }

  return standIn;
}

/** Reads the body as text; null when it exceeds the limit. */
function readBody(req: IncomingMessage, limit: number): Promise<string | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) over = true;
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(over ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(over ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('close', () => resolve(over ? null : Buffer.concat(chunks).toString('utf8')));
  });
}

/** Starts one stand-in per API. */
export async function startStandIns(options: StandInOptions = {}): Promise<Record<StandInApi, StandIn> & { closeAll(): Promise<void> }> {
  const [openai, anthropic, gemini] = await Promise.all([
    startStandIn('openai', options),
    startStandIn('anthropic', options),
    startStandIn('gemini', options),
  ]);
  return {
    openai,
    anthropic,
    gemini,
    async closeAll() {
      await Promise.all([openai.close(), anthropic.close(), gemini.close()]);
    },
  };
}

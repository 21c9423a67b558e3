/**
 * Shared machinery of the vendor stand-ins: the request context, deterministic token accounting, the reply plan
 * (echo / tool call / tool-result answer), SSE writing with the failure knobs, and small helpers.
 * Vendor wire formats live in stand-in-openai.ts, stand-in-anthropic.ts and stand-in-gemini.ts.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { StandInBehavior } from './stand-ins';

/** One request as a vendor handler sees it. */
export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  /** Path without the query string. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body; undefined when there was none. */
  body: any;
  /** The body was present but not valid JSON (or not an object). */
  badJson: boolean;
  /** A snapshot of the behaviour taken when the request arrived. */
  behavior: StandInBehavior;
  /** Aborted when the client goes away or the stand-in closes. */
  signal: AbortSignal;
  models: string[];
  /** Unknown models are answered with 404 (only when `models` was given to startStandIn). */
  enforceModels: boolean;
}

/** A vendor-neutral error; each vendor renders it in its own shape. */
export interface ErrorSpec {
  status: number;
  message: string;
  /** openai error.type / anthropic error.type / gemini error.status (defaults derive from the status). */
  type?: string;
  code?: string | null;
  param?: string | null;
  headers?: Record<string, string>;
}

export interface Vendor {
  /** Whether the request carries the accepted key. */
  checkKey(ex: Exchange, apiKey: string): 'ok' | 'missing' | 'invalid';
  authError(ex: Exchange, kind: 'missing' | 'invalid'): ErrorSpec;
  /** The canned error for an injected failure with this status. */
  failure(status: number): ErrorSpec;
  sendError(ex: Exchange, error: ErrorSpec): void;
  route(ex: Exchange): Promise<void>;
}

// ---------------------------------------------------------------------------------------------------------------
// Token accounting and replies

/** Number of whitespace-separated words. */
export function countWords(text: string): number {
  const trimmed = text.trim();
  return trimmed === '' ? 0 : trimmed.split(/\s+/).length;
}

/** The deterministic 8-dimensional embedding of a text: `(sha256(text)[i] - 128) / 128` (exact in float32). */
export function standInEmbedding(text: string): number[] {
  const digest = createHash('sha256').update(text, 'utf8').digest();
  return Array.from(digest.subarray(0, 8), (byte) => (byte - 128) / 128);
}

/** Arguments of every tool call the stand-ins make. */
export const TOOL_CALL_ARGS: Readonly<{ city: string }> = Object.freeze({ city: 'Paris' });
export const TOOL_CALL_ARGS_JSON = JSON.stringify(TOOL_CALL_ARGS);
/** The arguments JSON in the two pieces streams send. */
export const TOOL_CALL_ARGS_PARTS: readonly [string, string] = ['{"city":', '"Paris"}'];
/** Output tokens reported for a tool call. */
export const TOOL_CALL_TOKENS = 5;
/** Extra input tokens per message. */
export const TOKENS_PER_MESSAGE = 3;

/** A request reduced to what the reply and the token accounting need. */
export interface Conversation {
  /** Text of the system prompt(s): openai system/developer messages, anthropic `system`, gemini `systemInstruction`. */
  systemText: string;
  /** Every text counted as input: system, message text, tool results. */
  countedTexts: string[];
  /** Messages for the +3 rule (a separate system prompt counts as one). */
  messageCount: number;
  lastRole: 'user' | 'assistant' | 'tool' | 'other' | undefined;
  /** Text of the last message (text parts only). */
  lastText: string;
  /** Tool results carried by the last message (openai: the trailing tool messages); empty when it carries none. */
  lastToolResults: string[];
  /** Text of the last user message. */
  lastUserText: string;
  firstToolName: string | undefined;
  /** tool_choice none / functionCallingConfig NONE. */
  toolsDisabled: boolean;
  maxOutputTokens: number | undefined;
}

export interface ReplyPlan {
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  kind: 'text' | 'tool';
  /** The reply text (kind text). */
  text: string;
  /** The tool called (kind tool). */
  toolName: string;
  /** The text was cut at the max-tokens limit. */
  truncated: boolean;
}

export function inputTokensOf(conversation: Pick<Conversation, 'countedTexts' | 'messageCount'>): number {
  let words = 0;
  for (const text of conversation.countedTexts) words += countWords(text);
  return words + TOKENS_PER_MESSAGE * conversation.messageCount;
}

export function cachedTokensOf(systemText: string, inputTokens: number): number {
  return /cache me/i.test(systemText) ? Math.floor(inputTokens / 2) : 0;
}

export function planReply(conversation: Conversation, behavior: StandInBehavior): ReplyPlan {
  const inputTokens = inputTokensOf(conversation);
  const cachedTokens = cachedTokensOf(conversation.systemText, inputTokens);
  const base = { inputTokens, cachedTokens, toolName: '', truncated: false };
  if (conversation.lastToolResults.length > 0) {
    return textPlan(base, behavior.reply ?? `the weather is ${conversation.lastToolResults.join(' and ')}`, conversation.maxOutputTokens);
  }
  if (conversation.firstToolName && !conversation.toolsDisabled && conversation.lastRole === 'user' && /\bweather\b/i.test(conversation.lastText)) {
    return { ...base, kind: 'tool', text: '', toolName: conversation.firstToolName, outputTokens: TOOL_CALL_TOKENS };
  }
  return textPlan(base, behavior.reply ?? `echo: ${conversation.lastUserText}`, conversation.maxOutputTokens);
}

function textPlan(base: Pick<ReplyPlan, 'inputTokens' | 'cachedTokens' | 'toolName' | 'truncated'>, text: string, maxTokens: number | undefined): ReplyPlan {
  let reply = text;
  let truncated = false;
  if (maxTokens !== undefined && maxTokens >= 1 && countWords(reply) > maxTokens) {
    reply = wordTokens(reply).slice(0, maxTokens).join('').trimEnd();
    truncated = true;
  }
  return { ...base, kind: 'text', text: reply, truncated, outputTokens: countWords(reply) };
}

/** The text as words with their trailing whitespace (leading whitespace stays on the first); joined they give the text back. */
function wordTokens(text: string): string[] {
  const lead = /^\s*/.exec(text)![0];
  const tokens = text.slice(lead.length).match(/\S+\s*/g) ?? [];
  if (tokens.length === 0) return text === '' ? [] : [text];
  tokens[0] = lead + tokens[0];
  return tokens;
}

/** Splits a reply into up to `parts` chunks on word boundaries; the chunks concatenate to the text exactly. */
export function splitForStream(text: string, parts = 3): string[] {
  const tokens = wordTokens(text);
  const k = Math.min(parts, tokens.length);
  const chunks: string[] = [];
  for (let i = 0; i < k; i++) {
    chunks.push(tokens.slice(Math.floor((i * tokens.length) / k), Math.floor(((i + 1) * tokens.length) / k)).join(''));
  }
  return chunks;
}

// ---------------------------------------------------------------------------------------------------------------
// HTTP helpers

export function randomId(prefix: string, length = 24): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = randomBytes(length);
  let id = prefix;
  for (const byte of bytes) id += alphabet[byte % alphabet.length];
  return id;
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(payload)),
    ...headers,
  });
  res.end(payload);
}

/** Waits `ms`, or less when the signal aborts; never rejects. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (!(ms > 0) || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Writes one piece and waits until it is handed to the socket (or the response is gone). */
function writeFlushed(ex: Exchange, data: string): Promise<void> {
  const { res } = ex;
  if (res.destroyed || ex.signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const onClose = () => resolve();
    res.once('close', onClose);
    res.write(data, () => {
      res.off('close', onClose);
      resolve();
    });
  });
}

/** A stream reply: every frame is written (and flushed) as it is produced. */
export interface StreamPlan {
  contentType: string;
  /** Complete frames, in order (an SSE event each, with its blank line). */
  frames: string[];
  /** With malformedStream / dropMidStream: how many valid frames go out first. */
  cutAfter: number;
  /** The malformed frame. */
  garbage: string;
  /** Written before the first frame and after the last one (gemini's JSON-array mode). */
  prefix?: string;
  suffix?: string;
  headers?: Record<string, string>;
}

export async function writeStream(ex: Exchange, plan: StreamPlan): Promise<void> {
  const { res, behavior } = ex;
  if (res.headersSent || res.destroyed) return;
  res.writeHead(200, {
    'content-type': plan.contentType,
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
    ...plan.headers,
  });
  res.flushHeaders();
  res.socket?.setNoDelay(true);
  const broken = behavior.malformedStream || behavior.dropMidStream;
  const count = broken ? Math.min(plan.cutAfter, plan.frames.length) : plan.frames.length;
  if (plan.prefix) await writeFlushed(ex, plan.prefix);
  for (let i = 0; i < count; i++) {
    if (i > 0 && behavior.chunkDelayMs) await sleep(behavior.chunkDelayMs, ex.signal);
    if (ex.signal.aborted || res.destroyed) return;
    await writeFlushed(ex, plan.frames[i]);
  }
  if (behavior.malformedStream) {
    if (behavior.chunkDelayMs) await sleep(behavior.chunkDelayMs, ex.signal);
    await writeFlushed(ex, plan.garbage);
    res.end();
    return;
  }
  if (behavior.dropMidStream) {
    if (behavior.chunkDelayMs) await sleep(behavior.chunkDelayMs, ex.signal);
    res.socket?.destroy();
    res.destroy();
    return;
  }
  if (plan.suffix) await writeFlushed(ex, plan.suffix);
  res.end();
}

export function sseFrame(data: unknown, event?: string): string {
  const payload = typeof data === 'string' ? data : JSON.stringify(data);
  return `${event ? `event: ${event}\n` : ''}data: ${payload}\n\n`;
}

// ---------------------------------------------------------------------------------------------------------------
// Small JSON helpers

export function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** The string form of a tool result given as an arbitrary value (gemini functionResponse.response and the like). */
export function toolResultText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (isObject(value)) {
    for (const key of ['output', 'result', 'content', 'text']) {
      if (typeof value[key] === 'string') return value[key];
    }
  }
  return JSON.stringify(value) ?? '';
}

/** The model name with a `models/` prefix removed. */
export function bareModel(model: string): string {
  return model.startsWith('models/') ? model.slice('models/'.length) : model;
}

export function modelKnown(ex: Exchange, model: string): boolean {
  return !ex.enforceModels || ex.models.includes(bareModel(model));
}

/** A finite number ≥ 1, else undefined. */
export function positiveInt(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 1 ? Math.floor(value) : undefined;
}

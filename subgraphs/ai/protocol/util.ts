import { randomBytes } from 'node:crypto';
import { ProtocolError, UpstreamFormatError, type ChatMessage, type ContentPart, type Usage, type VendorApi } from './types';

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function fail(message: string, param?: string): never {
  throw new ProtocolError(message, param);
}

/** The body itself must be a JSON object. */
export function bodyObj(body: unknown): Obj {
  if (!isObj(body)) fail('The request body must be a JSON object.');
  return body;
}

export function reqString(o: Obj, key: string, param = key): string {
  const v = o[key];
  if (typeof v !== 'string' || v.length === 0) fail(`'${param}' is required and must be a non-empty string.`, param);
  return v;
}

export function optNumber(o: Obj, key: string, param = key): number | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) fail(`'${param}' must be a number.`, param);
  return v;
}

export function optInt(o: Obj, key: string, param = key): number | undefined {
  const v = optNumber(o, key, param);
  if (v !== undefined && (!Number.isInteger(v) || v < 1)) fail(`'${param}' must be a positive integer.`, param);
  return v;
}

export function optBool(o: Obj, key: string, param = key): boolean | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') fail(`'${param}' must be a boolean.`, param);
  return v;
}

/** string | string[] (OpenAI `stop`) or string[] (others) → string[] | undefined. */
export function optStringList(v: unknown, param: string, allowSingle: boolean): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string' && allowSingle) return [v];
  if (!Array.isArray(v)) fail(`'${param}' must be ${allowSingle ? 'a string or ' : ''}an array of strings.`, param);
  for (let i = 0; i < v.length; i++) if (typeof v[i] !== 'string') fail(`'${param}[${i}]' must be a string.`, `${param}[${i}]`);
  return v.length ? (v as string[]) : undefined;
}

export function reqArray(o: Obj, key: string, param = key): unknown[] {
  const v = o[key];
  if (!Array.isArray(v)) fail(`'${param}' must be an array.`, param);
  return v;
}

/** Parses tool-call arguments JSON into an object; anything else (invalid JSON, arrays, scalars) → {}. */
export function argsObject(json: string): Obj {
  if (json.length === 0) return {};
  try {
    const v: unknown = JSON.parse(json);
    return isObj(v) ? v : {};
  } catch {
    return {};
  }
}

/** Appends a message, merging consecutive 'tool' messages (the canonical form). */
export function pushMessage(out: ChatMessage[], role: ChatMessage['role'], parts: ContentPart[]): void {
  if (parts.length === 0) return;
  const last = out[out.length - 1];
  if (role === 'tool' && last !== undefined && last.role === 'tool') {
    for (const p of parts) last.content.push(p);
    return;
  }
  out.push({ role, content: parts });
}

/** tool_call id → name, over the messages so far (for Gemini functionResponse names). */
export function toolNames(messages: ChatMessage[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    for (const p of m.content) if (p.type === 'tool_call') names.set(p.id, p.name);
  }
  return names;
}

export function zeroUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, cachedTokens: 0 };
}

export function mergeUsage(into: Usage, u: Partial<Usage>): void {
  if (u.inputTokens !== undefined) into.inputTokens = u.inputTokens;
  if (u.outputTokens !== undefined) into.outputTokens = u.outputTokens;
  if (u.cachedTokens !== undefined) into.cachedTokens = u.cachedTokens;
}

export function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function randomToken(n = 24): string {
  const bytes = randomBytes(n);
  let s = '';
  for (let i = 0; i < n; i++) s += ALNUM[bytes[i]! % 62];
  return s;
}

const ID_PREFIX: Record<VendorApi, string> = { openai: 'chatcmpl-', anthropic: 'msg_', gemini: '' };

/** A fresh response id in the vendor's style: chatcmpl-…, msg_…, or a bare Gemini responseId. */
export function newResponseId(api: VendorApi): string {
  return ID_PREFIX[api] + randomToken(24);
}

/** An id in the vendor's style, derived from `id` (another vendor's prefix replaced), or fresh if empty. */
export function vendorResponseId(api: VendorApi, id: string): string {
  if (!id) return newResponseId(api);
  const prefix = ID_PREFIX[api];
  if (prefix && id.startsWith(prefix)) return id;
  const bare = id.startsWith('chatcmpl-') ? id.slice(9) : id.startsWith('msg_') ? id.slice(4) : id;
  return prefix + bare;
}

/** A tool-call id Anthropic accepts (^[a-zA-Z0-9_-]+$): other characters become '_'. */
export function anthropicToolId(id: string): string {
  return /^[a-zA-Z0-9_-]+$/.test(id) ? id : id.replace(/[^a-zA-Z0-9_-]/g, '_') || 'toolu_0';
}

/** Joins the text of content blocks/parts ({text}) with '\n', skipping non-text items. */
export function joinTexts(items: unknown[], param: string, requireText: boolean): string {
  let s = '';
  for (let i = 0; i < items.length; i++) {
    const it = items[i];
    if (!isObj(it)) fail(`'${param}[${i}]' must be an object.`, `${param}[${i}]`);
    if (typeof it.text === 'string') {
      s = s.length ? s + '\n' + it.text : it.text;
    } else if (requireText) fail(`'${param}[${i}]' must be a text part.`, `${param}[${i}]`);
  }
  return s;
}

/** Seconds since the epoch. */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** An upstream body that must be an object. */
export function upstreamObj(body: unknown, what: string): Obj {
  if (!isObj(body)) throw new UpstreamFormatError(`The upstream ${what} is not a JSON object.`);
  return body;
}

/**
 * Cheap structural check of an SSE data payload that should be a JSON object: first and last
 * non-blank characters are '{' and '}' (catches cut, garbage or glued payloads without parsing).
 */
export function looksLikeObject(s: string): boolean {
  let i = 0;
  let j = s.length - 1;
  while (i <= j && s.charCodeAt(i) <= 32) i++;
  while (j >= i && s.charCodeAt(j) <= 32) j--;
  return i < j && s.charCodeAt(i) === 123 && s.charCodeAt(j) === 125;
}

/** The payload has `"key"` followed by ':' and `{` (i.e. a non-null object value), searching from the end. */
export function hasObjectKey(s: string, key: string): boolean {
  let i = s.lastIndexOf(key);
  while (i >= 0) {
    let j = i + key.length;
    while (s.charCodeAt(j) === 32) j++;
    if (s.charCodeAt(j) === 58) {
      j++;
      while (s.charCodeAt(j) === 32) j++;
      if (s.charCodeAt(j) === 123) return true;
    }
    i = i > 0 ? s.lastIndexOf(key, i - 1) : -1;
  }
  return false;
}

/** The object's first key is "error" (how OpenAI and Gemini put errors in a stream): `{"error":…`. */
export function startsWithErrorKey(s: string): boolean {
  let i = 0;
  while (s.charCodeAt(i) <= 32) i++;
  if (s.charCodeAt(i) !== 123) return false;
  i++;
  while (s.charCodeAt(i) <= 32) i++;
  return s.startsWith('"error"', i);
}

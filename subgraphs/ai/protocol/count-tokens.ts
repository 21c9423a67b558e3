/**
 * Token counting: a local estimate, and the two vendor endpoints that count
 * (Anthropic POST /v1/messages/count_tokens → {input_tokens}; Gemini models/{m}:countTokens → {totalTokens}).
 */
import { anthropicBody, parseAnthropicRequest } from './anthropic';
import { geminiBody, geminiModelName, geminiModelPath, parseGeminiRequest } from './gemini';
import type { ChatRequest } from './types';
import { bodyObj, isObj, num, upstreamObj } from './util';

/** The heuristic's ratio: about 4 characters of English text or JSON per token. */
export const CHARS_PER_TOKEN = 4;

/**
 * Estimates the prompt tokens of a request without a tokenizer: ceil(characters / 4) for the system
 * prompt, for each message (texts, tool-call names and argument JSON, tool-result names and content;
 * at least 1 token per message) and for the tool definitions (name, description and
 * JSON.stringify(parameters) of each). Typically within ±25% of the vendors' counts for English text;
 * use it for pre-flight budgets, not billing.
 */
export function estimateTokens(req: ChatRequest): number {
  let tokens = req.system ? Math.ceil(req.system.length / CHARS_PER_TOKEN) : 0;
  for (const m of req.messages) {
    let chars = 0;
    for (const p of m.content) {
      if (p.type === 'text') chars += p.text.length;
      else if (p.type === 'tool_call') chars += p.name.length + p.arguments.length;
      else chars += (p.name?.length ?? 0) + p.content.length;
    }
    tokens += Math.max(1, Math.ceil(chars / CHARS_PER_TOKEN));
  }
  if (req.tools) {
    let chars = 0;
    for (const t of req.tools) chars += t.name.length + (t.description?.length ?? 0) + JSON.stringify(t.parameters).length;
    tokens += Math.ceil(chars / CHARS_PER_TOKEN);
  }
  return tokens;
}

// ---------------------------------------------------------------- Anthropic

/** A client's /v1/messages/count_tokens body (a Messages body without max_tokens) → canonical. */
export function parseAnthropicCountTokensRequest(body: unknown): ChatRequest {
  return parseAnthropicRequest(body, { requireMaxTokens: false });
}

export function formatAnthropicCountTokensRequest(req: ChatRequest): { path: string; body: unknown } {
  return { path: '/v1/messages/count_tokens', body: { model: req.model, ...anthropicBody(req) } };
}

export function formatAnthropicCountTokensResponse(inputTokens: number): { input_tokens: number } {
  return { input_tokens: inputTokens };
}

export function parseAnthropicCountTokensResponse(body: unknown): number {
  return num(upstreamObj(body, 'count_tokens response').input_tokens);
}

// ---------------------------------------------------------------- Gemini

/**
 * A client's :countTokens body → canonical: either {generateContentRequest: {…}} (system instruction
 * and tools counted) or {contents} (what the Gemini SDK sends). The model comes from the path.
 */
export function parseGeminiCountTokensRequest(body: unknown, fromPath: { model?: string }): ChatRequest {
  const b = bodyObj(body);
  const inner = b.generateContentRequest ?? b.generate_content_request;
  return isObj(inner) ? parseGeminiRequest(inner, { model: fromPath.model ?? (inner.model as string | undefined) }) : parseGeminiRequest(b, fromPath);
}

/** Uses generateContentRequest so that the system instruction and tools are counted too. */
export function formatGeminiCountTokensRequest(req: ChatRequest): { path: string; body: unknown } {
  return {
    path: geminiModelPath(req.model, 'countTokens'),
    body: { generateContentRequest: { model: `models/${geminiModelName(req.model)}`, ...geminiBody(req) } },
  };
}

export function formatGeminiCountTokensResponse(totalTokens: number): { totalTokens: number } {
  return { totalTokens };
}

export function parseGeminiCountTokensResponse(body: unknown): number {
  return num(upstreamObj(body, 'countTokens response').totalTokens);
}

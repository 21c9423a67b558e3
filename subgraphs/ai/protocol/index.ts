/**
 * Pure protocol library of the AI gateway: the canonical chat model, and per vendor (openai = vendor-a,
 * anthropic = vendor-b, gemini = vendor-c) request/response translation, incremental stream
 * decoders/encoders, pass-through usage taps, error and model-list shapes, embeddings, token counting.
 */
export * from './types';
export { SseParser, parseSse, sseEvent, type SseEvent } from './sse';
export { openai } from './openai';
export { anthropic, ANTHROPIC_DEFAULT_MAX_TOKENS, ANTHROPIC_VERSION } from './anthropic';
export { gemini, geminiModelName } from './gemini';
export {
  CHARS_PER_TOKEN, estimateTokens,
  parseAnthropicCountTokensRequest, formatAnthropicCountTokensRequest, formatAnthropicCountTokensResponse, parseAnthropicCountTokensResponse,
  parseGeminiCountTokensRequest, formatGeminiCountTokensRequest, formatGeminiCountTokensResponse, parseGeminiCountTokensResponse,
} from './count-tokens';
export { newResponseId, vendorResponseId } from './util';

import { anthropic } from './anthropic';
import { gemini } from './gemini';
import { openai } from './openai';
import type { VendorApi, VendorProtocol } from './types';

/** The protocol of each vendor API. */
export const protocols: Readonly<Record<VendorApi, VendorProtocol>> = { openai, anthropic, gemini };

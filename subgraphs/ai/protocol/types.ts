/**
 * The canonical (vendor-neutral) model the gateway translates through.
 *
 * Naming: vendor-a = 'openai' (OpenAI Chat Completions), vendor-b = 'anthropic' (Anthropic Messages),
 * vendor-c = 'gemini' (Google Gemini API, v1beta).
 */

export type VendorApi = 'openai' | 'anthropic' | 'gemini';

export type ContentPart =
  | { type: 'text'; text: string }
  | { type: 'tool_call'; id: string; name: string; arguments: string /* JSON text */ }
  | { type: 'tool_result'; toolCallId: string; name?: string; content: string };

/**
 * 'tool' messages hold the tool_result parts answering the previous assistant turn's tool calls
 * (consecutive results are merged into one message); 'user' and 'assistant' hold text, and
 * assistant turns also tool_call parts.
 */
export interface ChatMessage {
  role: 'user' | 'assistant' | 'tool';
  content: ContentPart[];
}

export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

export interface ChatRequest {
  model: string;
  system?: string;
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stop?: string[];
  stream: boolean;
  /**
   * Extension: an OpenAI client asked for the final usage chunk (stream_options.include_usage).
   * Pass it to the OpenAI stream encoder; other vendors' clients always get usage.
   */
  includeUsage?: boolean;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'error';

/** inputTokens counts the whole prompt, cached part included; cachedTokens is that cached part. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
}

export interface ChatResponse {
  id: string;
  model: string;
  content: ContentPart[];
  finishReason: FinishReason;
  usage: Usage;
}

/**
 * Canonical stream events. `index` of tool calls is the ordinal of the call within the response
 * (0, 1, …), not a vendor block index. A decoder emits exactly one 'finish' (from its end() at the
 * latest, 'error' when the upstream stream was cut or malformed).
 */
export type StreamEvent =
  | { type: 'start'; id: string; model: string }
  | { type: 'text'; text: string }
  | { type: 'tool_call_start'; index: number; id: string; name: string }
  | { type: 'tool_call_delta'; index: number; arguments: string }
  | { type: 'finish'; finishReason: FinishReason }
  /** May arrive more than once; later values win per field. */
  | { type: 'usage'; usage: Partial<Usage> };

export interface EmbeddingRequest {
  model: string;
  inputs: string[];
  /** Extension: requested vector size (OpenAI `dimensions`, Gemini `outputDimensionality`). */
  dimensions?: number;
  /** Extension: OpenAI `encoding_format` the client asked for (its SDK asks for 'base64' by default). */
  encodingFormat?: 'float' | 'base64';
}

export interface EmbeddingResponse {
  model: string;
  vectors: number[][];
  usage: Usage;
}

/** A malformed client body: answer 400 with the vendor's error shape. */
export class ProtocolError extends Error {
  readonly status: number = 400;
  readonly param?: string;
  constructor(message: string, param?: string) {
    super(message);
    this.name = 'ProtocolError';
    if (param !== undefined) this.param = param;
  }
}

export type ErrorKind =
  | 'invalid_request'
  | 'authentication'
  | 'permission'
  | 'not_found'
  | 'rate_limit'
  | 'budget'
  | 'upstream'
  | 'overloaded'
  | 'timeout';

export interface ModelListEntry {
  id: string;
  displayName: string;
  createdAt: Date;
  ownedBy: string;
}

export interface StreamDecoder {
  push(chunk: Buffer | string): StreamEvent[];
  /** Flushes; emits finish 'error' if the stream never finished. */
  end(): StreamEvent[];
  /** Extension: the stream reached its vendor terminator. */
  complete(): boolean;
  /** Extension: a data line was not valid JSON (the decoder then emitted finish 'error' and stops). */
  malformed(): boolean;
}

export interface StreamEncoder {
  push(event: StreamEvent): string;
  end(): string;
}

export interface StreamEncoderMeta {
  id: string;
  model: string;
  /** OpenAI only: emit the final usage chunk (choices: []) — set from ChatRequest.includeUsage. */
  includeUsage?: boolean;
}

export interface UsageTap {
  push(chunk: Buffer | string): void;
  usage(): Usage;
  complete(): boolean;
  malformed(): boolean;
}

export interface VendorProtocol {
  api: VendorApi;
  parseChatRequest(body: unknown, fromPath?: { model?: string; stream?: boolean }): ChatRequest;
  formatChatRequest(req: ChatRequest): { path: string; body: unknown };
  parseChatResponse(body: unknown): ChatResponse;
  formatChatResponse(res: ChatResponse): unknown;
  createStreamDecoder(): StreamDecoder;
  createStreamEncoder(meta: StreamEncoderMeta): StreamEncoder;
  createUsageTap(): UsageTap;
  usageFromResponse(body: unknown): Usage;
  formatError(kind: ErrorKind, message: string): { status: number; body: unknown };
  formatModelList(models: ModelListEntry[]): unknown;
}

/** The upstream answered with a body this library cannot read: answer 502. */
export class UpstreamFormatError extends Error {
  readonly status: number = 502;
  constructor(message: string) {
    super(message);
    this.name = 'UpstreamFormatError';
  }
}

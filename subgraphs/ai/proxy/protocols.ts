import {
  CHARS_PER_TOKEN,
  estimateTokens,
  formatAnthropicCountTokensRequest,
  formatAnthropicCountTokensResponse,
  formatGeminiCountTokensRequest,
  formatGeminiCountTokensResponse,
  gemini,
  openai,
  parseAnthropicCountTokensRequest,
  parseAnthropicCountTokensResponse,
  parseGeminiCountTokensRequest,
  parseGeminiCountTokensResponse,
  protocols,
  type ChatRequest,
  type ChatResponse,
  type ContentPart,
  type EmbeddingRequest,
  type EmbeddingResponse,
  type StreamEvent,
  type Usage,
  type VendorApi,
} from '../protocol';

/** The vendor protocols by API name. */
export const PROTOCOLS = protocols;

/** Embeddings in one shape for the APIs that have them (Anthropic has none). */
export interface EmbeddingCodec {
  parseRequest(body: unknown, fromPath: { model?: string; action?: string }): EmbeddingRequest;
  formatRequest(req: EmbeddingRequest): { path: string; body: unknown };
  parseResponse(body: unknown, model: string): EmbeddingResponse;
  formatResponse(res: EmbeddingResponse, ctx: { action?: string; encodingFormat?: 'float' | 'base64' }): unknown;
}

export const EMBEDDINGS: Partial<Record<VendorApi, EmbeddingCodec>> = {
  openai: {
    parseRequest: (body) => openai.parseEmbeddingRequest(body),
    formatRequest: (req) => openai.formatEmbeddingRequest(req),
    parseResponse: (body, model) => {
      const res = openai.parseEmbeddingResponse(body);
      return res.model ? res : { ...res, model };
    },
    formatResponse: (res, ctx) => openai.formatEmbeddingResponse(res, { encodingFormat: ctx.encodingFormat }),
  },
  gemini: {
    parseRequest: (body, fromPath) =>
      fromPath.action === 'embedContent' ? gemini.parseEmbedContentRequest(body, fromPath) : gemini.parseBatchEmbedContentsRequest(body, fromPath),
    formatRequest: (req) => gemini.formatEmbeddingRequest(req),
    parseResponse: (body, model) => gemini.parseEmbeddingResponse(body, model),
    formatResponse: (res, ctx) => (ctx.action === 'embedContent' ? gemini.formatEmbedContentResponse(res) : gemini.formatBatchEmbedContentsResponse(res)),
  },
};

/** A count-tokens body of a client API → canonical. */
export function parseCountTokensRequest(api: VendorApi, body: unknown, fromPath: { model?: string }): ChatRequest {
  if (api === 'anthropic') return parseAnthropicCountTokensRequest(body);
  if (api === 'gemini') return parseGeminiCountTokensRequest(body, fromPath);
  return protocols[api].parseChatRequest(body);
}

/** The count-tokens answer of a client API. */
export function formatCountTokens(api: VendorApi, tokens: number): unknown {
  return api === 'gemini' ? formatGeminiCountTokensResponse(tokens) : formatAnthropicCountTokensResponse(tokens);
}

/** Upstream APIs with a count-tokens endpoint: how to ask, and how to read the answer. */
export const COUNT_TOKENS: Partial<Record<VendorApi, { format(req: ChatRequest): { path: string; body: unknown }; parse(body: unknown): number }>> = {
  anthropic: { format: formatAnthropicCountTokensRequest, parse: parseAnthropicCountTokensResponse },
  gemini: { format: formatGeminiCountTokensRequest, parse: parseGeminiCountTokensResponse },
};

/** Token estimate of a text (the protocol library's ratio); used only where no upstream count exists. */
export function estimateTextTokens(text: string): number {
  return text.length === 0 ? 0 : Math.max(1, Math.ceil(text.length / CHARS_PER_TOKEN));
}

/** Estimated prompt tokens of a chat request (the protocol library's heuristic). */
export const estimateChatTokens = estimateTokens;

/** A stream error the client's SDK raises, written after whatever the client already received. */
export function streamErrorFrame(api: VendorApi, message = 'The upstream model stream failed.'): string {
  // A leading blank line closes any event the upstream left half-written.
  switch (api) {
    case 'openai':
      return `\n\ndata: ${JSON.stringify({ error: { message, type: 'server_error', param: null, code: null } })}\n\n`;
    case 'anthropic':
      return `\n\nevent: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'api_error', message } })}\n\n`;
    case 'gemini':
      return `\n\ndata: ${JSON.stringify({ error: { code: 500, message, status: 'INTERNAL' } })}\n\n`;
  }
}

/**
 * Canonical stream events folded into the response they describe (for conversations, and for
 * the text a cut stream carried).
 */
export class ResponseAssembler {
  id = '';
  model = '';
  readonly content: ContentPart[] = [];
  finishReason: ChatResponse['finishReason'] = 'stop';
  readonly usage: Usage = { inputTokens: 0, outputTokens: 0, cachedTokens: 0 };
  /** Characters of text and tool arguments seen (for output estimates). */
  outputChars = 0;
  private readonly tools = new Map<number, Extract<ContentPart, { type: 'tool_call' }>>();

  push(event: StreamEvent): void {
    switch (event.type) {
      case 'start':
        this.id = event.id;
        this.model = event.model;
        break;
      case 'text': {
        this.outputChars += event.text.length;
        const last = this.content[this.content.length - 1];
        if (last && last.type === 'text') last.text += event.text;
        else this.content.push({ type: 'text', text: event.text });
        break;
      }
      case 'tool_call_start': {
        const part = { type: 'tool_call' as const, id: event.id, name: event.name, arguments: '' };
        this.tools.set(event.index, part);
        this.content.push(part);
        this.outputChars += event.name.length;
        break;
      }
      case 'tool_call_delta': {
        const part = this.tools.get(event.index);
        if (part) part.arguments += event.arguments;
        this.outputChars += event.arguments.length;
        break;
      }
      case 'finish':
        this.finishReason = event.finishReason;
        break;
      case 'usage':
        if (event.usage.inputTokens !== undefined) this.usage.inputTokens = event.usage.inputTokens;
        if (event.usage.outputTokens !== undefined) this.usage.outputTokens = event.usage.outputTokens;
        if (event.usage.cachedTokens !== undefined) this.usage.cachedTokens = event.usage.cachedTokens;
        break;
    }
  }

  pushAll(events: StreamEvent[]): void {
    for (const event of events) this.push(event);
  }

  response(fallbackModel: string): ChatResponse {
    return { id: this.id, model: this.model || fallbackModel, content: this.content, finishReason: this.finishReason, usage: { ...this.usage } };
  }
}

/**
 * vendor-b stand-in: the Anthropic Messages API (messages, count_tokens, models) as `@anthropic-ai/sdk` reads it.
 */
import {
  TOOL_CALL_ARGS,
  TOOL_CALL_ARGS_PARTS,
  inputTokensOf,
  isObject,
  modelKnown,
  planReply,
  positiveInt,
  randomId,
  sendJson,
  splitForStream,
  sseFrame,
  typeName,
  writeStream,
  type Conversation,
  type ErrorSpec,
  type Exchange,
  type ReplyPlan,
  type Vendor,
} from './stand-in-core';

export const ANTHROPIC_DEFAULT_MODELS: readonly string[] = ['claude-sonnet-4-6', 'claude-haiku-4-5', 'claude-opus-4-6'];

const ROLES = ['user', 'assistant', 'system'];

function defaultType(status: number): string {
  switch (status) {
    case 400:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 504:
      return 'timeout_error';
    case 529:
      return 'overloaded_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

function invalid(message: string): ErrorSpec {
  return { status: 400, message, type: 'invalid_request_error' };
}

function bearer(value: string | undefined): string | undefined {
  return /^Bearer\s+(.+)$/i.exec(value ?? '')?.[1]?.trim();
}

export const anthropicVendor: Vendor = {
  checkKey(ex, apiKey) {
    // The real API takes x-api-key; @anthropic-ai/sdk 1.x sends the key as `Authorization: Bearer`, so both count.
    const headerKey = ex.headers['x-api-key'];
    const key = (Array.isArray(headerKey) ? headerKey[0] : headerKey) ?? bearer(ex.headers.authorization);
    if (!key) return 'missing';
    return key === apiKey ? 'ok' : 'invalid';
  },

  authError(_ex, kind) {
    return { status: 401, message: kind === 'missing' ? 'x-api-key header is required' : 'invalid x-api-key', type: 'authentication_error' };
  },

  failure(status) {
    if (status === 429) {
      return {
        status,
        message: 'This request would exceed the rate limit for your organization of 50 requests per minute. Please try again later.',
        type: 'rate_limit_error',
      };
    }
    if (status === 529 || status === 503) return { status, message: 'Overloaded', type: status === 529 ? 'overloaded_error' : 'api_error' };
    if (status >= 500) return { status, message: 'Internal server error', type: 'api_error' };
    return { status, message: `stand-in failure ${status}`, type: defaultType(status) };
  },

  sendError(ex, error) {
    const requestId = randomId('req_', 24);
    sendJson(
      ex.res,
      error.status,
      { type: 'error', error: { type: error.type ?? defaultType(error.status), message: error.message }, request_id: requestId },
      { 'request-id': requestId, ...error.headers },
    );
  },

  async route(ex) {
    const { method, path } = ex;
    const known =
      (method === 'GET' && (path === '/v1/models' || path.startsWith('/v1/models/'))) ||
      (method === 'POST' && (path === '/v1/messages' || path === '/v1/messages/count_tokens'));
    if (!known) return anthropicVendor.sendError(ex, { status: 404, message: 'Not found', type: 'not_found_error' });
    if (!ex.headers['anthropic-version']) return anthropicVendor.sendError(ex, invalid('anthropic-version: header is required'));
    if (path === '/v1/models') return listModels(ex);
    if (path.startsWith('/v1/models/')) return getModel(ex, decodeURIComponent(path.slice('/v1/models/'.length)));
    if (path === '/v1/messages') return messages(ex);
    return countTokens(ex);
  },
};

function modelInfo(id: string) {
  return {
    type: 'model',
    id,
    display_name: id
      .split('-')
      .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
      .join(' '),
    created_at: '2025-01-01T00:00:00Z',
    capabilities: null,
    deprecated_at: null,
    lifecycle: 'active',
    line: null,
    max_input_tokens: 200_000,
    max_tokens: 64_000,
    retires_at: null,
  };
}

function listModels(ex: Exchange): void {
  const data = ex.models.map(modelInfo);
  sendJson(ex.res, 200, { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null }, { 'request-id': randomId('req_', 24) });
}

function getModel(ex: Exchange, id: string): void {
  if (!ex.models.includes(id)) return anthropicVendor.sendError(ex, { status: 404, message: `model: ${id}`, type: 'not_found_error' });
  sendJson(ex.res, 200, modelInfo(id));
}

function blocksOf(content: unknown): any[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content : [];
}

/** Text of a content value (string or blocks): text blocks only. */
function textOf(content: unknown): string {
  return blocksOf(content)
    .filter((block) => isObject(block) && block.type === 'text' && typeof block.text === 'string')
    .map((block) => block.text as string)
    .join(' ');
}

function toolResultsOf(content: unknown): string[] {
  return blocksOf(content)
    .filter((block) => isObject(block) && block.type === 'tool_result')
    .map((block) => textOf(block.content));
}

function systemTextOf(system: unknown): string {
  return typeof system === 'string' ? system : textOf(system);
}

function validate(ex: Exchange, forCount: boolean): ErrorSpec | undefined {
  if (ex.badJson) return invalid('There was an error parsing the body of your request. Please make sure the body is valid JSON.');
  const body = ex.body ?? {};
  if (body.model === undefined) return invalid('model: Field required');
  if (typeof body.model !== 'string') return invalid('model: Input should be a valid string');
  if (!forCount && body.max_tokens === undefined) return invalid('max_tokens: Field required');
  if (!forCount && (typeof body.max_tokens !== 'number' || body.max_tokens < 1)) return invalid('max_tokens: Input should be greater than or equal to 1');
  if (body.messages === undefined) return invalid('messages: Field required');
  if (!Array.isArray(body.messages)) return invalid('messages: Input should be a valid list');
  if (body.messages.length === 0) return invalid('messages: at least one message is required');
  if (body.system !== undefined && typeof body.system !== 'string' && !Array.isArray(body.system)) {
    return invalid('system: Input should be a valid string');
  }
  const messages: any[] = body.messages;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    if (!isObject(message)) return invalid(`messages.${i}: Input should be a valid dictionary or object to extract fields from`);
    if (message.role === undefined) return invalid(`messages.${i}.role: Field required`);
    if (!ROLES.includes(message.role)) return invalid(`messages.${i}.role: Input should be 'user' or 'assistant'`);
    if (message.content === undefined) return invalid(`messages.${i}.content: Field required`);
    if (typeof message.content !== 'string' && !Array.isArray(message.content)) {
      return invalid(`messages.${i}.content: Input should be a valid string or list, got ${typeName(message.content)}`);
    }
    const finalAssistant = i === messages.length - 1 && message.role === 'assistant';
    if (!finalAssistant && (message.content === '' || (Array.isArray(message.content) && message.content.length === 0))) {
      return invalid(`messages.${i}: all messages must have non-empty content except for the optional final assistant message`);
    }
    const blocks = blocksOf(message.content);
    for (let j = 0; j < blocks.length; j++) {
      const block = blocks[j];
      if (!isObject(block) || typeof block.type !== 'string') return invalid(`messages.${i}.content.${j}.type: Field required`);
      if (block.type === 'text' && Array.isArray(message.content) && (typeof block.text !== 'string' || block.text === '')) {
        return invalid('messages: text content blocks must be non-empty');
      }
    }
    // tool_result blocks answer tool_use blocks of the message right before.
    const previousUses = new Set(blocksOf(messages[i - 1]?.content).filter((b) => isObject(b) && b.type === 'tool_use').map((b) => b.id));
    for (let j = 0; j < blocks.length; j++) {
      const block = blocks[j];
      if (block.type !== 'tool_result') continue;
      if (message.role !== 'user') return invalid(`messages.${i}.content.${j}: tool_result blocks are only allowed in user messages`);
      if (!previousUses.has(block.tool_use_id)) {
        return invalid(
          `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(block.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
        );
      }
    }
    // tool_use blocks must be answered by tool_result blocks in the next message.
    const uses = blocks.filter((b) => b.type === 'tool_use').map((b) => b.id as string);
    if (uses.length > 0 && i + 1 < messages.length) {
      const answered = new Set(blocksOf(messages[i + 1].content).filter((b) => isObject(b) && b.type === 'tool_result').map((b) => b.tool_use_id));
      const missing = uses.filter((id) => !answered.has(id));
      if (missing.length > 0) {
        return invalid(
          `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
        );
      }
    }
  }
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return invalid('tools: Input should be a valid list');
    for (let i = 0; i < body.tools.length; i++) {
      const tool = body.tools[i];
      if (!isObject(tool) || typeof tool.name !== 'string') return invalid(`tools.${i}.name: Field required`);
      if ((tool.type === undefined || tool.type === 'custom') && !isObject(tool.input_schema)) return invalid(`tools.${i}.custom.input_schema: Field required`);
    }
  }
  if (!modelKnown(ex, body.model)) return { status: 404, message: `model: ${body.model}`, type: 'not_found_error' };
  return undefined;
}

function conversationOf(body: any): Conversation {
  const messages: any[] = body.messages;
  const systemTexts: string[] = [];
  const countedTexts: string[] = [];
  const bodySystem = body.system === undefined ? '' : systemTextOf(body.system);
  if (bodySystem !== '') {
    systemTexts.push(bodySystem);
    countedTexts.push(bodySystem);
  }
  let lastUserText = '';
  for (const message of messages) {
    const text = textOf(message.content);
    countedTexts.push(text, ...toolResultsOf(message.content));
    if (message.role === 'system') systemTexts.push(text);
    if (message.role === 'user' && blocksOf(message.content).some((b) => isObject(b) && b.type === 'text')) lastUserText = text;
  }
  const last = messages[messages.length - 1];
  const tools: any[] = Array.isArray(body.tools) ? body.tools : [];
  const firstTool = tools.find((tool) => isObject(tool) && typeof tool.name === 'string');
  return {
    systemText: systemTexts.join('\n'),
    countedTexts,
    messageCount: messages.length + (bodySystem !== '' ? 1 : 0),
    lastRole: last.role === 'user' ? 'user' : last.role === 'assistant' ? 'assistant' : 'other',
    lastText: textOf(last.content),
    lastToolResults: last.role === 'user' ? toolResultsOf(last.content) : [],
    lastUserText,
    firstToolName: firstTool?.name,
    toolsDisabled: isObject(body.tool_choice) && body.tool_choice.type === 'none',
    maxOutputTokens: positiveInt(body.max_tokens),
  };
}

function usageOf(plan: ReplyPlan, outputTokens: number) {
  return {
    input_tokens: plan.inputTokens - plan.cachedTokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: plan.cachedTokens,
    cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: null,
    server_tool_use: null,
    service_tier: 'standard',
    inference_geo: null,
    speed: null,
  };
}

function stopReason(plan: ReplyPlan): 'end_turn' | 'max_tokens' | 'tool_use' {
  return plan.kind === 'tool' ? 'tool_use' : plan.truncated ? 'max_tokens' : 'end_turn';
}

async function messages(ex: Exchange): Promise<void> {
  const error = validate(ex, false);
  if (error) return anthropicVendor.sendError(ex, error);
  const body = ex.body;
  const plan = planReply(conversationOf(body), ex.behavior);
  const id = randomId('msg_', 24);
  const toolUseId = randomId('toolu_', 24);
  const model: string = body.model;
  const headers = { 'request-id': randomId('req_', 24) };
  const message = (content: unknown[], stop: string | null, usage: unknown) => ({
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stop,
    stop_sequence: null,
    stop_details: null,
    container: null,
    diagnostics: null,
    usage,
  });

  if (body.stream !== true) {
    const content =
      plan.kind === 'tool'
        ? [{ type: 'tool_use', id: toolUseId, name: plan.toolName, input: { ...TOOL_CALL_ARGS }, caller: { type: 'direct' } }]
        : [{ type: 'text', text: plan.text, citations: null }];
    sendJson(ex.res, 200, message(content, stopReason(plan), usageOf(plan, plan.outputTokens)), headers);
    return;
  }

  const frames: string[] = [];
  const event = (type: string, data: Record<string, unknown>) => frames.push(sseFrame({ type, ...data }, type));
  event('message_start', { message: message([], null, usageOf(plan, 1)) });
  if (plan.kind === 'tool') {
    event('content_block_start', { index: 0, content_block: { type: 'tool_use', id: toolUseId, name: plan.toolName, input: {}, caller: { type: 'direct' } } });
    frames.push(sseFrame({ type: 'ping' }, 'ping'));
    for (const part of TOOL_CALL_ARGS_PARTS) event('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: part } });
  } else {
    event('content_block_start', { index: 0, content_block: { type: 'text', text: '', citations: null } });
    frames.push(sseFrame({ type: 'ping' }, 'ping'));
    for (const piece of splitForStream(plan.text)) event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: piece } });
  }
  event('content_block_stop', { index: 0 });
  const usage = usageOf(plan, plan.outputTokens);
  event('message_delta', {
    delta: { stop_reason: stopReason(plan), stop_sequence: null, stop_details: null, container: null },
    usage: {
      input_tokens: usage.input_tokens,
      cache_creation_input_tokens: usage.cache_creation_input_tokens,
      cache_read_input_tokens: usage.cache_read_input_tokens,
      output_tokens: usage.output_tokens,
      output_tokens_details: null,
      server_tool_use: null,
    },
  });
  event('message_stop', {});
  await writeStream(ex, {
    contentType: 'text/event-stream; charset=utf-8',
    frames,
    cutAfter: 4, // message_start, content_block_start, ping, first delta
    garbage: 'event: content_block_delta\ndata: {not json\n\n',
    headers,
  });
}

function countTokens(ex: Exchange): void {
  const error = validate(ex, true);
  if (error) return anthropicVendor.sendError(ex, error);
  sendJson(ex.res, 200, { input_tokens: inputTokensOf(conversationOf(ex.body)) }, { 'request-id': randomId('req_', 24) });
}

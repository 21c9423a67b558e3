/**
 * vendor-b: the Anthropic Messages API (paths relative to its base URL, e.g. https://api.anthropic.com).
 */
import type {
  ChatMessage, ChatRequest, ChatResponse, ContentPart, ErrorKind, ModelListEntry, ToolChoice, ToolDefinition, Usage,
  VendorProtocol,
} from './types';
import {
  anthropicFinish, anthropicUsageIn, anthropicUsageOut, createAnthropicDecoder, createAnthropicEncoder, createAnthropicTap,
  toAnthropicStop,
} from './anthropic-stream';
import {
  anthropicToolId, argsObject, bodyObj, fail, isObj, joinTexts, optBool, optInt, optNumber, optStringList, pushMessage,
  reqArray, reqString, upstreamObj, vendorResponseId, type Obj,
} from './util';

/** Anthropic requires max_tokens; requests translated from vendors where it is optional get this. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

/**
 * The `anthropic-version` header the upstream bodies of this module are shaped for (the one the
 * installed @anthropic-ai/sdk sends). Its Messages API has no temperature/top_p any more, so
 * formatChatRequest leaves them out; parseChatRequest still reads them from older clients.
 */
export const ANTHROPIC_VERSION = '2026-10-21';

// ---------------------------------------------------------------- requests

/** Also used for /v1/messages/count_tokens bodies (no max_tokens there). */
export function parseAnthropicRequest(body: unknown, opts: { requireMaxTokens: boolean }): ChatRequest {
  const b = bodyObj(body);
  const model = reqString(b, 'model');
  const raw = reqArray(b, 'messages');
  let system: string | undefined;
  if (b.system !== undefined && b.system !== null) system = systemText(b.system, 'system');
  const messages: ChatMessage[] = [];
  let names: Map<string, string> | undefined;
  for (let i = 0; i < raw.length; i++) {
    const m = raw[i];
    const p = `messages[${i}]`;
    if (!isObj(m)) fail(`'${p}' must be an object.`, p);
    const role = m.role;
    if (role === 'system') {
      const text = systemText(m.content, `${p}.content`);
      system = system === undefined ? text : system + '\n\n' + text;
      continue;
    }
    if (role !== 'user' && role !== 'assistant') fail(`Unknown or unsupported role ${JSON.stringify(role)}.`, `${p}.role`);
    const c = m.content;
    if (typeof c === 'string') {
      pushMessage(messages, role, [{ type: 'text', text: c }]);
      continue;
    }
    if (!Array.isArray(c)) fail(`'${p}.content' must be a string or an array of content blocks.`, `${p}.content`);
    // A user turn may mix tool results and text: results become a 'tool' message, text a 'user' one, in order.
    let parts: ContentPart[] = [];
    let kind: ChatMessage['role'] = role;
    for (let j = 0; j < c.length; j++) {
      const blk = c[j];
      const bp = `${p}.content[${j}]`;
      if (!isObj(blk)) fail(`'${bp}' must be an object.`, bp);
      let part: ContentPart;
      let partKind: ChatMessage['role'] = role;
      switch (blk.type) {
        case 'text':
          if (typeof blk.text !== 'string') fail(`'${bp}.text' must be a string.`, `${bp}.text`);
          part = { type: 'text', text: blk.text };
          break;
        case 'tool_use': {
          if (role !== 'assistant') fail(`tool_use blocks belong to assistant turns.`, `${bp}.type`);
          const id = reqString(blk, 'id', `${bp}.id`);
          const name = reqString(blk, 'name', `${bp}.name`);
          part = { type: 'tool_call', id, name, arguments: JSON.stringify(blk.input ?? {}) };
          (names ??= new Map()).set(id, name);
          break;
        }
        case 'tool_result': {
          if (role !== 'user') fail(`tool_result blocks belong to user turns.`, `${bp}.type`);
          const toolCallId = reqString(blk, 'tool_use_id', `${bp}.tool_use_id`);
          const rc = blk.content;
          const content = rc === undefined || rc === null ? '' : typeof rc === 'string' ? rc
            : Array.isArray(rc) ? joinTexts(rc, `${bp}.content`, true)
            : fail(`'${bp}.content' must be a string or an array of text blocks.`, `${bp}.content`);
          const name = names?.get(toolCallId);
          part = name === undefined ? { type: 'tool_result', toolCallId, content } : { type: 'tool_result', toolCallId, name, content };
          partKind = 'tool';
          break;
        }
        case 'thinking':
        case 'redacted_thinking':
          continue; // not translatable; dropped
        default:
          fail(`Content block type ${JSON.stringify(blk.type)} is not supported.`, `${bp}.type`);
      }
      if (partKind !== kind && parts.length) {
        pushMessage(messages, kind, parts);
        parts = [];
      }
      kind = partKind;
      parts.push(part);
    }
    pushMessage(messages, kind, parts);
  }
  const req: ChatRequest = { model, messages, stream: optBool(b, 'stream') === true };
  if (system !== undefined) req.system = system;
  const maxTokens = optInt(b, 'max_tokens');
  if (maxTokens !== undefined) req.maxTokens = maxTokens;
  else if (opts.requireMaxTokens) fail(`'max_tokens' is required.`, 'max_tokens');
  if (b.tools !== undefined && b.tools !== null) {
    const tools = parseTools(b.tools);
    if (tools.length) req.tools = tools;
  }
  const choice = parseToolChoice(b.tool_choice);
  if (choice !== undefined) req.toolChoice = choice;
  const temperature = optNumber(b, 'temperature');
  if (temperature !== undefined) req.temperature = temperature;
  const topP = optNumber(b, 'top_p');
  if (topP !== undefined) req.topP = topP;
  const stop = optStringList(b.stop_sequences, 'stop_sequences', false);
  if (stop !== undefined) req.stop = stop;
  return req;
}

function systemText(v: unknown, param: string): string {
  if (typeof v === 'string') return v;
  if (!Array.isArray(v)) fail(`'${param}' must be a string or an array of text blocks.`, param);
  return joinTexts(v, param, true);
}

function parseTools(v: unknown): ToolDefinition[] {
  if (!Array.isArray(v)) fail(`'tools' must be an array.`, 'tools');
  const tools: ToolDefinition[] = [];
  for (let i = 0; i < v.length; i++) {
    const t = v[i];
    const p = `tools[${i}]`;
    if (!isObj(t)) fail(`'${p}' must be an object.`, p);
    if (t.type !== undefined && t.type !== null && t.type !== 'custom') fail(`Tool type ${JSON.stringify(t.type)} is not supported (custom tools only).`, `${p}.type`);
    const name = reqString(t, 'name', `${p}.name`);
    if (!isObj(t.input_schema)) fail(`'${p}.input_schema' must be a JSON Schema object.`, `${p}.input_schema`);
    const def: ToolDefinition = { name, parameters: t.input_schema };
    if (typeof t.description === 'string') def.description = t.description;
    tools.push(def);
  }
  return tools;
}

function parseToolChoice(v: unknown): ToolChoice | undefined {
  if (v === undefined || v === null) return undefined;
  if (isObj(v)) {
    switch (v.type) {
      case 'auto': return 'auto';
      case 'any': return 'required';
      case 'none': return 'none';
      case 'tool':
        if (typeof v.name === 'string') return { name: v.name };
    }
  }
  return fail(`'tool_choice' must be {type:'auto'|'any'|'none'} or {type:'tool',name}.`, 'tool_choice');
}

/** Canonical → Messages API body (without model/max_tokens/stream); shared with count_tokens. */
export function anthropicBody(req: ChatRequest): Obj {
  const messages: Array<{ role: 'user' | 'assistant'; content: Obj[] | string }> = [];
  for (const m of req.messages) {
    const role = m.role === 'assistant' ? 'assistant' : 'user';
    const blocks: Obj[] = [];
    for (const p of m.content) {
      if (p.type === 'text') {
        if (p.text.length) blocks.push({ type: 'text', text: p.text });
      } else if (p.type === 'tool_call') {
        blocks.push({ type: 'tool_use', id: anthropicToolId(p.id), name: p.name, input: argsObject(p.arguments) });
      } else blocks.push({ type: 'tool_result', tool_use_id: anthropicToolId(p.toolCallId), content: p.content });
    }
    if (!blocks.length) continue;
    const last = messages[messages.length - 1];
    // Same-role turns are merged (tool results + the user's next text form one user turn).
    if (last !== undefined && last.role === role) (last.content as Obj[]).push(...blocks);
    else messages.push({ role, content: blocks });
  }
  for (const m of messages) {
    const c = m.content as Obj[];
    if (c.length === 1 && c[0]!.type === 'text') m.content = c[0]!.text as string;
  }
  const body: Obj = { messages };
  if (req.system !== undefined && req.system.length) body.system = req.system;
  if (req.tools?.length) {
    body.tools = req.tools.map((t) => {
      const tool: Obj = { name: t.name };
      if (t.description !== undefined) tool.description = t.description;
      tool.input_schema = t.parameters;
      return tool;
    });
  }
  const tc = req.toolChoice;
  if (tc !== undefined) {
    body.tool_choice = tc === 'auto' ? { type: 'auto' } : tc === 'none' ? { type: 'none' } : tc === 'required' ? { type: 'any' } : { type: 'tool', name: tc.name };
  }
  return body;
}

function formatChatRequest(req: ChatRequest): { path: string; body: unknown } {
  const rest = anthropicBody(req);
  // temperature/top_p: not part of the Messages API at ANTHROPIC_VERSION, so not sent.
  const body: Obj = { model: req.model, max_tokens: req.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS, ...rest };
  if (req.stop !== undefined) body.stop_sequences = req.stop;
  if (req.stream) body.stream = true;
  return { path: '/v1/messages', body };
}

// ---------------------------------------------------------------- responses

function parseChatResponse(body: unknown): ChatResponse {
  const b = upstreamObj(body, 'message');
  const content: ContentPart[] = [];
  if (Array.isArray(b.content)) {
    for (const blk of b.content) {
      if (!isObj(blk)) continue;
      if (blk.type === 'text' && typeof blk.text === 'string') content.push({ type: 'text', text: blk.text });
      else if (blk.type === 'tool_use') {
        content.push({
          type: 'tool_call',
          id: typeof blk.id === 'string' ? blk.id : `toolu_${content.length}`,
          name: typeof blk.name === 'string' ? blk.name : '',
          arguments: JSON.stringify(blk.input ?? {}),
        });
      }
    }
  }
  return {
    id: typeof b.id === 'string' ? b.id : '',
    model: typeof b.model === 'string' ? b.model : '',
    content,
    finishReason: anthropicFinish(b.stop_reason),
    usage: anthropicUsageIn(b.usage),
  };
}

function formatChatResponse(res: ChatResponse): unknown {
  const content: Obj[] = [];
  for (const p of res.content) {
    if (p.type === 'text') content.push({ type: 'text', text: p.text, citations: null });
    else if (p.type === 'tool_call') {
      content.push({ type: 'tool_use', id: anthropicToolId(p.id), name: p.name, input: argsObject(p.arguments), caller: { type: 'direct' } });
    }
  }
  return {
    id: vendorResponseId('anthropic', res.id),
    type: 'message',
    role: 'assistant',
    model: res.model,
    content,
    stop_reason: toAnthropicStop(res.finishReason),
    stop_sequence: null,
    stop_details: null,
    container: null,
    diagnostics: null,
    usage: anthropicUsageOut(res.usage),
  };
}

// ---------------------------------------------------------------- errors, models

/** Anthropic answers overloaded_error with HTTP 529 (its SDK maps 529 to OverloadedError). */
const ERRORS: Record<ErrorKind, [status: number, type: string]> = {
  invalid_request: [400, 'invalid_request_error'],
  authentication: [401, 'authentication_error'],
  permission: [403, 'permission_error'],
  not_found: [404, 'not_found_error'],
  rate_limit: [429, 'rate_limit_error'],
  budget: [402, 'billing_error'],
  upstream: [502, 'api_error'],
  overloaded: [529, 'overloaded_error'],
  timeout: [504, 'timeout_error'],
};

function formatError(kind: ErrorKind, message: string): { status: number; body: unknown } {
  const [status, type] = ERRORS[kind];
  return { status, body: { type: 'error', error: { type, message }, request_id: null } };
}

function formatModelList(models: ModelListEntry[]): unknown {
  const data = models.map((m) => ({ type: 'model', id: m.id, display_name: m.displayName, created_at: m.createdAt.toISOString() }));
  return { data, has_more: false, first_id: data.length ? data[0]!.id : null, last_id: data.length ? data[data.length - 1]!.id : null };
}

// ---------------------------------------------------------------- the protocol object

const protocol = {
  api: 'anthropic' as const,
  parseChatRequest: (body: unknown): ChatRequest => parseAnthropicRequest(body, { requireMaxTokens: true }),
  formatChatRequest,
  parseChatResponse,
  formatChatResponse,
  createStreamDecoder: createAnthropicDecoder,
  createStreamEncoder: createAnthropicEncoder,
  createUsageTap: createAnthropicTap,
  usageFromResponse: (body: unknown): Usage => anthropicUsageIn(isObj(body) ? body.usage : undefined),
  formatError,
  formatModelList,
};

/** vendor-b protocol (no embeddings API). */
export const anthropic: typeof protocol & VendorProtocol = protocol;

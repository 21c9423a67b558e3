/**
 * vendor-a: the OpenAI Chat Completions and Embeddings APIs (paths relative to a base URL ending in /v1).
 */
import type {
  ChatMessage, ChatRequest, ChatResponse, ContentPart, EmbeddingRequest, EmbeddingResponse, ErrorKind,
  FinishReason, ModelListEntry, ToolChoice, ToolDefinition, Usage, VendorProtocol,
} from './types';
import {
  createOpenAIDecoder, createOpenAIEncoder, createOpenAITap, openaiUsageIn, openaiUsageOut, toOpenAIFinish, openaiFinish,
} from './openai-stream';
import {
  bodyObj, fail, isObj, num, nowSeconds, optBool, optInt, optNumber, optStringList, pushMessage, reqArray,
  reqString, upstreamObj, vendorResponseId, type Obj,
} from './util';

// ---------------------------------------------------------------- requests

function parseChatRequest(body: unknown): ChatRequest {
  const b = bodyObj(body);
  const model = reqString(b, 'model');
  const raw = reqArray(b, 'messages');
  const messages: ChatMessage[] = [];
  let system: string | undefined;
  let names: Map<string, string> | undefined;
  for (let i = 0; i < raw.length; i++) {
    const m = raw[i];
    const p = `messages[${i}]`;
    if (!isObj(m)) fail(`'${p}' must be an object.`, p);
    switch (m.role) {
      case 'system':
      case 'developer': {
        const text = textContent(m.content, `${p}.content`);
        system = system === undefined ? text : system + '\n\n' + text;
        break;
      }
      case 'user':
        pushMessage(messages, 'user', userParts(m.content, `${p}.content`));
        break;
      case 'assistant': {
        const parts: ContentPart[] = [];
        const c = m.content;
        if (typeof c === 'string') {
          if (c.length) parts.push({ type: 'text', text: c });
        } else if (Array.isArray(c)) {
          for (let j = 0; j < c.length; j++) {
            const part = c[j];
            const pp = `${p}.content[${j}]`;
            if (!isObj(part)) fail(`'${pp}' must be an object.`, pp);
            if (part.type === 'text' && typeof part.text === 'string') parts.push({ type: 'text', text: part.text });
            else if (part.type !== 'refusal') fail(`'${pp}' must be a text or refusal part.`, `${pp}.type`);
          }
        } else if (c !== null && c !== undefined) {
          fail(`'${p}.content' must be a string, an array of content parts or null.`, `${p}.content`);
        }
        const calls = m.tool_calls;
        if (calls !== undefined && calls !== null) {
          if (!Array.isArray(calls)) fail(`'${p}.tool_calls' must be an array.`, `${p}.tool_calls`);
          for (let j = 0; j < calls.length; j++) {
            const tc = calls[j];
            const tp = `${p}.tool_calls[${j}]`;
            if (!isObj(tc)) fail(`'${tp}' must be an object.`, tp);
            if (tc.type !== undefined && tc.type !== 'function') fail(`Only function tool calls are supported.`, `${tp}.type`);
            const id = reqString(tc, 'id', `${tp}.id`);
            const fn = tc.function;
            if (!isObj(fn)) fail(`'${tp}.function' must be an object.`, `${tp}.function`);
            const name = reqString(fn, 'name', `${tp}.function.name`);
            const args = fn.arguments ?? '';
            if (typeof args !== 'string') fail(`'${tp}.function.arguments' must be a string.`, `${tp}.function.arguments`);
            parts.push({ type: 'tool_call', id, name, arguments: args });
            (names ??= new Map()).set(id, name);
          }
        }
        pushMessage(messages, 'assistant', parts);
        break;
      }
      case 'tool': {
        const toolCallId = reqString(m, 'tool_call_id', `${p}.tool_call_id`);
        const content = textContent(m.content, `${p}.content`);
        const name = names?.get(toolCallId);
        const part: ContentPart = name === undefined
          ? { type: 'tool_result', toolCallId, content }
          : { type: 'tool_result', toolCallId, name, content };
        pushMessage(messages, 'tool', [part]);
        break;
      }
      default:
        fail(`Unknown or unsupported role ${JSON.stringify(m.role)}.`, `${p}.role`);
    }
  }
  const n = optNumber(b, 'n');
  if (n !== undefined && n !== 1) fail(`Only n = 1 is supported.`, 'n');
  const req: ChatRequest = { model, messages, stream: optBool(b, 'stream') === true };
  if (system !== undefined) req.system = system;
  if (b.tools !== undefined && b.tools !== null) {
    const tools = parseTools(b.tools);
    if (tools.length) req.tools = tools;
  }
  const choice = parseToolChoice(b.tool_choice);
  if (choice !== undefined) req.toolChoice = choice;
  const maxTokens = optInt(b, 'max_completion_tokens') ?? optInt(b, 'max_tokens');
  if (maxTokens !== undefined) req.maxTokens = maxTokens;
  const temperature = optNumber(b, 'temperature');
  if (temperature !== undefined) req.temperature = temperature;
  const topP = optNumber(b, 'top_p');
  if (topP !== undefined) req.topP = topP;
  const stop = optStringList(b.stop, 'stop', true);
  if (stop !== undefined) req.stop = stop;
  if (req.stream && isObj(b.stream_options) && b.stream_options.include_usage === true) req.includeUsage = true;
  return req;
}

/** string | text parts → one string (system, developer and tool messages). */
function textContent(c: unknown, param: string): string {
  if (typeof c === 'string') return c;
  if (!Array.isArray(c)) fail(`'${param}' must be a string or an array of text parts.`, param);
  let s = '';
  for (let j = 0; j < c.length; j++) {
    const part = c[j];
    if (!isObj(part) || part.type !== 'text' || typeof part.text !== 'string') fail(`'${param}[${j}]' must be a text part.`, `${param}[${j}]`);
    s = j === 0 ? part.text : s + '\n' + part.text;
  }
  return s;
}

function userParts(c: unknown, param: string): ContentPart[] {
  if (typeof c === 'string') return [{ type: 'text', text: c }];
  if (!Array.isArray(c)) fail(`'${param}' must be a string or an array of content parts.`, param);
  const parts: ContentPart[] = [];
  for (let j = 0; j < c.length; j++) {
    const part = c[j];
    const pp = `${param}[${j}]`;
    if (!isObj(part)) fail(`'${pp}' must be an object.`, pp);
    if (part.type !== 'text') fail(`Content part type ${JSON.stringify(part.type)} is not supported (text only).`, `${pp}.type`);
    if (typeof part.text !== 'string') fail(`'${pp}.text' must be a string.`, `${pp}.text`);
    parts.push({ type: 'text', text: part.text });
  }
  return parts;
}

function parseTools(v: unknown): ToolDefinition[] {
  if (!Array.isArray(v)) fail(`'tools' must be an array.`, 'tools');
  const tools: ToolDefinition[] = [];
  for (let i = 0; i < v.length; i++) {
    const t = v[i];
    const p = `tools[${i}]`;
    if (!isObj(t)) fail(`'${p}' must be an object.`, p);
    if (t.type !== 'function') fail(`Only function tools are supported.`, `${p}.type`);
    const fn = t.function;
    if (!isObj(fn)) fail(`'${p}.function' must be an object.`, `${p}.function`);
    const name = reqString(fn, 'name', `${p}.function.name`);
    const params = fn.parameters ?? { type: 'object', properties: {} };
    if (!isObj(params)) fail(`'${p}.function.parameters' must be a JSON Schema object.`, `${p}.function.parameters`);
    const def: ToolDefinition = { name, parameters: params };
    if (typeof fn.description === 'string') def.description = fn.description;
    tools.push(def);
  }
  return tools;
}

function parseToolChoice(v: unknown): ToolChoice | undefined {
  if (v === undefined || v === null) return undefined;
  if (v === 'auto' || v === 'none' || v === 'required') return v;
  if (isObj(v)) {
    if (v.type === 'function' && isObj(v.function) && typeof v.function.name === 'string') return { name: v.function.name };
    // allowed_tools narrows the set; the canonical model keeps only its mode.
    if (v.type === 'allowed_tools' && isObj(v.allowed_tools)) return v.allowed_tools.mode === 'required' ? 'required' : 'auto';
  }
  return fail(`'tool_choice' must be 'auto', 'none', 'required' or {type:'function',function:{name}}.`, 'tool_choice');
}

function formatChatRequest(req: ChatRequest): { path: string; body: unknown } {
  const messages: Obj[] = [];
  if (req.system !== undefined) messages.push({ role: 'system', content: req.system });
  for (const m of req.messages) {
    let texts: string[] | undefined;
    let calls: Obj[] | undefined;
    for (const p of m.content) {
      if (p.type === 'text') (texts ??= []).push(p.text);
      else if (p.type === 'tool_call') {
        (calls ??= []).push({ id: p.id, type: 'function', function: { name: p.name, arguments: p.arguments || '{}' } });
      } else messages.push({ role: 'tool', tool_call_id: p.toolCallId, content: p.content });
    }
    if (m.role === 'assistant') {
      if (texts === undefined && calls === undefined) continue;
      const msg: Obj = { role: 'assistant', content: texts === undefined ? null : texts.length === 1 ? texts[0] : texts.map(textPart) };
      if (calls !== undefined) msg.tool_calls = calls;
      messages.push(msg);
    } else if (texts !== undefined) {
      messages.push({ role: 'user', content: texts.length === 1 ? texts[0] : texts.map(textPart) });
    }
  }
  const body: Obj = { model: req.model, messages };
  if (req.tools?.length) {
    body.tools = req.tools.map((t) => {
      const fn: Obj = { name: t.name };
      if (t.description !== undefined) fn.description = t.description;
      fn.parameters = t.parameters;
      return { type: 'function', function: fn };
    });
  }
  if (req.toolChoice !== undefined) {
    body.tool_choice = typeof req.toolChoice === 'string' ? req.toolChoice : { type: 'function', function: { name: req.toolChoice.name } };
  }
  if (req.maxTokens !== undefined) body.max_completion_tokens = req.maxTokens;
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.stop !== undefined) body.stop = req.stop;
  if (req.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return { path: '/chat/completions', body };
}

function textPart(text: string): Obj {
  return { type: 'text', text };
}

// ---------------------------------------------------------------- responses

function parseChatResponse(body: unknown): ChatResponse {
  const b = upstreamObj(body, 'chat completion');
  const content: ContentPart[] = [];
  let finishReason: FinishReason = 'stop';
  const choice = Array.isArray(b.choices) ? b.choices[0] : undefined;
  if (isObj(choice)) {
    finishReason = openaiFinish(choice.finish_reason);
    const msg = choice.message;
    if (isObj(msg)) {
      if (typeof msg.content === 'string' && msg.content.length) content.push({ type: 'text', text: msg.content });
      else if (typeof msg.refusal === 'string' && msg.refusal.length) content.push({ type: 'text', text: msg.refusal });
      if (Array.isArray(msg.tool_calls)) {
        for (const tc of msg.tool_calls) {
          if (!isObj(tc) || !isObj(tc.function)) continue;
          const fn = tc.function;
          content.push({
            type: 'tool_call',
            id: typeof tc.id === 'string' ? tc.id : `call_${content.length}`,
            name: typeof fn.name === 'string' ? fn.name : '',
            arguments: typeof fn.arguments === 'string' ? fn.arguments : '',
          });
        }
      }
    }
  }
  return {
    id: typeof b.id === 'string' ? b.id : '',
    model: typeof b.model === 'string' ? b.model : '',
    content,
    finishReason,
    usage: openaiUsageIn(b.usage),
  };
}

function formatChatResponse(res: ChatResponse): unknown {
  let text: string | null = null;
  let calls: Obj[] | undefined;
  for (const p of res.content) {
    if (p.type === 'text') text = text === null ? p.text : text + p.text;
    else if (p.type === 'tool_call') {
      (calls ??= []).push({ id: p.id, type: 'function', function: { name: p.name, arguments: p.arguments || '{}' } });
    }
  }
  const message: Obj = { role: 'assistant', content: text, refusal: null, annotations: [] };
  if (calls !== undefined) message.tool_calls = calls;
  return {
    id: vendorResponseId('openai', res.id),
    object: 'chat.completion',
    created: nowSeconds(),
    model: res.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: toOpenAIFinish(res.finishReason) }],
    usage: openaiUsageOut(res.usage),
  };
}

// ---------------------------------------------------------------- errors, models

const ERRORS: Record<ErrorKind, [status: number, type: string, code: string | null]> = {
  invalid_request: [400, 'invalid_request_error', null],
  authentication: [401, 'invalid_request_error', 'invalid_api_key'],
  permission: [403, 'permission_error', null],
  not_found: [404, 'invalid_request_error', 'not_found'],
  rate_limit: [429, 'requests', 'rate_limit_exceeded'],
  budget: [402, 'insufficient_quota', 'insufficient_quota'],
  upstream: [502, 'server_error', null],
  overloaded: [503, 'server_error', 'overloaded'],
  timeout: [504, 'server_error', 'timeout'],
};

function formatError(kind: ErrorKind, message: string, param?: string): { status: number; body: unknown } {
  const [status, type, code] = ERRORS[kind];
  return { status, body: { error: { message, type, param: param ?? null, code } } };
}

function formatModelList(models: ModelListEntry[]): unknown {
  return {
    object: 'list',
    data: models.map((m) => ({ id: m.id, object: 'model', created: Math.floor(m.createdAt.getTime() / 1000), owned_by: m.ownedBy })),
  };
}

// ---------------------------------------------------------------- embeddings

function parseEmbeddingRequest(body: unknown): EmbeddingRequest {
  const b = bodyObj(body);
  const model = reqString(b, 'model');
  const input = b.input;
  let inputs: string[];
  if (typeof input === 'string') inputs = [input];
  else if (Array.isArray(input) && input.length > 0) {
    for (let i = 0; i < input.length; i++) {
      if (typeof input[i] !== 'string') fail(`'input' must be a string or an array of strings (token arrays are not supported).`, 'input');
    }
    inputs = input as string[];
  } else fail(`'input' must be a string or a non-empty array of strings.`, 'input');
  const req: EmbeddingRequest = { model, inputs };
  const dimensions = optInt(b, 'dimensions');
  if (dimensions !== undefined) req.dimensions = dimensions;
  const ef = b.encoding_format;
  if (ef === 'float' || ef === 'base64') req.encodingFormat = ef;
  else if (ef !== undefined && ef !== null) fail(`'encoding_format' must be 'float' or 'base64'.`, 'encoding_format');
  return req;
}

/** Asks upstream for base64 (compact, exact float32), as the OpenAI SDK does; parseEmbeddingResponse reads both. */
function formatEmbeddingRequest(req: EmbeddingRequest): { path: string; body: unknown } {
  const body: Obj = { model: req.model, input: req.inputs, encoding_format: 'base64' };
  if (req.dimensions !== undefined) body.dimensions = req.dimensions;
  return { path: '/embeddings', body };
}

function parseEmbeddingResponse(body: unknown): EmbeddingResponse {
  const b = upstreamObj(body, 'embedding response');
  const data = Array.isArray(b.data) ? b.data : [];
  const vectors: number[][] = new Array(data.length);
  for (let i = 0; i < data.length; i++) {
    const d = data[i];
    const idx = isObj(d) && typeof d.index === 'number' ? d.index : i;
    const e = isObj(d) ? d.embedding : undefined;
    vectors[idx] = typeof e === 'string' ? fromBase64(e) : Array.isArray(e) ? (e as number[]) : [];
  }
  const u = isObj(b.usage) ? b.usage : {};
  return {
    model: typeof b.model === 'string' ? b.model : '',
    vectors,
    usage: { inputTokens: num(u.prompt_tokens), outputTokens: 0, cachedTokens: 0 },
  };
}

function formatEmbeddingResponse(res: EmbeddingResponse, opts?: { encodingFormat?: 'float' | 'base64' }): unknown {
  const b64 = opts?.encodingFormat === 'base64';
  return {
    object: 'list',
    data: res.vectors.map((v, index) => ({ object: 'embedding', index, embedding: b64 ? toBase64(v) : v })),
    model: res.model,
    usage: { prompt_tokens: res.usage.inputTokens, total_tokens: res.usage.inputTokens + res.usage.outputTokens },
  };
}

function fromBase64(s: string): number[] {
  const buf = Buffer.from(s, 'base64');
  const n = buf.length >>> 2;
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) out[i] = buf.readFloatLE(i * 4);
  return out;
}

function toBase64(v: number[]): string {
  const buf = Buffer.allocUnsafe(v.length * 4);
  for (let i = 0; i < v.length; i++) buf.writeFloatLE(v[i]!, i * 4);
  return buf.toString('base64');
}

// ---------------------------------------------------------------- the protocol object

const protocol = {
  api: 'openai' as const,
  parseChatRequest,
  formatChatRequest,
  parseChatResponse,
  formatChatResponse,
  createStreamDecoder: createOpenAIDecoder,
  createStreamEncoder: createOpenAIEncoder,
  createUsageTap: createOpenAITap,
  usageFromResponse: (body: unknown): Usage => openaiUsageIn(isObj(body) ? body.usage : undefined),
  formatError,
  formatModelList,
  parseEmbeddingRequest,
  formatEmbeddingRequest,
  parseEmbeddingResponse,
  formatEmbeddingResponse,
};

/** vendor-a protocol, plus embeddings; formatError also takes the offending param (e.g. ProtocolError.param). */
export const openai: typeof protocol & VendorProtocol = protocol;

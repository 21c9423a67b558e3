/**
 * vendor-c: the Google Gemini API, v1beta (paths relative to https://generativelanguage.googleapis.com).
 * The model and the stream flag come from the request path (models/{model}:generateContent or
 * :streamGenerateContent?alt=sse). Field names are read in camelCase and in the REST snake_case aliases.
 */
import type {
  ChatMessage, ChatRequest, ChatResponse, ContentPart, EmbeddingRequest, EmbeddingResponse, ErrorKind, ModelListEntry,
  ToolChoice, ToolDefinition, Usage, VendorProtocol,
} from './types';
import {
  createGeminiDecoder, createGeminiEncoder, createGeminiTap, geminiFinish, geminiUsageIn, geminiUsageOut, toGeminiFinish,
} from './gemini-stream';
import {
  argsObject, bodyObj, fail, isObj, joinTexts, num, optInt, optNumber, optStringList, pushMessage, reqArray,
  upstreamObj, vendorResponseId, type Obj,
} from './util';

/** o[camel] ?? o[snake] */
function pick(o: Obj, camel: string, snake: string): unknown {
  const v = o[camel];
  return v === undefined ? o[snake] : v;
}

/** 'models/x' → 'x' */
export function geminiModelName(model: string): string {
  return model.startsWith('models/') ? model.slice(7) : model;
}

export function geminiModelPath(model: string, method: string): string {
  return `/v1beta/models/${geminiModelName(model)}:${method}`;
}

// ---------------------------------------------------------------- requests

/** Also used for :countTokens bodies (generateContentRequest or bare contents). */
export function parseGeminiRequest(body: unknown, fromPath?: { model?: string; stream?: boolean }): ChatRequest {
  const b = bodyObj(body);
  const modelRaw = fromPath?.model ?? b.model;
  if (typeof modelRaw !== 'string' || modelRaw.length === 0) fail(`The model is required (in the path).`, 'model');
  const model = geminiModelName(modelRaw);
  const raw = reqArray(b, 'contents');
  const messages: ChatMessage[] = [];
  let calls = 0;
  const pending = new Map<string, string[]>(); // function name → ids of calls not yet answered
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    const p = `contents[${i}]`;
    if (!isObj(c)) fail(`'${p}' must be an object.`, p);
    const role = c.role ?? 'user';
    if (role !== 'user' && role !== 'model' && role !== 'function') fail(`Unknown role ${JSON.stringify(role)} (user or model).`, `${p}.role`);
    const base: ChatMessage['role'] = role === 'model' ? 'assistant' : 'user';
    const parts = reqArray(c, 'parts', `${p}.parts`);
    let out: ContentPart[] = [];
    let kind: ChatMessage['role'] = base;
    for (let j = 0; j < parts.length; j++) {
      const part = parts[j];
      const pp = `${p}.parts[${j}]`;
      if (!isObj(part)) fail(`'${pp}' must be an object.`, pp);
      let cp: ContentPart;
      let partKind: ChatMessage['role'] = base;
      const fc = pick(part, 'functionCall', 'function_call');
      const fr = pick(part, 'functionResponse', 'function_response');
      if (typeof part.text === 'string') {
        if (part.thought === true) continue;
        cp = { type: 'text', text: part.text };
      } else if (fc !== undefined) {
        if (!isObj(fc) || typeof fc.name !== 'string') fail(`'${pp}.functionCall.name' must be a string.`, `${pp}.functionCall.name`);
        const id = typeof fc.id === 'string' && fc.id ? fc.id : `call_${calls}`;
        calls++;
        const q = pending.get(fc.name);
        if (q) q.push(id);
        else pending.set(fc.name, [id]);
        cp = { type: 'tool_call', id, name: fc.name, arguments: JSON.stringify(fc.args ?? {}) };
      } else if (fr !== undefined) {
        if (!isObj(fr) || typeof fr.name !== 'string') fail(`'${pp}.functionResponse.name' must be a string.`, `${pp}.functionResponse.name`);
        const id = typeof fr.id === 'string' && fr.id ? fr.id : pending.get(fr.name)?.shift() ?? `call_${fr.name}`;
        cp = { type: 'tool_result', toolCallId: id, name: fr.name, content: responseText(fr.response) };
        partKind = 'tool';
      } else if (part.thought === true || Object.keys(part).every((k) => k === 'thoughtSignature' || k === 'thought_signature')) {
        continue;
      } else {
        fail(`Only text, functionCall and functionResponse parts are supported.`, pp);
      }
      if (partKind !== kind && out.length) {
        pushMessage(messages, kind, out);
        out = [];
      }
      kind = partKind;
      out.push(cp);
    }
    pushMessage(messages, kind, out);
  }
  const req: ChatRequest = { model, messages, stream: fromPath?.stream === true };
  const si = pick(b, 'systemInstruction', 'system_instruction');
  if (si !== undefined && si !== null) {
    if (typeof si === 'string') req.system = si;
    else if (isObj(si) && Array.isArray(si.parts)) req.system = joinTexts(si.parts, 'systemInstruction.parts', true);
    else fail(`'systemInstruction' must be a content with text parts.`, 'systemInstruction');
  }
  const tools = pick(b, 'tools', 'tools');
  if (tools !== undefined && tools !== null) {
    const defs = parseTools(tools);
    if (defs.length) req.tools = defs;
  }
  const tc = pick(b, 'toolConfig', 'tool_config');
  if (isObj(tc)) {
    const choice = parseToolChoice(pick(tc, 'functionCallingConfig', 'function_calling_config'));
    if (choice !== undefined) req.toolChoice = choice;
  }
  const gc = pick(b, 'generationConfig', 'generation_config');
  if (gc !== undefined && gc !== null) {
    if (!isObj(gc)) fail(`'generationConfig' must be an object.`, 'generationConfig');
    const n = optNumber(gc, 'candidateCount', 'generationConfig.candidateCount');
    if (n !== undefined && n !== 1) fail(`Only candidateCount = 1 is supported.`, 'generationConfig.candidateCount');
    const maxTokens = optInt(gc, gc.maxOutputTokens !== undefined ? 'maxOutputTokens' : 'max_output_tokens', 'generationConfig.maxOutputTokens');
    if (maxTokens !== undefined) req.maxTokens = maxTokens;
    const temperature = optNumber(gc, 'temperature', 'generationConfig.temperature');
    if (temperature !== undefined) req.temperature = temperature;
    const topP = optNumber(gc, gc.topP !== undefined ? 'topP' : 'top_p', 'generationConfig.topP');
    if (topP !== undefined) req.topP = topP;
    const stop = optStringList(pick(gc, 'stopSequences', 'stop_sequences'), 'generationConfig.stopSequences', false);
    if (stop !== undefined) req.stop = stop;
  }
  return req;
}

/** functionResponse.response → text: {content: "…"} (what formatChatRequest writes for non-JSON text) unwraps. */
function responseText(r: unknown): string {
  if (r === undefined || r === null) return '';
  if (isObj(r)) {
    const keys = Object.keys(r);
    if (keys.length === 1 && keys[0] === 'content' && typeof r.content === 'string') return r.content;
  }
  return JSON.stringify(r);
}

function parseTools(v: unknown): ToolDefinition[] {
  if (!Array.isArray(v)) fail(`'tools' must be an array.`, 'tools');
  const defs: ToolDefinition[] = [];
  for (let i = 0; i < v.length; i++) {
    const t = v[i];
    const p = `tools[${i}]`;
    if (!isObj(t)) fail(`'${p}' must be an object.`, p);
    const fds = pick(t, 'functionDeclarations', 'function_declarations');
    if (!Array.isArray(fds)) fail(`Only functionDeclarations tools are supported.`, p);
    for (let j = 0; j < fds.length; j++) {
      const fd = fds[j];
      const fp = `${p}.functionDeclarations[${j}]`;
      if (!isObj(fd) || typeof fd.name !== 'string' || !fd.name) fail(`'${fp}.name' must be a non-empty string.`, `${fp}.name`);
      const js = pick(fd, 'parametersJsonSchema', 'parameters_json_schema');
      let params: Obj;
      if (isObj(js)) params = js;
      else if (isObj(fd.parameters)) params = jsonSchemaOf(fd.parameters);
      else if (fd.parameters === undefined && js === undefined) params = { type: 'object', properties: {} };
      else fail(`'${fp}.parameters' must be a Schema object.`, `${fp}.parameters`);
      const def: ToolDefinition = { name: fd.name, parameters: params };
      if (typeof fd.description === 'string') def.description = fd.description;
      defs.push(def);
    }
  }
  return defs;
}

/** Gemini's OpenAPI-style Schema (type 'OBJECT', nullable, propertyOrdering) → JSON Schema. */
function jsonSchemaOf(s: Obj): Obj {
  const out: Obj = {};
  for (const k in s) {
    const v = s[k];
    if (k === 'propertyOrdering' || k === 'nullable') continue;
    if (k === 'type' && typeof v === 'string') {
      const t = v.toLowerCase();
      out.type = s.nullable === true ? [t, 'null'] : t;
    } else if (k === 'properties' && isObj(v)) {
      const props: Obj = {};
      for (const name in v) props[name] = isObj(v[name]) ? jsonSchemaOf(v[name] as Obj) : v[name];
      out.properties = props;
    } else if (k === 'items' && isObj(v)) out.items = jsonSchemaOf(v);
    else if (k === 'anyOf' && Array.isArray(v)) out.anyOf = v.map((x) => (isObj(x) ? jsonSchemaOf(x) : x));
    else out[k] = v;
  }
  return out;
}

function parseToolChoice(v: unknown): ToolChoice | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) fail(`'toolConfig.functionCallingConfig' must be an object.`, 'toolConfig.functionCallingConfig');
  const names = pick(v, 'allowedFunctionNames', 'allowed_function_names');
  switch (v.mode) {
    case undefined:
    case 'MODE_UNSPECIFIED':
    case 'AUTO':
    case 'VALIDATED': return 'auto';
    case 'NONE': return 'none';
    case 'ANY':
      return Array.isArray(names) && names.length === 1 && typeof names[0] === 'string' ? { name: names[0] } : 'required';
  }
  return fail(`'toolConfig.functionCallingConfig.mode' must be AUTO, ANY or NONE.`, 'toolConfig.functionCallingConfig.mode');
}

/** functionResponse.response: the JSON object in the text, or {content: text}. */
function responseObject(text: string): Obj {
  const c = text.charCodeAt(0);
  if (c === 123 /* { */ || c === 32 || c === 10 || c === 9 || c === 13) {
    try {
      const v: unknown = JSON.parse(text);
      if (isObj(v)) return v;
    } catch {
      // not JSON: wrapped below
    }
  }
  return { content: text };
}

/** Canonical → generateContent body (contents, systemInstruction, tools, toolConfig); shared with countTokens. */
export function geminiBody(req: ChatRequest): Obj {
  const contents: Array<{ role: string; parts: Obj[] }> = [];
  const names = new Map<string, string>();
  for (const m of req.messages) {
    const role = m.role === 'assistant' ? 'model' : 'user';
    const parts: Obj[] = [];
    for (const p of m.content) {
      if (p.type === 'text') parts.push({ text: p.text });
      else if (p.type === 'tool_call') {
        names.set(p.id, p.name);
        parts.push({ functionCall: { name: p.name, args: argsObject(p.arguments) } });
      } else {
        parts.push({ functionResponse: { name: p.name ?? names.get(p.toolCallId) ?? '', response: responseObject(p.content) } });
      }
    }
    if (!parts.length) continue;
    const last = contents[contents.length - 1];
    if (last !== undefined && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  }
  const body: Obj = { contents };
  if (req.system !== undefined && req.system.length) body.systemInstruction = { parts: [{ text: req.system }] };
  if (req.tools?.length) {
    body.tools = [{
      functionDeclarations: req.tools.map((t) => {
        const fd: Obj = { name: t.name };
        if (t.description !== undefined) fd.description = t.description;
        // parametersJsonSchema takes any JSON Schema (additionalProperties, $defs, …), unlike `parameters`.
        fd.parametersJsonSchema = t.parameters;
        return fd;
      }),
    }];
  }
  const tc = req.toolChoice;
  if (tc !== undefined) {
    body.toolConfig = {
      functionCallingConfig: typeof tc === 'object'
        ? { mode: 'ANY', allowedFunctionNames: [tc.name] }
        : { mode: tc === 'auto' ? 'AUTO' : tc === 'none' ? 'NONE' : 'ANY' },
    };
  }
  return body;
}

function formatChatRequest(req: ChatRequest): { path: string; body: unknown } {
  const body = geminiBody(req);
  const gc: Obj = {};
  if (req.maxTokens !== undefined) gc.maxOutputTokens = req.maxTokens;
  if (req.temperature !== undefined) gc.temperature = req.temperature;
  if (req.topP !== undefined) gc.topP = req.topP;
  if (req.stop !== undefined) gc.stopSequences = req.stop;
  if (Object.keys(gc).length) body.generationConfig = gc;
  const path = geminiModelPath(req.model, req.stream ? 'streamGenerateContent?alt=sse' : 'generateContent');
  return { path, body };
}

// ---------------------------------------------------------------- responses

function parseChatResponse(body: unknown): ChatResponse {
  const b = upstreamObj(body, 'generateContent response');
  const content: ContentPart[] = [];
  const cand = Array.isArray(b.candidates) ? b.candidates[0] : undefined;
  let calls = 0;
  let reason: unknown;
  if (isObj(cand)) {
    reason = cand.finishReason;
    const parts = isObj(cand.content) && Array.isArray(cand.content.parts) ? cand.content.parts : [];
    for (const part of parts) {
      if (!isObj(part)) continue;
      if (typeof part.text === 'string') {
        if (part.thought !== true) content.push({ type: 'text', text: part.text });
      } else if (isObj(part.functionCall)) {
        const fc = part.functionCall;
        const id = typeof fc.id === 'string' && fc.id ? fc.id : `call_${calls}`;
        calls++;
        content.push({ type: 'tool_call', id, name: typeof fc.name === 'string' ? fc.name : '', arguments: JSON.stringify(fc.args ?? {}) });
      }
    }
  } else if (isObj(b.promptFeedback) && b.promptFeedback.blockReason !== undefined) {
    reason = 'SAFETY';
  }
  return {
    id: typeof b.responseId === 'string' ? b.responseId : '',
    model: typeof b.modelVersion === 'string' ? b.modelVersion : '',
    content,
    finishReason: geminiFinish(reason, calls > 0),
    usage: geminiUsageIn(b.usageMetadata),
  };
}

function formatChatResponse(res: ChatResponse): unknown {
  const parts: Obj[] = [];
  for (const p of res.content) {
    if (p.type === 'text') parts.push({ text: p.text });
    else if (p.type === 'tool_call') parts.push({ functionCall: { name: p.name, args: argsObject(p.arguments) } });
  }
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: toGeminiFinish(res.finishReason), index: 0 }],
    usageMetadata: geminiUsageOut(res.usage),
    modelVersion: res.model,
    responseId: vendorResponseId('gemini', res.id),
  };
}

// ---------------------------------------------------------------- errors, models

const ERRORS: Record<ErrorKind, [code: number, status: string]> = {
  invalid_request: [400, 'INVALID_ARGUMENT'],
  authentication: [401, 'UNAUTHENTICATED'],
  permission: [403, 'PERMISSION_DENIED'],
  not_found: [404, 'NOT_FOUND'],
  rate_limit: [429, 'RESOURCE_EXHAUSTED'],
  budget: [402, 'RESOURCE_EXHAUSTED'],
  upstream: [502, 'INTERNAL'],
  overloaded: [503, 'UNAVAILABLE'],
  timeout: [504, 'DEADLINE_EXCEEDED'],
};

function formatError(kind: ErrorKind, message: string): { status: number; body: unknown } {
  const [code, status] = ERRORS[kind];
  return { status: code, body: { error: { code, message, status } } };
}

function formatModelList(models: ModelListEntry[]): unknown {
  return {
    models: models.map((m) => ({
      name: `models/${geminiModelName(m.id)}`,
      baseModelId: geminiModelName(m.id),
      displayName: m.displayName,
      description: m.displayName,
      supportedGenerationMethods: ['generateContent', 'streamGenerateContent', 'countTokens'],
    })),
  };
}

// ---------------------------------------------------------------- embeddings

function contentText(c: unknown, param: string): string {
  if (!isObj(c) || !Array.isArray(c.parts)) fail(`'${param}' must be a content with text parts.`, param);
  return joinTexts(c.parts, `${param}.parts`, true);
}

/** :embedContent body ({content:{parts:[{text}]}}) → one input. */
function parseEmbedContentRequest(body: unknown, fromPath?: { model?: string }): EmbeddingRequest {
  const b = bodyObj(body);
  const model = fromPath?.model ?? b.model;
  if (typeof model !== 'string' || !model) fail(`The model is required (in the path).`, 'model');
  const req: EmbeddingRequest = { model: geminiModelName(model), inputs: [contentText(b.content, 'content')] };
  const dims = optInt(b, b.outputDimensionality !== undefined ? 'outputDimensionality' : 'output_dimensionality', 'outputDimensionality');
  if (dims !== undefined) req.dimensions = dims;
  return req;
}

/** :batchEmbedContents body ({requests:[{model, content}]}) → one input per request (what the Gemini SDK sends). */
function parseBatchEmbedContentsRequest(body: unknown, fromPath?: { model?: string }): EmbeddingRequest {
  const b = bodyObj(body);
  const requests = reqArray(b, 'requests');
  if (!requests.length) fail(`'requests' must not be empty.`, 'requests');
  const first = isObj(requests[0]) ? requests[0] : {};
  const model = fromPath?.model ?? first.model;
  if (typeof model !== 'string' || !model) fail(`The model is required (in the path).`, 'model');
  const inputs = requests.map((r, i) => contentText(isObj(r) ? r.content : undefined, `requests[${i}].content`));
  const req: EmbeddingRequest = { model: geminiModelName(model), inputs };
  const dims = optInt(first, 'outputDimensionality', 'requests[0].outputDimensionality');
  if (dims !== undefined) req.dimensions = dims;
  return req;
}

/** Always :batchEmbedContents (one or many inputs). */
function formatEmbeddingRequest(req: EmbeddingRequest): { path: string; body: unknown } {
  const model = `models/${geminiModelName(req.model)}`;
  const requests = req.inputs.map((text) => {
    const r: Obj = { model, content: { parts: [{ text }] } };
    if (req.dimensions !== undefined) r.outputDimensionality = req.dimensions;
    return r;
  });
  return { path: geminiModelPath(req.model, 'batchEmbedContents'), body: { requests } };
}

/** Reads both {embedding:{values}} (:embedContent) and {embeddings:[{values}]} (:batchEmbedContents). */
function parseEmbeddingResponse(body: unknown, model = ''): EmbeddingResponse {
  const b = upstreamObj(body, 'embedding response');
  const list = Array.isArray(b.embeddings) ? b.embeddings : isObj(b.embedding) ? [b.embedding] : [];
  const vectors = list.map((e) => (isObj(e) && Array.isArray(e.values) ? (e.values as number[]) : []));
  const um = isObj(b.usageMetadata) ? b.usageMetadata : {};
  return { model, vectors, usage: { inputTokens: num(um.promptTokenCount), outputTokens: 0, cachedTokens: 0 } };
}

function formatEmbedContentResponse(res: EmbeddingResponse): unknown {
  return { embedding: { values: res.vectors[0] ?? [] } };
}

function formatBatchEmbedContentsResponse(res: EmbeddingResponse): unknown {
  return { embeddings: res.vectors.map((values) => ({ values })) };
}

// ---------------------------------------------------------------- the protocol object

const protocol = {
  api: 'gemini' as const,
  parseChatRequest: parseGeminiRequest,
  formatChatRequest,
  parseChatResponse,
  formatChatResponse,
  createStreamDecoder: createGeminiDecoder,
  createStreamEncoder: createGeminiEncoder,
  createUsageTap: createGeminiTap,
  usageFromResponse: (body: unknown): Usage => geminiUsageIn(isObj(body) ? body.usageMetadata : undefined),
  formatError,
  formatModelList,
  parseEmbedContentRequest,
  parseBatchEmbedContentsRequest,
  formatEmbeddingRequest,
  parseEmbeddingResponse,
  formatEmbedContentResponse,
  formatBatchEmbedContentsResponse,
};

/** vendor-c protocol, plus :embedContent / :batchEmbedContents. */
export const gemini: typeof protocol & VendorProtocol = protocol;

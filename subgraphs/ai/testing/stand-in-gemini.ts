/**
 * vendor-c stand-in: the Google Gemini API (generateContent, streamGenerateContent, countTokens, embedContent,
 * batchEmbedContents, models) as `@google/genai` reads it.
 */
import {
  TOOL_CALL_ARGS,
  bareModel,
  cachedTokensOf,
  inputTokensOf,
  isObject,
  modelKnown,
  planReply,
  positiveInt,
  randomId,
  sendJson,
  splitForStream,
  sseFrame,
  standInEmbedding,
  toolResultText,
  typeName,
  writeStream,
  type Conversation,
  type ErrorSpec,
  type Exchange,
  type ReplyPlan,
  type Vendor,
} from './stand-in-core';

export const GEMINI_DEFAULT_MODELS: readonly string[] = ['gemini-2.5-flash', 'gemini-2.5-pro', 'gemini-embedding-001', 'text-embedding-004'];

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  413: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

function statusName(status: number): string {
  return STATUS_NAMES[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
}

function invalid(message: string): ErrorSpec {
  return { status: 400, message, type: 'INVALID_ARGUMENT' };
}

function keyOf(ex: Exchange): string | undefined {
  const header = ex.headers['x-goog-api-key'];
  return (Array.isArray(header) ? header[0] : header) ?? ex.query.get('key') ?? undefined;
}

export const geminiVendor: Vendor = {
  checkKey(ex, apiKey) {
    const key = keyOf(ex);
    if (!key) return 'missing';
    return key === apiKey ? 'ok' : 'invalid';
  },

  authError(_ex, kind) {
    // The real API answers a bad key with 400 INVALID_ARGUMENT (API_KEY_INVALID) and a missing one with 403; the
    // stand-ins answer 401 UNAUTHENTICATED for both, like the other vendors.
    return {
      status: 401,
      message:
        kind === 'missing'
          ? 'Method doesn\'t allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.'
          : 'API key not valid. Please pass a valid API key.',
      type: 'UNAUTHENTICATED',
    };
  },

  failure(status) {
    if (status === 429) {
      return { status, message: 'Resource has been exhausted (e.g. check quota).', type: 'RESOURCE_EXHAUSTED' };
    }
    if (status === 503) return { status, message: 'The model is overloaded. Please try again later.', type: 'UNAVAILABLE' };
    if (status >= 500) return { status, message: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting', type: 'INTERNAL' };
    return { status, message: `stand-in failure ${status}`, type: statusName(status) };
  },

  sendError(ex, error) {
    const body: Record<string, any> = { code: error.status, message: error.message, status: error.type ?? statusName(error.status) };
    if (error.status === 429) {
      const retry = error.headers?.['retry-after'] ?? '1';
      body.details = [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${retry}s` }];
    }
    sendJson(ex.res, error.status, { error: body }, error.headers ?? {});
  },

  async route(ex) {
    const match = /^\/(v1beta|v1|v1alpha)\/(.*)$/.exec(ex.path);
    const rest = match?.[2] ?? '';
    if (match && ex.method === 'GET' && rest === 'models') return listModels(ex);
    if (match && rest.startsWith('models/')) {
      const resource = rest.slice('models/'.length);
      const colon = resource.lastIndexOf(':');
      if (ex.method === 'GET' && colon < 0) return getModel(ex, decodeURIComponent(resource), match[1]);
      if (ex.method === 'POST' && colon > 0) {
        const model = decodeURIComponent(resource.slice(0, colon));
        const action = resource.slice(colon + 1);
        const version = match[1];
        switch (action) {
          case 'generateContent':
            return generateContent(ex, model, version, false);
          case 'streamGenerateContent':
            return generateContent(ex, model, version, true);
          case 'countTokens':
            return countTokens(ex, model, version);
          case 'embedContent':
            return embedContent(ex, model, version);
          case 'batchEmbedContents':
            return batchEmbedContents(ex, model, version);
        }
      }
    }
    geminiVendor.sendError(ex, { status: 404, message: `The requested URL ${ex.path} was not found on this server.`, type: 'NOT_FOUND' });
  },
};

function modelResource(id: string) {
  const embedding = id.includes('embedding');
  return {
    name: `models/${id}`,
    version: '001',
    displayName: id,
    description: `Stand-in for ${id}`,
    inputTokenLimit: embedding ? 2048 : 1_048_576,
    outputTokenLimit: embedding ? 1 : 65_536,
    supportedGenerationMethods: embedding ? ['embedContent', 'batchEmbedContents', 'countTokens'] : ['generateContent', 'countTokens'],
  };
}

function listModels(ex: Exchange): void {
  sendJson(ex.res, 200, { models: ex.models.map(modelResource) });
}

function getModel(ex: Exchange, model: string, version: string): void {
  if (!ex.models.includes(bareModel(model))) return geminiVendor.sendError(ex, modelNotFound(model, version, 'get'));
  sendJson(ex.res, 200, modelResource(bareModel(model)));
}

function modelNotFound(model: string, version: string, method: string): ErrorSpec {
  return {
    status: 404,
    message: `models/${bareModel(model)} is not found for API version ${version}, or is not supported for ${method}. Call ListModels to see the list of available models and their supported methods.`,
    type: 'NOT_FOUND',
  };
}

function badJson(): ErrorSpec {
  return invalid('Invalid JSON payload received. Unknown name "": Root element must be a message.');
}

function partsOf(content: unknown): any[] {
  return isObject(content) && Array.isArray(content.parts) ? content.parts : [];
}

function textOf(content: unknown): string {
  return partsOf(content)
    .filter((part) => isObject(part) && typeof part.text === 'string' && part.thought !== true)
    .map((part) => part.text as string)
    .join(' ');
}

function functionResponsesOf(content: unknown): string[] {
  return partsOf(content)
    .filter((part) => isObject(part) && isObject(part.functionResponse ?? part.function_response))
    .map((part) => toolResultText((part.functionResponse ?? part.function_response).response));
}

function functionCallCount(content: unknown): number {
  return partsOf(content).filter((part) => isObject(part) && isObject(part.functionCall ?? part.function_call)).length;
}

/** Validates `contents` (shared by generateContent and countTokens); `where` prefixes field paths. */
function validateContents(contents: unknown, where: string): ErrorSpec | undefined {
  if (contents === undefined || (Array.isArray(contents) && contents.length === 0)) return invalid(`* ${where}.contents: contents is not specified\n`);
  if (!Array.isArray(contents)) return invalid(`Invalid value at '${where === 'GenerateContentRequest' ? '' : 'generate_content_request.'}contents' (type.googleapis.com/google.ai.generativelanguage.v1beta.Content), ${typeName(contents)}`);
  for (let i = 0; i < contents.length; i++) {
    const content = contents[i];
    if (!isObject(content)) return invalid(`Invalid value at 'contents[${i}]' (type.googleapis.com/google.ai.generativelanguage.v1beta.Content), ${typeName(content)}`);
    if (content.role !== undefined && content.role !== 'user' && content.role !== 'model' && content.role !== 'function') {
      return invalid('Please use a valid role: user, model.');
    }
    if (!Array.isArray(content.parts) || content.parts.length === 0) return invalid(`* ${where}.contents[${i}].parts: contents.parts must not be empty.\n`);
    for (let j = 0; j < content.parts.length; j++) {
      const part = content.parts[j];
      if (!isObject(part) || Object.keys(part).length === 0) return invalid(`* ${where}.contents[${i}].parts[${j}].data: required oneof field 'data' must have one initialized field\n`);
    }
    const responses = functionResponsesOf(content).length;
    const calls = functionCallCount(content);
    if (responses > 0) {
      const previousCalls = i > 0 ? functionCallCount(contents[i - 1]) : 0;
      if (previousCalls === 0) return invalid('Please ensure that function response turn comes immediately after a function call turn.');
      if (previousCalls !== responses) {
        return invalid('Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.');
      }
    }
    if (calls > 0 && i > 0) {
      const previous = contents[i - 1];
      const previousIsUserTurn = isObject(previous) && (previous.role === 'user' || previous.role === undefined || previous.role === 'function');
      if (!previousIsUserTurn) return invalid('Please ensure that function call turn comes immediately after a user turn or after a function response turn.');
    }
  }
  return undefined;
}

function systemInstructionOf(body: any): unknown {
  return body.systemInstruction ?? body.system_instruction;
}

function conversationOf(body: any): Conversation {
  const contents: any[] = body.contents;
  const systemText = textOf(systemInstructionOf(body));
  const countedTexts: string[] = systemText !== '' ? [systemText] : [];
  let lastUserText = '';
  for (const content of contents) {
    const text = textOf(content);
    countedTexts.push(text, ...functionResponsesOf(content));
    const isUser = content.role === undefined || content.role === 'user';
    if (isUser && partsOf(content).some((part) => isObject(part) && typeof part.text === 'string')) lastUserText = text;
  }
  const last = contents[contents.length - 1];
  const declarations: any[] = [];
  for (const tool of Array.isArray(body.tools) ? body.tools : []) {
    const list = isObject(tool) ? (tool.functionDeclarations ?? tool.function_declarations) : undefined;
    if (Array.isArray(list)) declarations.push(...list.filter((d) => isObject(d) && typeof d.name === 'string'));
  }
  const toolConfig = body.toolConfig ?? body.tool_config;
  const callingConfig = isObject(toolConfig) ? (toolConfig.functionCallingConfig ?? toolConfig.function_calling_config) : undefined;
  const generationConfig = body.generationConfig ?? body.generation_config;
  return {
    systemText,
    countedTexts,
    messageCount: contents.length + (systemText !== '' ? 1 : 0),
    lastRole: last.role === 'model' ? 'assistant' : last.role === 'function' ? 'tool' : 'user',
    lastText: textOf(last),
    lastToolResults: functionResponsesOf(last),
    lastUserText,
    firstToolName: declarations[0]?.name,
    toolsDisabled: isObject(callingConfig) && callingConfig.mode === 'NONE',
    maxOutputTokens: isObject(generationConfig) ? positiveInt(generationConfig.maxOutputTokens ?? generationConfig.max_output_tokens) : undefined,
  };
}

function usageOf(plan: ReplyPlan) {
  return {
    promptTokenCount: plan.inputTokens,
    candidatesTokenCount: plan.outputTokens,
    totalTokenCount: plan.inputTokens + plan.outputTokens,
    ...(plan.cachedTokens > 0 ? { cachedContentTokenCount: plan.cachedTokens } : {}),
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: plan.inputTokens }],
    ...(plan.cachedTokens > 0 ? { cacheTokensDetails: [{ modality: 'TEXT', tokenCount: plan.cachedTokens }] } : {}),
  };
}

async function generateContent(ex: Exchange, model: string, version: string, stream: boolean): Promise<void> {
  if (ex.badJson) return geminiVendor.sendError(ex, badJson());
  const body = ex.body ?? {};
  const error = validateContents(body.contents, 'GenerateContentRequest');
  if (error) return geminiVendor.sendError(ex, error);
  if (!modelKnown(ex, model)) return geminiVendor.sendError(ex, modelNotFound(model, version, stream ? 'streamGenerateContent' : 'generateContent'));
  const plan = planReply(conversationOf(body), ex.behavior);
  const responseId = randomId('', 22);
  const modelVersion = bareModel(model);
  const finishReason = plan.truncated ? 'MAX_TOKENS' : 'STOP';
  const response = (parts: unknown[], last: boolean) => ({
    candidates: [{ content: { parts, role: 'model' }, ...(last ? { finishReason } : {}), index: 0 }],
    ...(last ? { usageMetadata: usageOf(plan) } : {}),
    modelVersion,
    responseId,
  });

  if (!stream) {
    const parts = plan.kind === 'tool' ? [{ functionCall: { name: plan.toolName, args: { ...TOOL_CALL_ARGS } } }] : [{ text: plan.text }];
    sendJson(ex.res, 200, response(parts, true));
    return;
  }

  const chunks: unknown[] = [];
  if (plan.kind === 'tool') {
    chunks.push(response([{ functionCall: { name: plan.toolName, args: { ...TOOL_CALL_ARGS } } }], true));
  } else {
    const pieces = splitForStream(plan.text);
    if (pieces.length === 0) pieces.push('');
    pieces.forEach((piece, i) => chunks.push(response([{ text: piece }], i === pieces.length - 1)));
  }
  if (ex.query.get('alt') === 'sse') {
    await writeStream(ex, {
      contentType: 'text/event-stream',
      frames: chunks.map((chunk) => sseFrame(chunk)),
      cutAfter: 1,
      garbage: 'data: {not json\n\n',
    });
  } else {
    // Without alt=sse the API streams one JSON array.
    await writeStream(ex, {
      contentType: 'application/json; charset=UTF-8',
      prefix: '[',
      frames: chunks.map((chunk, i) => (i === 0 ? '' : ',\r\n') + JSON.stringify(chunk)),
      suffix: ']',
      cutAfter: 1,
      garbage: ',\r\n{not json',
    });
  }
}

function countTokens(ex: Exchange, model: string, version: string): void {
  if (ex.badJson) return geminiVendor.sendError(ex, badJson());
  const body = ex.body ?? {};
  const request = isObject(body.generateContentRequest) ? body.generateContentRequest : isObject(body.generate_content_request) ? body.generate_content_request : undefined;
  if (request && body.contents !== undefined) return geminiVendor.sendError(ex, invalid('contents and generate_content_request cannot both be set.'));
  const source = request ?? body;
  const error = validateContents(source.contents, request ? 'CountTokensRequest.generate_content_request' : 'CountTokensRequest');
  if (error) return geminiVendor.sendError(ex, error);
  if (!modelKnown(ex, model)) return geminiVendor.sendError(ex, modelNotFound(model, version, 'countTokens'));
  const conversation = conversationOf(source);
  const total = inputTokensOf(conversation);
  const cached = cachedTokensOf(conversation.systemText, total);
  sendJson(ex.res, 200, {
    totalTokens: total,
    ...(cached > 0 ? { cachedContentTokenCount: cached } : {}),
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: total }],
  });
}

function embedText(content: unknown): string | undefined {
  if (!isObject(content) || !Array.isArray(content.parts) || content.parts.length === 0) return undefined;
  return content.parts
    .filter((part: unknown) => isObject(part) && typeof part.text === 'string')
    .map((part: any) => part.text as string)
    .join(' ');
}

function embedContent(ex: Exchange, model: string, version: string): void {
  if (ex.badJson) return geminiVendor.sendError(ex, badJson());
  const text = embedText(ex.body?.content);
  if (text === undefined) return geminiVendor.sendError(ex, invalid('* EmbedContentRequest.content: contents is not specified\n'));
  if (!modelKnown(ex, model)) return geminiVendor.sendError(ex, modelNotFound(model, version, 'embedContent'));
  sendJson(ex.res, 200, { embedding: { values: standInEmbedding(text) } });
}

function batchEmbedContents(ex: Exchange, model: string, version: string): void {
  if (ex.badJson) return geminiVendor.sendError(ex, badJson());
  const requests = ex.body?.requests;
  if (!Array.isArray(requests) || requests.length === 0) return geminiVendor.sendError(ex, invalid('* BatchEmbedContentsRequest.requests: requests is not specified\n'));
  const texts: string[] = [];
  for (let i = 0; i < requests.length; i++) {
    const request = requests[i];
    if (isObject(request) && request.model !== undefined && bareModel(String(request.model)) !== bareModel(model)) {
      return geminiVendor.sendError(
        ex,
        invalid(`* BatchEmbedContentsRequest.requests[${i}].model: model of the request must match the model of the batch: models/${bareModel(model)}\n`),
      );
    }
    const text = embedText(isObject(request) ? request.content : undefined);
    if (text === undefined) return geminiVendor.sendError(ex, invalid(`* BatchEmbedContentsRequest.requests[${i}].content: contents is not specified\n`));
    texts.push(text);
  }
  if (!modelKnown(ex, model)) return geminiVendor.sendError(ex, modelNotFound(model, version, 'batchEmbedContents'));
  sendJson(ex.res, 200, { embeddings: texts.map((text) => ({ values: standInEmbedding(text) })) });
}


/**
 * vendor-a stand-in: the OpenAI API (chat completions, embeddings, models) as the `openai` SDK reads it.
 */
import {
  TOOL_CALL_ARGS_JSON,
  TOOL_CALL_ARGS_PARTS,
  countWords,
  isObject,
  modelKnown,
  nowSeconds,
  planReply,
  positiveInt,
  randomId,
  sendJson,
  splitForStream,
  sseFrame,
  standInEmbedding,
  typeName,
  writeStream,
  type Conversation,
  type ErrorSpec,
  type Exchange,
  type ReplyPlan,
  type Vendor,
} from './stand-in-core';

export const OPENAI_DEFAULT_MODELS: readonly string[] = ['gpt-4o-mini', 'gpt-4o', 'text-embedding-3-small'];

const FINGERPRINT = 'fp_standin';
const ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'];

function defaultType(status: number): string {
  if (status === 429) return 'requests';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

function invalid(message: string, param: string | null = null, code: string | null = null): ErrorSpec {
  return { status: 400, message, type: 'invalid_request_error', param, code };
}

export const openaiVendor: Vendor = {
  checkKey(ex, apiKey) {
    const auth = ex.headers.authorization;
    if (!auth) return 'missing';
    const match = /^Bearer\s+(.+)$/i.exec(auth);
    return match && match[1].trim() === apiKey ? 'ok' : 'invalid';
  },

  authError(ex, kind) {
    if (kind === 'missing') {
      return {
        status: 401,
        message:
          "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys.",
        type: 'invalid_request_error',
      };
    }
    const given = /^Bearer\s+(.+)$/i.exec(ex.headers.authorization ?? '')?.[1] ?? '';
    const shown = given.length > 8 ? `${given.slice(0, 3)}*****${given.slice(-4)}` : '*****';
    return {
      status: 401,
      message: `Incorrect API key provided: ${shown}. You can find your API key at https://platform.openai.com/account/api-keys.`,
      type: 'invalid_request_error',
      code: 'invalid_api_key',
    };
  },

  failure(status) {
    if (status === 429) {
      return {
        status,
        message: 'Rate limit reached for requests. Please try again in 1s.',
        type: 'requests',
        code: 'rate_limit_exceeded',
      };
    }
    if (status === 503) return { status, message: 'The engine is currently overloaded, please try again later', type: 'server_error' };
    if (status >= 500) {
      return { status, message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error' };
    }
    return { status, message: `stand-in failure ${status}`, type: defaultType(status) };
  },

  sendError(ex, error) {
    sendJson(
      ex.res,
      error.status,
      { error: { message: error.message, type: error.type ?? defaultType(error.status), param: error.param ?? null, code: error.code ?? null } },
      { 'x-request-id': randomId('req_', 32), ...error.headers },
    );
  },

  async route(ex) {
    const { method, path } = ex;
    if (method === 'GET' && path === '/v1/models') return listModels(ex);
    if (method === 'GET' && path.startsWith('/v1/models/')) return getModel(ex, decodeURIComponent(path.slice('/v1/models/'.length)));
    if (method === 'POST' && path === '/v1/chat/completions') return chatCompletions(ex);
    if (method === 'POST' && path === '/v1/embeddings') return embeddings(ex);
    openaiVendor.sendError(ex, { status: 404, message: `Invalid URL (${method} ${path})` });
  },
};

function modelObject(id: string) {
  return { id, object: 'model', created: 1_700_000_000, owned_by: 'system' };
}

function listModels(ex: Exchange): void {
  sendJson(ex.res, 200, { object: 'list', data: ex.models.map(modelObject) }, { 'x-request-id': randomId('req_', 32) });
}

function getModel(ex: Exchange, id: string): void {
  if (!ex.models.includes(id)) {
    openaiVendor.sendError(ex, { status: 404, message: `The model '${id}' does not exist`, code: 'model_not_found', param: 'model' });
    return;
  }
  sendJson(ex.res, 200, modelObject(id));
}

function modelNotFound(model: string): ErrorSpec {
  return {
    status: 404,
    message: `The model \`${model}\` does not exist or you do not have access to it.`,
    type: 'invalid_request_error',
    code: 'model_not_found',
  };
}

/** Text of a message's content: a string, or the text of its text parts. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .filter((part) => isObject(part) && (part.type === 'text' || part.type === 'input_text') && typeof part.text === 'string')
      .map((part) => part.text as string)
      .join(' ');
  }
  return '';
}

function validateChat(ex: Exchange): ErrorSpec | undefined {
  if (ex.badJson) {
    return invalid(
      "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)",
    );
  }
  const body = ex.body ?? {};
  if (typeof body.model !== 'string' || body.model === '') return invalid('you must provide a model parameter');
  if (body.messages === undefined) return invalid("Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter');
  if (!Array.isArray(body.messages)) {
    return invalid(`Invalid type for 'messages': expected an array of objects, but got ${typeName(body.messages)} instead.`, 'messages', 'invalid_type');
  }
  if (body.messages.length === 0) {
    return invalid("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", 'messages', 'empty_array');
  }
  if (body.stream_options != null && body.stream !== true) {
    return invalid("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options');
  }
  const messages: any[] = body.messages;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    if (!isObject(message)) {
      return invalid(`Invalid type for 'messages[${i}]': expected an object, but got ${typeName(message)} instead.`, `messages[${i}]`, 'invalid_type');
    }
    if (message.role === undefined) return invalid(`Missing required parameter: 'messages[${i}].role'.`, `messages[${i}].role`, 'missing_required_parameter');
    if (!ROLES.includes(message.role)) {
      return invalid(
        `Invalid value: '${String(message.role)}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`,
        `messages[${i}].role`,
        'invalid_value',
      );
    }
    const needsContent = message.role !== 'assistant';
    if (needsContent && message.content === undefined) {
      return invalid(`Missing required parameter: 'messages[${i}].content'.`, `messages[${i}].content`, 'missing_required_parameter');
    }
    if (message.content !== undefined && message.content !== null && typeof message.content !== 'string' && !Array.isArray(message.content)) {
      return invalid(
        `Invalid type for 'messages[${i}].content': expected one of a string or array of objects, but got ${typeName(message.content)} instead.`,
        `messages[${i}].content`,
        'invalid_type',
      );
    }
    if (message.role === 'tool') {
      if (typeof message.tool_call_id !== 'string') {
        return invalid(`Missing required parameter: 'messages[${i}].tool_call_id'.`, `messages[${i}].tool_call_id`, 'missing_required_parameter');
      }
      // A tool message answers a tool call of the nearest preceding assistant message (tool messages in between).
      let j = i - 1;
      while (j >= 0 && messages[j]?.role === 'tool') j--;
      const ids: string[] = Array.isArray(messages[j]?.tool_calls) ? messages[j].tool_calls.map((call: any) => call?.id) : [];
      if (j < 0 || messages[j]?.role !== 'assistant' || ids.length === 0 || !ids.includes(message.tool_call_id)) {
        return invalid("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", `messages.[${i}].role`);
      }
    }
    if (message.role === 'assistant' && Array.isArray(message.tool_calls) && message.tool_calls.length > 0) {
      const answered = new Set<string>();
      for (let k = i + 1; k < messages.length && messages[k]?.role === 'tool'; k++) answered.add(messages[k].tool_call_id);
      const missing = message.tool_calls.map((call: any) => call?.id).filter((id: string) => !answered.has(id));
      if (missing.length > 0) {
        return invalid(
          `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(', ')}`,
          `messages.[${i}].role`,
        );
      }
    }
  }
  if (body.tools !== undefined && !Array.isArray(body.tools)) {
    return invalid(`Invalid type for 'tools': expected an array of objects, but got ${typeName(body.tools)} instead.`, 'tools', 'invalid_type');
  }
  if (Array.isArray(body.tools)) {
    for (let i = 0; i < body.tools.length; i++) {
      const tool = body.tools[i];
      if (isObject(tool) && tool.type === 'function' && (!isObject(tool.function) || typeof tool.function.name !== 'string')) {
        return invalid(`Missing required parameter: 'tools[${i}].function.name'.`, `tools[${i}].function.name`, 'missing_required_parameter');
      }
    }
  }
  if (!modelKnown(ex, body.model)) return modelNotFound(body.model);
  return undefined;
}

function conversationOf(body: any): Conversation {
  const messages: any[] = body.messages;
  const countedTexts: string[] = [];
  const systemTexts: string[] = [];
  let lastUserText = '';
  for (const message of messages) {
    const text = contentText(message.content);
    countedTexts.push(text);
    if (message.role === 'system' || message.role === 'developer') systemTexts.push(text);
    if (message.role === 'user') lastUserText = text;
  }
  const last = messages[messages.length - 1];
  const lastToolResults: string[] = [];
  if (last.role === 'tool' || last.role === 'function') {
    let start = messages.length - 1;
    while (start > 0 && (messages[start - 1].role === 'tool' || messages[start - 1].role === 'function')) start--;
    for (let i = start; i < messages.length; i++) lastToolResults.push(contentText(messages[i].content));
  }
  const tools: any[] = Array.isArray(body.tools) ? body.tools : [];
  const firstTool = tools.find((tool) => isObject(tool) && tool.type === 'function' && isObject(tool.function));
  const toolChoice = body.tool_choice;
  return {
    systemText: systemTexts.join('\n'),
    countedTexts,
    messageCount: messages.length,
    lastRole: last.role === 'user' ? 'user' : last.role === 'assistant' ? 'assistant' : last.role === 'tool' ? 'tool' : 'other',
    lastText: contentText(last.content),
    lastToolResults,
    lastUserText,
    firstToolName: firstTool?.function?.name,
    toolsDisabled: toolChoice === 'none',
    maxOutputTokens: positiveInt(body.max_completion_tokens) ?? positiveInt(body.max_tokens),
  };
}

function usageOf(plan: ReplyPlan) {
  return {
    prompt_tokens: plan.inputTokens,
    completion_tokens: plan.outputTokens,
    total_tokens: plan.inputTokens + plan.outputTokens,
    prompt_tokens_details: { cached_tokens: plan.cachedTokens, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

function finishReason(plan: ReplyPlan): 'stop' | 'length' | 'tool_calls' {
  return plan.kind === 'tool' ? 'tool_calls' : plan.truncated ? 'length' : 'stop';
}

async function chatCompletions(ex: Exchange): Promise<void> {
  const error = validateChat(ex);
  if (error) return openaiVendor.sendError(ex, error);
  const body = ex.body;
  const plan = planReply(conversationOf(body), ex.behavior);
  const id = randomId('chatcmpl-', 29);
  const created = nowSeconds();
  const model: string = body.model;
  const callId = randomId('call_', 24);
  const headers = { 'x-request-id': randomId('req_', 32), 'openai-processing-ms': '1' };

  if (body.stream !== true) {
    const message =
      plan.kind === 'tool'
        ? {
            role: 'assistant',
            content: null,
            refusal: null,
            annotations: [],
            tool_calls: [{ id: callId, type: 'function', function: { name: plan.toolName, arguments: TOOL_CALL_ARGS_JSON } }],
          }
        : { role: 'assistant', content: plan.text, refusal: null, annotations: [] };
    sendJson(
      ex.res,
      200,
      {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(plan) }],
        usage: usageOf(plan),
        service_tier: 'default',
        system_fingerprint: FINGERPRINT,
      },
      headers,
    );
    return;
  }

  const includeUsage = isObject(body.stream_options) && body.stream_options.include_usage === true;
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    sseFrame({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      service_tier: 'default',
      system_fingerprint: FINGERPRINT,
      choices,
      ...(includeUsage ? { usage: null } : {}),
      ...extra,
    });
  const delta = (d: Record<string, unknown>, finish: string | null = null) => ({ index: 0, delta: d, logprobs: null, finish_reason: finish });

  const frames: string[] = [];
  if (plan.kind === 'tool') {
    frames.push(
      chunk([
        delta({
          role: 'assistant',
          content: null,
          tool_calls: [{ index: 0, id: callId, type: 'function', function: { name: plan.toolName, arguments: '' } }],
          refusal: null,
        }),
      ]),
    );
    for (const part of TOOL_CALL_ARGS_PARTS) frames.push(chunk([delta({ tool_calls: [{ index: 0, function: { arguments: part } }] })]));
  } else {
    frames.push(chunk([delta({ role: 'assistant', content: '', refusal: null })]));
    for (const piece of splitForStream(plan.text)) frames.push(chunk([delta({ content: piece })]));
  }
  frames.push(chunk([delta({}, finishReason(plan))]));
  if (includeUsage) frames.push(chunk([], { usage: usageOf(plan) }));
  frames.push('data: [DONE]\n\n');
  await writeStream(ex, {
    contentType: 'text/event-stream; charset=utf-8',
    frames,
    cutAfter: 2,
    garbage: 'data: {not json\n\n',
    headers,
  });
}

async function embeddings(ex: Exchange): Promise<void> {
  if (ex.badJson) return openaiVendor.sendError(ex, invalid('We could not parse the JSON body of your request.'));
  const body = ex.body ?? {};
  if (typeof body.model !== 'string' || body.model === '') return openaiVendor.sendError(ex, invalid('you must provide a model parameter'));
  if (body.input === undefined) return openaiVendor.sendError(ex, invalid("Missing required parameter: 'input'.", 'input', 'missing_required_parameter'));
  const inputs = embeddingInputs(body.input);
  if (!inputs) {
    return openaiVendor.sendError(ex, invalid("'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.", null));
  }
  const format = body.encoding_format ?? 'float';
  if (format !== 'float' && format !== 'base64') {
    return openaiVendor.sendError(
      ex,
      invalid(`Invalid value: '${String(format)}'. Supported values are: 'float' and 'base64'.`, 'encoding_format', 'invalid_value'),
    );
  }
  if (!modelKnown(ex, body.model)) return openaiVendor.sendError(ex, modelNotFound(body.model));
  let promptTokens = 0;
  const data = inputs.map((text, index) => {
    promptTokens += countWords(text);
    const vector = standInEmbedding(text);
    const embedding = format === 'base64' ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector;
    return { object: 'embedding', index, embedding };
  });
  sendJson(
    ex.res,
    200,
    { object: 'list', data, model: body.model, usage: { prompt_tokens: promptTokens, total_tokens: promptTokens } },
    { 'x-request-id': randomId('req_', 32) },
  );
}

/** The texts to embed; token arrays become their numbers joined by spaces (one word per token). */
function embeddingInputs(input: unknown): string[] | undefined {
  const one = (value: unknown): string | undefined => {
    if (typeof value === 'string') return value === '' ? undefined : value;
    if (Array.isArray(value) && value.length > 0 && value.every((n) => typeof n === 'number')) return value.join(' ');
    return undefined;
  };
  if (typeof input === 'string') return one(input) === undefined ? undefined : [input];
  if (!Array.isArray(input) || input.length === 0) return undefined;
  if (input.every((n) => typeof n === 'number')) return [input.join(' ')];
  const texts = input.map(one);
  return texts.every((text) => text !== undefined) ? (texts as string[]) : undefined;
}

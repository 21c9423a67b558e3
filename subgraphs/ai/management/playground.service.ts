import { randomBytes } from 'node:crypto';
import { requireWorkspaceRole } from '../../../core/access';
import type { RequestContext } from '../../../core/context';
import { NotFoundError, ValidationError } from '../../../core/errors';
import type { ChatMessage, ContentPart } from '../protocol';
import type { PlaygroundEngine, PlaygroundRouting } from './playground';
import type { AiPlaygroundChatArgs, AiPlaygroundChatResult, AiPlaygroundEmbeddingsArgs, AiPlaygroundEmbeddingsResult } from './playground.types';
import type { PoolService } from './pools.service';
import type { UpstreamService } from './upstreams.service';
import { intInRange, optionalId, requireModel } from './validation';
import { parseWorkflowChatInput, type WorkflowChatResult } from './workflow-chat';

const MAX_MESSAGES = 256;
const MAX_TEXT_CHARS = 1_000_000;
const MAX_EMBEDDING_INPUTS = 256;

export interface PlaygroundServiceOptions {
  engine: PlaygroundEngine;
  pools: PoolService;
  upstreams: UpstreamService;
}

/**
 * The console's playground: a chat or embeddings request sent through a pool or to one
 * upstream by the proxy engine, in-process, metered like any other request. Member role (it
 * spends the workspace's credentials); a pool or upstream of another workspace is 404.
 */
export class PlaygroundService {
  constructor(private readonly o: PlaygroundServiceOptions) {}

  async chat(ctx: RequestContext, args: AiPlaygroundChatArgs): Promise<AiPlaygroundChatResult> {
    return this.sendChat(await this.route(ctx, args), args);
  }

  /**
   * A workflow's ai-chat step (internal route `workflows/chat`): one user message, sent like a
   * playground chat, so its usage row and metering go to the workspace. The caller is the
   * platform acting for an execution of `workspaceId`, not a user: the pool or upstream must
   * belong to that workspace (404 otherwise). A signed user principal, if one ever comes, must
   * also be a member there.
   */
  async workflowChat(ctx: RequestContext, body: unknown, signal?: AbortSignal): Promise<WorkflowChatResult> {
    const input = parseWorkflowChatInput(body);
    if (ctx.principal) requireWorkspaceRole(ctx, input.workspaceId, 'member');
    const target = input.poolId ? await this.o.pools.loadInWorkspace(input.workspaceId, input.poolId) : await this.o.upstreams.loadInWorkspace(input.workspaceId, input.upstreamId!);
    const routing: PlaygroundRouting = {
      workspaceId: target.workspaceId,
      ...(input.poolId ? { poolId: input.poolId } : { upstreamId: input.upstreamId }),
      requestId: newRequestId('req_wf'),
      userId: ctx.principal?.userId ?? null,
      // A cancelled step hangs up: the vendor call stops rather than completing (and being metered) for no one.
      ...(signal ? { signal } : {}),
    };
    const answer = await this.sendChat(routing, { model: input.model, system: input.system, messages: [{ role: 'user', content: input.prompt }], maxTokens: input.maxTokens });
    return { text: answer.text, inputTokens: answer.usage.inputTokens, outputTokens: answer.usage.outputTokens };
  }

  private async sendChat(routing: PlaygroundRouting, args: Pick<AiPlaygroundChatArgs, 'model' | 'messages' | 'system' | 'maxTokens' | 'temperature'>): Promise<AiPlaygroundChatResult> {
    const { system, messages } = parseMessages(args.messages, args.system);
    const temperature = args.temperature ?? undefined;
    if (temperature !== undefined && !(temperature >= 0 && temperature <= 2)) throw new ValidationError('temperature must be from 0 to 2', { field: 'temperature' });
    const request = {
      model: requireModel(args.model),
      ...(system ? { system } : {}),
      messages,
      ...(args.maxTokens != null ? { maxTokens: intInRange(args.maxTokens, 'maxTokens', 1, 200_000)! } : {}),
      ...(temperature !== undefined ? { temperature } : {}),
      stream: false,
    };
    const { response, upstreamId, latencyMs } = await this.o.engine.chat({ ...routing, request });
    const text = response.content
      .filter((part): part is Extract<ContentPart, { type: 'text' }> => part.type === 'text')
      .map((part) => part.text)
      .join('');
    return { requestId: routing.requestId, model: response.model, text, finishReason: response.finishReason, usage: response.usage, upstreamId, latencyMs: Math.round(latencyMs) };
  }

  async embeddings(ctx: RequestContext, args: AiPlaygroundEmbeddingsArgs): Promise<AiPlaygroundEmbeddingsResult> {
    const routing = await this.route(ctx, args);
    const request = { model: requireModel(args.model), inputs: parseEmbeddingInput(args.input) };
    const { response, upstreamId, latencyMs } = await this.o.engine.embed({ ...routing, request });
    return { requestId: routing.requestId, model: response.model, vectors: response.vectors, usage: response.usage, upstreamId, latencyMs: Math.round(latencyMs) };
  }

  /** Exactly one of poolId and upstreamId, in a workspace where the caller is a member (and the given workspace, if any). */
  private async route(ctx: RequestContext, args: { workspaceId?: string | null; poolId?: string | null; upstreamId?: string | null }): Promise<PlaygroundRouting> {
    const poolId = optionalId(args.poolId);
    const upstreamId = optionalId(args.upstreamId);
    if (Boolean(poolId) === Boolean(upstreamId)) throw new ValidationError('Give exactly one of poolId and upstreamId', { field: poolId ? 'upstreamId' : 'poolId' });
    const target = poolId ? await this.o.pools.load(ctx, poolId, 'member') : await this.o.upstreams.load(ctx, upstreamId!, 'member');
    const explicit = optionalId(args.workspaceId);
    if (explicit && explicit !== target.workspaceId) throw poolId ? new NotFoundError('Pool', poolId) : new NotFoundError('Upstream', upstreamId);
    return {
      workspaceId: target.workspaceId,
      ...(poolId ? { poolId } : { upstreamId }),
      requestId: newRequestId('req_pg'),
      userId: ctx.principal?.userId ?? null,
    };
  }
}

/** The id the usage row (and conversation, if stored) is written under: `<prefix>_<random>`, unique per call. */
function newRequestId(prefix: 'req_pg' | 'req_wf'): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}

/**
 * OpenAI-style messages to the canonical form: `system` messages join the system prompt (after
 * the `system` argument), `user` and `assistant` keep their text; content is a string or an
 * array of `{ type: 'text', text }` parts.
 */
export function parseMessages(value: unknown, systemArg?: string | null): { system?: string; messages: ChatMessage[] } {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_MESSAGES) {
    throw new ValidationError(`messages must be an array of 1 to ${MAX_MESSAGES} messages`, { field: 'messages' });
  }
  const system: string[] = systemArg ? [systemArg] : [];
  const messages: ChatMessage[] = [];
  let chars = system.join('').length;
  value.forEach((message, i) => {
    const field = `messages[${i}]`;
    if (!message || typeof message !== 'object' || Array.isArray(message)) throw new ValidationError(`${field} must be an object with role and content`, { field });
    const { role, content } = message as { role?: unknown; content?: unknown };
    if (role !== 'system' && role !== 'user' && role !== 'assistant') throw new ValidationError(`${field}.role must be system, user or assistant`, { field: `${field}.role` });
    const text = contentText(content, `${field}.content`);
    chars += text.length;
    if (role === 'system') system.push(text);
    else messages.push({ role, content: [{ type: 'text', text }] });
  });
  if (chars > MAX_TEXT_CHARS) throw new ValidationError(`messages may hold at most ${MAX_TEXT_CHARS} characters`, { field: 'messages' });
  if (!messages.length) throw new ValidationError('messages must include a user message', { field: 'messages' });
  return { ...(system.length ? { system: system.join('\n\n') } : {}), messages };
}

function contentText(content: unknown, field: string): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content) && content.length) {
    return content
      .map((part, i) => {
        const { type, text } = (part ?? {}) as { type?: unknown; text?: unknown };
        if (type !== 'text' || typeof text !== 'string') throw new ValidationError(`${field}[${i}] must be { type: "text", text }`, { field: `${field}[${i}]` });
        return text;
      })
      .join('');
  }
  throw new ValidationError(`${field} must be a string or an array of text parts`, { field });
}

export function parseEmbeddingInput(value: unknown): string[] {
  const inputs = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(inputs) || inputs.length === 0 || inputs.length > MAX_EMBEDDING_INPUTS) {
    throw new ValidationError(`input must be a string or an array of 1 to ${MAX_EMBEDDING_INPUTS} strings`, { field: 'input' });
  }
  let chars = 0;
  inputs.forEach((text, i) => {
    if (typeof text !== 'string' || !text) throw new ValidationError(`input[${i}] must be a non-empty string`, { field: `input[${i}]` });
    chars += text.length;
  });
  if (chars > MAX_TEXT_CHARS) throw new ValidationError(`input may hold at most ${MAX_TEXT_CHARS} characters`, { field: 'input' });
  return inputs as string[];
}

import { ValidationError } from '../../../core/errors';
import { intInRange, requireModel } from './validation';

/** Body of the internal route `workflows/chat`: a workflow's ai-chat step. */
export interface WorkflowChatInput {
  /** The workspace the execution runs in; the pool or upstream must belong to it. */
  workspaceId: string;
  /** Exactly one of poolId and upstreamId. */
  poolId?: string;
  upstreamId?: string;
  model: string;
  system?: string;
  /** The user message. */
  prompt: string;
  maxTokens?: number;
}

/** What the step gets back. */
export interface WorkflowChatResult {
  text: string;
  inputTokens: number;
  outputTokens: number;
}

const ID_MAX_LENGTH = 128;
/** The ai-chat node's own bounds (subgraphs/workflows/nodes/builtins/ai-chat.ts). */
const SYSTEM_MAX_CHARS = 100_000;
const PROMPT_MAX_CHARS = 1_000_000;
const MAX_TOKENS = 200_000;

/** Checks the route's body; each failure is a 400 naming the field. */
export function parseWorkflowChatInput(body: unknown): WorkflowChatInput {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new ValidationError('The body must be a JSON object', { field: 'body' });
  const b = body as Record<string, unknown>;
  const workspaceId = requireId(b.workspaceId, 'workspaceId');
  const poolId = idOrNothing(b.poolId, 'poolId');
  const upstreamId = idOrNothing(b.upstreamId, 'upstreamId');
  if (Boolean(poolId) === Boolean(upstreamId)) throw new ValidationError('Give exactly one of poolId and upstreamId', { field: poolId ? 'upstreamId' : 'poolId' });
  const model = requireModel(b.model);
  if (b.system !== undefined && b.system !== null && (typeof b.system !== 'string' || b.system.length > SYSTEM_MAX_CHARS)) {
    throw new ValidationError(`system must be a string of at most ${SYSTEM_MAX_CHARS} characters`, { field: 'system' });
  }
  if (typeof b.prompt !== 'string' || !b.prompt.trim() || b.prompt.length > PROMPT_MAX_CHARS) {
    throw new ValidationError(`prompt must be a non-empty string of at most ${PROMPT_MAX_CHARS} characters`, { field: 'prompt' });
  }
  if (b.maxTokens !== undefined && b.maxTokens !== null && typeof b.maxTokens !== 'number') throw new ValidationError(`maxTokens must be an integer from 1 to ${MAX_TOKENS}`, { field: 'maxTokens' });
  const maxTokens = intInRange(b.maxTokens as number | null | undefined, 'maxTokens', 1, MAX_TOKENS);
  return {
    workspaceId,
    ...(poolId ? { poolId } : { upstreamId }),
    model,
    ...(b.system ? { system: b.system as string } : {}),
    prompt: b.prompt,
    ...(maxTokens !== null ? { maxTokens } : {}),
  };
}

function requireId(value: unknown, field: string): string {
  if (typeof value !== 'string' || !value || value.length > ID_MAX_LENGTH) throw new ValidationError(`${field} must be an id of 1 to ${ID_MAX_LENGTH} characters`, { field });
  return value;
}

function idOrNothing(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  return requireId(value, field);
}

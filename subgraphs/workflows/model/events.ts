import type { ExecutionStatus, StepStatus } from './entities';

/**
 * Live events of an execution, published by the engine on TOPICS.workflowExecution with the
 * execution id as the channel id: the subscription relays them, webhooks and `execute(wait)`
 * wait on them.
 */
export type ExecutionEvent =
  | { type: 'status'; executionId: string; status: ExecutionStatus; error?: string | null; output?: unknown; at: string }
  | { type: 'step'; executionId: string; nodeId: string; nodeType: string; status: StepStatus | 'waiting'; error?: string | null; durationMs?: number | null; at: string }
  /** What a webhook caller gets: from a respond-to-webhook node, or the last node's output when the execution ends. */
  | { type: 'respond'; executionId: string; response: { status: number; headers: Record<string, string>; body: unknown }; at: string };

export const FINISHED_STATUSES: readonly ExecutionStatus[] = ['succeeded', 'failed', 'cancelled'];

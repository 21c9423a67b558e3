import { TOPICS, type PlatformPubSub } from '../../../core/pubsub';
import type { ExecutionEvent } from '../model/events';

/** Asks the engine running an execution to stop it (the API publishes this on cancel). */
export interface CancelRequestedEvent {
  type: 'cancel-requested';
  executionId: string;
}

export type EngineChannelEvent = ExecutionEvent | CancelRequestedEvent;

type Without<T, K extends keyof any> = T extends unknown ? Omit<T, K> : never;

/** Publishes an event on the execution's channel (TOPICS.workflowExecution, id = execution id). */
export function publishExecutionEvent(pubsub: PlatformPubSub, event: Without<ExecutionEvent, 'at'>): void {
  pubsub.publish(TOPICS.workflowExecution, { ...event, at: new Date().toISOString() }, event.executionId);
}

/** Calls `handler` for every event of one execution until the returned function is called. */
export function onExecutionEvents(pubsub: PlatformPubSub, executionId: string, handler: (event: EngineChannelEvent) => void): () => void {
  return pubsub.on<EngineChannelEvent>(TOPICS.workflowExecution, handler, executionId);
}

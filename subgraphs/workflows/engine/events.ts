import { TOPICS, type PlatformPubSub } from '../../../core/pubsub';
import type { ExecutionEvent } from '../model/events';

/** Asks the engine running an execution to stop it (the API publishes this on cancel). */
export interface CancelRequestedEvent {
  type: 'cancel-requested';
  executionId: string;
}

export type EngineChannelEvent = ExecutionEvent | CancelRequestedEvent;

export type Without<T, K extends keyof any> = T extends unknown ? Omit<T, K> : never;

/**
 * Publishes several events of one execution as one message (an array): the engine gathers the
 * events a write recorded and publishes them once it commits. Subscribers see them one by one
 * (onExecutionEvents, flattenExecutionEvents).
 */
export function publishExecutionEvents(pubsub: PlatformPubSub, executionId: string, events: ExecutionEvent[]): void {
  if (events.length === 0) return;
  pubsub.publish(TOPICS.workflowExecution, events.length === 1 ? events[0] : events, executionId);
}

/** A message of the execution channel as the events it carries (one, or a batch). */
export function flattenExecutionEvents(payload: EngineChannelEvent | EngineChannelEvent[] | null | undefined): EngineChannelEvent[] {
  if (!payload) return [];
  return Array.isArray(payload) ? payload : [payload];
}

/**
 * Engines publish an execution's events only while someone follows it: a follower announces
 * itself on TOPICS.workflowWatch, and the engine running the execution then (re)publishes every
 * event of its run so far and publishes the rest as they come. SUBSCRIBE is asynchronous, so the
 * announcement is repeated a few times in the first second; followers get duplicates and drop
 * them (`dedupeKey`).
 */
export function watchExecution(pubsub: PlatformPubSub, executionId: string): () => void {
  const send = () => pubsub.publish(TOPICS.workflowWatch, { executionId });
  send();
  const timers = [50, 250, 1000].map((ms) => {
    const timer = setTimeout(send, ms);
    timer.unref();
    return timer;
  });
  return () => timers.forEach(clearTimeout);
}

/** Identity of an event for dropping the duplicates a resend produces. */
export function dedupeKey(event: EngineChannelEvent): string {
  if (event.type === 'step') return `step:${event.nodeId}:${event.status}:${event.at}`;
  if (event.type === 'status') return `status:${event.status}:${event.at}`;
  return `${event.type}:${(event as { at?: string }).at ?? ''}`;
}

/**
 * Calls `handler` for every event of one execution until the returned function is called,
 * following it (watchExecution) unless `watch` is false (the engine's own cancel listener), and
 * dropping duplicates.
 */
export function onExecutionEvents(pubsub: PlatformPubSub, executionId: string, handler: (event: EngineChannelEvent) => void, options: { watch?: boolean } = {}): () => void {
  const seen = new Set<string>();
  const off = pubsub.on<EngineChannelEvent | EngineChannelEvent[]>(
    TOPICS.workflowExecution,
    (payload) => {
      for (const event of flattenExecutionEvents(payload)) {
        const key = dedupeKey(event);
        if (seen.has(key)) continue;
        seen.add(key);
        handler(event);
      }
    },
    executionId,
  );
  const stopWatching = options.watch === false ? () => undefined : watchExecution(pubsub, executionId);
  return () => {
    stopWatching();
    off();
  };
}

/** How long an announcement keeps an execution followed. */
const WATCH_TTL_MS = 10 * 60_000;

/**
 * The executions followed, as one process's engine knows them: one subscription to
 * TOPICS.workflowWatch per process. `onWatch` tells a running execution to resend its events.
 */
export class WatchedExecutions {
  private readonly until = new Map<string, number>();
  private readonly listeners = new Map<string, () => void>();
  private readonly off: () => void;

  constructor(pubsub: PlatformPubSub) {
    this.off = pubsub.on<{ executionId?: unknown }>(TOPICS.workflowWatch, (message) => {
      const id = message?.executionId;
      if (typeof id !== 'string') return;
      if (this.until.size > 10_000) this.prune();
      this.until.set(id, Date.now() + WATCH_TTL_MS);
      this.listeners.get(id)?.();
    });
  }

  isWatched(executionId: string): boolean {
    const until = this.until.get(executionId);
    return until !== undefined && until > Date.now();
  }

  /** Calls `listener` on each announcement for the execution, until the returned function is called. */
  onWatch(executionId: string, listener: () => void): () => void {
    this.listeners.set(executionId, listener);
    return () => {
      if (this.listeners.get(executionId) === listener) this.listeners.delete(executionId);
    };
  }

  close(): void {
    this.off();
    this.until.clear();
    this.listeners.clear();
  }

  private prune(): void {
    const now = Date.now();
    for (const [id, until] of this.until) if (until <= now) this.until.delete(id);
    // Still too many: forget the oldest announcements.
    for (const id of this.until.keys()) {
      if (this.until.size <= 5_000) break;
      this.until.delete(id);
    }
  }
}

import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { TOPICS, type PlatformPubSub } from '../../../core/pubsub';
import type { ExecutionStatus } from '../model/entities';

/** What a webhook caller gets: from a respond-to-webhook node, the last node's output, or the error. */
export interface WebhookResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** A message on a waiting process's reply channel (TOPICS.workflowReplies, id = its token). */
export type ExecutionReply =
  | { kind: 'respond'; executionId: string; response: WebhookResponse }
  | { kind: 'finished'; executionId: string; status: ExecutionStatus }
  | { kind: 'ping'; executionId?: undefined };

/**
 * Carried in the execution's job: where the engine sends the answer someone waits for, and which
 * one (`respond`: the webhook answer; `finish`: the final status, after it commits).
 */
export interface ReplyRequest {
  to: string;
  on: 'respond' | 'finish';
}

/** The reply channels of this process by token: a reply to one of them is handed over in-process, without Redis. */
const LOCAL_WAITERS = new Map<string, ReplyWaiter>();

export function publishReply(pubsub: PlatformPubSub, to: string, reply: ExecutionReply): void {
  const local = reply.kind === 'ping' ? undefined : LOCAL_WAITERS.get(to);
  if (local) {
    // Same process (npm start runs the worker beside the webhook routes): no round trip through Redis.
    const copy = JSON.parse(JSON.stringify(reply)) as ExecutionReply;
    setImmediate(() => local.deliver(copy));
    return;
  }
  pubsub.publish(TOPICS.workflowReplies, reply, to);
}

/**
 * One reply channel per process: callers that wait for an execution (webhook routes, execute with
 * wait) register the execution id here and pass `{ to: token }` with the job, so waiting costs
 * no SUBSCRIBE per request. The channel is live once a ping sent to itself came back (`ready`).
 */
export class ReplyWaiter {
  readonly token = `${os.hostname()}-${process.pid}-${randomBytes(6).toString('hex')}`;
  private readonly waiting = new Map<string, Set<(reply: ExecutionReply) => void>>();
  private readonly off: () => void;
  private readonly pinger: NodeJS.Timeout;
  /** Resolves once the subscription is live (or after 3 s: callers also poll the row, so nothing waits forever). */
  readonly ready: Promise<void>;

  constructor(private readonly pubsub: PlatformPubSub) {
    let markReady!: () => void;
    this.ready = new Promise<void>((resolve) => (markReady = resolve));
    this.off = pubsub.on<ExecutionReply>(
      TOPICS.workflowReplies,
      (reply) => {
        if (reply?.kind === 'ping') return markReady();
        this.deliver(reply);
      },
      this.token,
    );
    LOCAL_WAITERS.set(this.token, this);
    // SUBSCRIBE is asynchronous: ping the channel until a ping comes back.
    const ping = () => publishReply(pubsub, this.token, { kind: 'ping' });
    this.pinger = setInterval(ping, 50);
    this.pinger.unref();
    ping();
    const giveUp = setTimeout(markReady, 3000);
    giveUp.unref();
    void this.ready.then(() => {
      clearInterval(this.pinger);
      clearTimeout(giveUp);
    });
  }

  /** Calls `handler` with every reply for the execution until the returned function is called. Register before starting it. */
  on(executionId: string, handler: (reply: ExecutionReply) => void): () => void {
    let handlers = this.waiting.get(executionId);
    if (!handlers) this.waiting.set(executionId, (handlers = new Set()));
    handlers.add(handler);
    return () => {
      handlers!.delete(handler);
      if (handlers!.size === 0 && this.waiting.get(executionId) === handlers) this.waiting.delete(executionId);
    };
  }

  /** Hands a reply to the callers waiting for its execution. */
  deliver(reply: ExecutionReply): void {
    if (!reply?.executionId) return;
    for (const handler of this.waiting.get(reply.executionId) ?? []) handler(reply);
  }

  /** Where the engine should send `on` replies. */
  request(on: ReplyRequest['on']): ReplyRequest {
    return { to: this.token, on };
  }

  close(): void {
    LOCAL_WAITERS.delete(this.token);
    clearInterval(this.pinger);
    this.off();
    this.waiting.clear();
  }
}

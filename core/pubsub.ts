import { createPubSub } from '@graphql-yoga/subscription';
import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import type { PubSub as TypeGraphQLPubSub } from 'type-graphql';
import { createRedis, type Redis } from './redis';

/** Topics of live events, in one place so publishers and subscribers agree. */
export const TOPICS = {
  /** A workspace's members changed; payload WorkspaceMembershipEvent, id = workspace id. */
  workspaceMembership: 'identity.workspace-membership',
  /** A principal's cached form is stale (membership, key revoked, user changed). */
  principalChanged: 'identity.principal-changed',
  /** A workspace's stored rate limits changed; payload RateLimitsChangedEvent. Gateways drop their cached copy. */
  rateLimitsChanged: 'billing.rate-limits-changed',
  /** A workspace's AI gateway configuration changed (upstream, pool, member, key); payload { workspaceId }. Proxies drop cached routes. */
  aiConfigChanged: 'ai.config-changed',
  /** An execution's progress (step started/finished, status changed); payload ExecutionEvent, id = execution id. */
  workflowExecution: 'workflows.execution',
  /** Someone follows an execution's events; payload { executionId }. Engines publish only followed executions' events (subgraphs/workflows/engine/events.ts). */
  workflowWatch: 'workflows.watch',
  /** Answers for one waiting process (a webhook route, execute with wait); payload ExecutionReply (subgraphs/workflows/engine/replies.ts), id = the process's reply token. */
  workflowReplies: 'workflows.replies',
  /** A workflow's triggers changed (deploy, undeploy, update while deployed, delete); payload { workflowId }. Webhook routes drop cached registrations. */
  workflowTriggersChanged: 'workflows.triggers-changed',
  /** An analytics installation changed (domains, key, deleted); payload { installationId }. Ingestion drops its cached copy. */
  analyticsInstallationChanged: 'analytics.installation-changed',
  /** A sandbox changed status; payload SandboxStatusEvent, id = sandbox id. */
  sandboxStatus: 'compute.sandbox-status',
} as const;

/** Payload of TOPICS.sandboxStatus (published by whoever applied the transition). */
export interface SandboxStatusEvent {
  sandboxId: string;
  workspaceId: string;
  fromStatus: string | null;
  toStatus: string;
  reason: string;
  at: string;
}

/** Payload of TOPICS.rateLimitsChanged. */
export interface RateLimitsChangedEvent {
  workspaceId: string;
}

export interface PlatformPubSub {
  /** What type-graphql's `buildSchema({ pubSub })` takes. */
  readonly graphql: TypeGraphQLPubSub;
  publish(topic: string, payload: unknown, id?: string): void;
  /**
   * As publish, resolving once Redis has taken the message. Redis queues it to every subscriber's
   * connection in the same step as its answer to the publisher, so an answer sent after this
   * resolves is not ahead of the message: invalidations that a caller's next request depends on
   * (a new membership, a revoked key) use this before answering. Rejects after 2 s without Redis.
   */
  publishSettled(topic: string, payload: unknown, id?: string): Promise<void>;
  /** Calls `handler` for every event of the topic until the returned function is called. */
  on<T = unknown>(topic: string, handler: (payload: T) => void, id?: string): () => void;
  close(): Promise<void>;
}

/**
 * Options of a connection that only subscribes. ioredis 5.8.2+ can send its handshake (CLIENT
 * SETINFO, the INFO ready check) after a SUBSCRIBE issued while connecting; the connection is
 * then in subscriber mode, the check fails, and the connection is torn down and rebuilt,
 * losing what was published meanwhile (redis/ioredis#2037, fixed in 6.0). A subscriber
 * connection needs neither step.
 */
/** How long publishSettled waits for Redis before giving up (the message still goes once Redis is back). */
const SETTLE_TIMEOUT_MS = 2000;

export const SUBSCRIBER_OPTIONS = { enableReadyCheck: false, disableClientInfo: true } as const;

/**
 * Live events over Redis pub/sub: workers and services publish, subscription resolvers in any
 * process receive. Every channel is prefixed, so deployments sharing a Redis do not mix.
 */
export function createPlatformPubSub(redisUrl: string, prefix: string): PlatformPubSub {
  const publishClient: Redis = createRedis(redisUrl);
  const subscribeClient: Redis = createRedis(redisUrl, SUBSCRIBER_OPTIONS);
  const inner = createPubSub({ eventTarget: createRedisEventTarget({ publishClient, subscribeClient }) });
  const channel = (topic: string) => `${prefix}:${topic}`;
  const innerAny = inner as unknown as {
    publish(routingKey: string, ...args: unknown[]): void;
    subscribe(routingKey: string, id?: unknown): AsyncIterable<unknown> & { return?: () => Promise<unknown> };
  };

  const graphql: TypeGraphQLPubSub = {
    publish: (routingKey: string, ...args: unknown[]) => innerAny.publish(channel(routingKey), ...args),
    subscribe: (routingKey: string, dynamicId?: unknown) => innerAny.subscribe(channel(routingKey), dynamicId),
  };

  return {
    graphql,
    publish(topic, payload, id) {
      if (id === undefined) innerAny.publish(channel(topic), payload);
      else innerAny.publish(channel(topic), id, payload);
    },
    async publishSettled(topic, payload, id) {
      // The channel and encoding createPubSub and the Redis event target use.
      const published = publishClient.publish(id === undefined ? channel(topic) : `${channel(topic)}:${id}`, JSON.stringify(payload ?? null));
      // Commands wait for a reconnect (maxRetriesPerRequest: null): a Redis outage must not hold the caller's answer.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`Redis did not take the ${topic} message within ${SETTLE_TIMEOUT_MS} ms`)), SETTLE_TIMEOUT_MS);
      });
      try {
        await Promise.race([published, late]);
      } finally {
        clearTimeout(timer);
      }
    },
    on(topic, handler, id) {
      const iterable = innerAny.subscribe(channel(topic), id);
      const iterator = iterable[Symbol.asyncIterator]();
      let stopped = false;
      void (async () => {
        while (!stopped) {
          const next = await iterator.next();
          if (next.done) return;
          try {
            handler(next.value as never);
          } catch {
            /* a handler's failure must not end the subscription */
          }
        }
      })();
      return () => {
        stopped = true;
        void iterator.return?.();
      };
    },
    async close() {
      // QUIT waits for a connection; during a Redis outage there is none, so a stop must not wait on it.
      const quit = Promise.allSettled([publishClient.quit(), subscribeClient.quit()]);
      await Promise.race([quit, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
      publishClient.disconnect();
      subscribeClient.disconnect();
    },
  };
}

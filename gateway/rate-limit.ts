import { HeaderMap, type ApolloServerPlugin, type GraphQLRequestListener } from '@apollo/server';
import { GraphQLError, Kind, type OperationDefinitionNode } from 'graphql';
import { RateLimiterRes, type RateLimiterRedis } from 'rate-limiter-flexible';
import type { RequestContext } from '../core/context';
import { RateLimitedError } from '../core/errors';
import type { Logger } from '../core/logger';
import type { Principal } from '../core/principal';
import { effectiveLimits, RATE_LIMIT_WINDOW_SECONDS, type LimitedClass, type RateLimitValues, type RouteClass } from '../core/rate-limits';
import { clientAddress } from '../core/http';
import { createRedis, type Redis } from '../core/redis';
import type { RawRouteHandler } from '../rest-compat';
import { requestCounter } from '../core/request-counter';
import type { PlatformRuntime } from '../core/subgraph';
import type { GatewayContext } from './context';
import { WorkspaceLimits } from './workspace-limits';

export interface RequestRateLimiterOptions {
  /** Shared by every gateway process, so a budget holds across all of them. */
  redis: Redis;
  redisPrefix: string;
  /** Each workspace's limits (cached; see WorkspaceLimits). */
  limits: { get(workspaceId: string): Promise<RateLimitValues> };
  /** Budget per client address of callers without credentials. */
  anonymousPerMinute: number;
  logger: Logger;
}

/** The verdict on one request and what the response says about it. */
export interface RateLimitDecision {
  allowed: boolean;
  routeClass: LimitedClass;
  /** The workspace counted against, or the client address for `anonymous`. */
  subject: string;
  limit: number;
  remaining: number;
  /** Seconds until the window ends. */
  resetSeconds: number;
  /** RateLimit-Policy and RateLimit (draft-ietf-httpapi-ratelimit-headers), Retry-After when refused. */
  headers: Record<string, string>;
}

/** ioredis states in which a command would wait for a reconnect. */
const UNAVAILABLE_STATES = new Set(['reconnecting', 'close', 'end']);

/** Most distinct (class, limit) counters kept; there are a handful in practice (plans and overrides). */
const MAX_COUNTERS = 1_000;

/**
 * Request rate limits: every request is counted, at arrival, against its workspace and route
 * class (`read`, `write`) in a fixed 60-second window in Redis, or against its client address
 * (`anonymous`) when it carries no credentials. One Redis round-trip per request; the limits come
 * from an in-process cache.
 *
 * rate-limiter-flexible keeps the count under `keyPrefix:key` whatever `points` is, so
 * workspaces with different limits share one key space per class and differ only in the counter
 * instance (one per (class, limit)) that judges their count.
 */
export class RequestRateLimiter {
  private readonly counters = new Map<string, RateLimiterRedis>();
  private redisDown = false;

  constructor(private readonly options: RequestRateLimiterOptions) {}

  /**
   * Counts a request and judges it. `explicitWorkspaceId` is the workspace the operation names
   * (used only when the caller belongs to it). Null when Redis cannot count (the request goes
   * through, logged once until Redis answers again).
   */
  async admit(ctx: RequestContext, routeClass: RouteClass, explicitWorkspaceId?: string): Promise<RateLimitDecision | null> {
    let limitedClass: LimitedClass;
    let subject: string;
    let limit: number;
    if (ctx.principal) {
      limitedClass = routeClass;
      subject = requestWorkspace(ctx.principal, explicitWorkspaceId, ctx.workspaceHeader);
      const limits = await this.options.limits.get(subject);
      limit = routeClass === 'write' ? limits.writeRequestsPerMinute : limits.readRequestsPerMinute;
    } else {
      limitedClass = 'anonymous';
      subject = ctx.clientIp;
      limit = this.options.anonymousPerMinute;
    }

    let res: RateLimiterRes;
    let allowed = true;
    try {
      // While the connection is known to be down, requests are not held up waiting for it.
      if (UNAVAILABLE_STATES.has(this.options.redis.status)) throw new Error(`Redis connection is ${this.options.redis.status}`);
      res = await this.counter(limitedClass, limit).consume(subject);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) {
        if (!this.redisDown) this.options.logger.warn('rate limits cannot be counted (Redis); requests go through uncounted until it answers', { err });
        this.redisDown = true;
        return null;
      }
      res = err;
      allowed = false;
    }
    if (this.redisDown) this.options.logger.info('rate limits are counted again');
    this.redisDown = false;

    const remaining = Math.max(0, limit - res.consumedPoints);
    const resetSeconds = Math.max(allowed ? 0 : 1, Math.ceil(res.msBeforeNext / 1000));
    const headers: Record<string, string> = {
      'ratelimit-policy': `"${limitedClass}";q=${limit};w=${RATE_LIMIT_WINDOW_SECONDS}`,
      ratelimit: `"${limitedClass}";r=${remaining};t=${resetSeconds}`,
    };
    if (!allowed) headers['retry-after'] = String(resetSeconds);
    return { allowed, routeClass: limitedClass, subject, limit, remaining, resetSeconds, headers };
  }

  private counter(limitedClass: LimitedClass, points: number): RateLimiterRedis {
    const key = `${limitedClass}:${points}`;
    let counter = this.counters.get(key);
    if (!counter) {
      if (this.counters.size >= MAX_COUNTERS) this.counters.clear();
      counter = requestCounter(this.options.redis, this.options.redisPrefix, limitedClass, points);
      this.counters.set(key, counter);
    }
    return counter;
  }
}

/**
 * The workspace a request is counted against (ARCHITECTURE.md, "Workspace"): the operation's
 * own when the caller belongs to it, else X-Workspace-ID when the caller belongs to it, else the
 * caller's personal workspace. Naming someone else's workspace never spends its budget.
 */
export function requestWorkspace(principal: Principal, explicit: string | undefined, header: string | undefined): string {
  if (explicit && principal.memberships[explicit]) return explicit;
  if (header && principal.memberships[header]) return header;
  return principal.defaultWorkspaceId;
}

/**
 * The workspace an operation names: a `workspaceId` argument of a root field (a literal or a
 * variable), else a `workspaceId` variable; the first one the caller belongs to.
 */
export function operationWorkspace(operation: OperationDefinitionNode, variables: Record<string, unknown> | undefined, principal: Principal | null): string | undefined {
  if (!principal) return undefined;
  const isMember = (value: unknown): value is string => typeof value === 'string' && principal.memberships[value] !== undefined;
  for (const selection of operation.selectionSet.selections) {
    if (selection.kind !== Kind.FIELD) continue;
    for (const arg of selection.arguments ?? []) {
      if (arg.name.value !== 'workspaceId') continue;
      const value = arg.value.kind === Kind.STRING ? arg.value.value : arg.value.kind === Kind.VARIABLE ? variables?.[arg.value.name.value] : undefined;
      if (isMember(value)) return value;
    }
  }
  return isMember(variables?.workspaceId) ? variables.workspaceId : undefined;
}

/** The route class of an operation: mutations write; queries and subscriptions read. */
export function routeClassOf(operation: OperationDefinitionNode): RouteClass {
  return operation.operation === 'mutation' ? 'write' : 'read';
}

/** The domain error of a refused request: code RATE_LIMITED, with the seconds to wait. */
function rateLimitedError(decision: RateLimitDecision): RateLimitedError {
  const who = decision.routeClass === 'anonymous' ? 'this address' : `workspace ${decision.subject}`;
  return new RateLimitedError(
    `Too many ${decision.routeClass} requests: ${who} may make ${decision.limit} per ${RATE_LIMIT_WINDOW_SECONDS} s; retry in ${decision.resetSeconds} s`,
    decision.resetSeconds,
    { class: decision.routeClass, limit: decision.limit, windowSeconds: RATE_LIMIT_WINDOW_SECONDS },
  );
}

/** The GraphQL error of a refused request: code RATE_LIMITED, HTTP 429 with Retry-After. */
export function rateLimitedGraphQLError(decision: RateLimitDecision): GraphQLError {
  const error = rateLimitedError(decision);
  // Apollo reads `extensions.http` (status, HeaderMap) into the response head and drops it from the body.
  const http = { status: 429, headers: new HeaderMap([['retry-after', String(decision.resetSeconds)]]) };
  return new GraphQLError(error.message, { originalError: error, extensions: { code: error.code, details: error.details, http } as Record<string, unknown> });
}

/**
 * The Apollo plugin: counts each operation once it is resolved (its type and variables known),
 * sets the rate-limit headers on every counted response, and refuses with 429 RATE_LIMITED. The
 * same pipeline serves GraphQL over HTTP, REST (executeOperation) and operations over graphql-ws.
 */
export function useRateLimits(limiter: RequestRateLimiter): ApolloServerPlugin<GatewayContext> {
  const listener: GraphQLRequestListener<GatewayContext> = {
    async didResolveOperation({ operation, request, contextValue, response }) {
      if (!operation) return;
      const decision = await limiter.admit(contextValue, routeClassOf(operation), operationWorkspace(operation, request.variables, contextValue.principal));
      if (!decision) return;
      for (const [name, value] of Object.entries(decision.headers)) response.http.headers.set(name, value);
      if (!decision.allowed) throw rateLimitedGraphQLError(decision);
    },
  };
  return { requestDidStart: async () => listener };
}

/**
 * The check of a subscription, at subscribe time (subscriptions bypass the Apollo pipeline):
 * counted as a read. Resolves to the error to end the subscription with, if refused.
 */
export function subscriptionRateLimit(limiter: RequestRateLimiter) {
  return async (ctx: GatewayContext, operation: OperationDefinitionNode, variables: Record<string, unknown> | undefined): Promise<GraphQLError | undefined> => {
    const decision = await limiter.admit(ctx, 'read', operationWorkspace(operation, variables, ctx.principal));
    if (!decision || decision.allowed) return undefined;
    const error = rateLimitedGraphQLError(decision);
    // Over a socket there is no HTTP head: code and details only.
    return new GraphQLError(error.message, { extensions: { code: error.extensions.code, details: error.extensions.details } });
  };
}

/**
 * A raw REST route (browser redirects: no credentials, no GraphQL operation) counted like an
 * anonymous request of its client address: rate-limit headers on the answer, 429 when spent.
 */
export function limitRawRoute(limiter: RequestRateLimiter, handler: RawRouteHandler): RawRouteHandler {
  return async (req, res, ctx) => {
    const decision = await limiter.admit({ principal: null, requestId: ctx.requestId, clientIp: clientAddress(req) }, 'read');
    if (decision) for (const [name, value] of Object.entries(decision.headers)) res.setHeader(name, value);
    if (decision && !decision.allowed) throw rateLimitedError(decision);
    return handler(req, res, ctx);
  };
}

export interface GatewayRateLimits {
  limiter: RequestRateLimiter;
  /** The Apollo plugin (useRateLimits). */
  plugin: ApolloServerPlugin<GatewayContext>;
  /** The subscribe-time check for the graphql-ws server. */
  admitSubscription: ReturnType<typeof subscriptionRateLimit>;
  close(): Promise<void>;
}

/**
 * The gateway's rate limiting, or undefined when configuration turns it off
 * (`RATE_LIMITS_DISABLED=true`: no Redis connection, no counting). Limits come from billing at
 * `billingUrl`, else the default plan with the configured overrides.
 */
export function createGatewayRateLimits(runtime: PlatformRuntime, billingUrl: string, logger: Logger): GatewayRateLimits | undefined {
  const { config } = runtime;
  if (!config.rateLimitsEnabled) return undefined;
  // One retry, not the platform default of waiting for a reconnect: counting must not hold requests up.
  const redis = createRedis(runtime.redisUrl, { maxRetriesPerRequest: 1 });
  const limits = new WorkspaceLimits({
    billingUrl,
    internalSigningSecret: config.internalSigningSecret,
    pubsub: runtime.pubsub,
    fallback: (workspaceId) => effectiveLimits(config.defaultPlan, workspaceId, config.rateLimitOverrides),
    logger,
  });
  const limiter = new RequestRateLimiter({ redis, redisPrefix: config.redisPrefix, limits, anonymousPerMinute: config.anonymousRequestsPerMinute, logger });
  return {
    limiter,
    plugin: useRateLimits(limiter),
    admitSubscription: subscriptionRateLimit(limiter),
    close: async () => {
      limits.close();
      await redis.quit();
    },
  };
}

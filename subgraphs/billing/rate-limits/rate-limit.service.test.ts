import type { DataSource } from 'typeorm';
import type { PlatformConfig } from '../../../core/config';
import type { RequestContext } from '../../../core/context';
import { openSubgraphDatabase } from '../../../core/database';
import { ForbiddenError, NotFoundError, ValidationError } from '../../../core/errors';
import type { Logger } from '../../../core/logger';
import type { Principal } from '../../../core/principal';
import { createPlatformPubSub, TOPICS, type PlatformPubSub, type RateLimitsChangedEvent } from '../../../core/pubsub';
import { aiTokenMinute, PLAN_LIMITS, usageKeys } from '../../../core/rate-limits';
import { createRedis, type Redis } from '../../../core/redis';
import { requestCounter } from '../../../core/request-counter';
import { createTestConfig, createTestDatabase, eventually, TEST_REDIS_URL, type TestDatabase } from '../../../test/services';
import { billingSubgraph } from '..';
import { RateLimitRepository } from './rate-limit.repository';
import { RateLimitService } from './rate-limit.service';
import { RateLimitUsageReader } from './rate-limit.usage';

/* RateLimitService on a real PostgreSQL schema (billing's migrations) and a real Redis. */

const WS = 'ws_ratelimit000000000001';
const WS_OVERRIDDEN = 'ws_ratelimit000000000002';
const WS_OTHER = 'ws_ratelimit000000000003';

function ctxOf(memberships: Principal['memberships'] | null): RequestContext {
  const principal = memberships && { userId: 'usr_unit', username: 'unit', isAdmin: false, via: 'jwt' as const, defaultWorkspaceId: WS, memberships };
  return { principal, requestId: 'req_unit', clientIp: '127.0.0.1' };
}

const silent: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, child: () => silent };

let database: TestDatabase;
let dataSource: DataSource;
let redis: Redis;
let pubsub: PlatformPubSub;
let config: PlatformConfig;
let service: RateLimitService;
let clock: Date;

beforeAll(async () => {
  database = await createTestDatabase('t_billing_rate_limits');
  config = createTestConfig({
    databaseUrl: database.url,
    prefix: database.name,
    env: { DEFAULT_PLAN: 'free', RATE_LIMIT_OVERRIDES: JSON.stringify({ '*': { aiTokensPerMinute: 1234 }, [WS_OVERRIDDEN]: { readRequestsPerMinute: 7 } }) },
  });
  dataSource = await openSubgraphDatabase({ url: database.url, schema: 'billing', entities: billingSubgraph.entities, migrations: billingSubgraph.migrations });
  redis = createRedis(TEST_REDIS_URL);
  pubsub = createPlatformPubSub(TEST_REDIS_URL, database.name);
  clock = new Date('2030-01-01T00:00:00.000Z');
  service = new RateLimitService({
    repository: new RateLimitRepository(dataSource),
    usage: new RateLimitUsageReader(redis, config.redisPrefix),
    config,
    pubsub,
    logger: silent,
    now: () => clock,
  });
});

afterAll(async () => {
  const keys = await redis.keys(`${config.redisPrefix}:*`);
  if (keys.length) await redis.del(...keys);
  await redis?.quit();
  await pubsub?.close();
  await dataSource?.destroy();
  await database?.drop();
});

const rowCount = async (workspaceId: string) => Number((await dataSource.query('SELECT count(*) AS n FROM billing.workspace_rate_limits WHERE workspace_id = $1', [workspaceId]))[0].n);

describe('RateLimitService', () => {
  it('answers 404 to a non-member and stores nothing for it', async () => {
    const outsider = ctxOf({ ws_elsewhere: 'owner' });
    await expect(service.get(outsider, { workspaceId: WS_OTHER })).rejects.toBeInstanceOf(NotFoundError);
    await expect(service.refresh(outsider, { workspaceId: WS_OTHER })).rejects.toBeInstanceOf(NotFoundError);
    await expect(service.effective(outsider, { workspaceId: WS_OTHER })).rejects.toBeInstanceOf(NotFoundError);
    await expect(service.get(ctxOf(null), { workspaceId: WS_OTHER })).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(await rowCount(WS_OTHER)).toBe(0);
  });

  it('computes a workspace on first read from the default plan and the overrides, once', async () => {
    const viewer = ctxOf({ [WS]: 'viewer', [WS_OVERRIDDEN]: 'viewer' });
    const [first, concurrent] = await Promise.all([service.get(viewer, { workspaceId: WS }), service.get(viewer, { workspaceId: WS })]);
    expect(first).toMatchObject({
      workspaceId: WS,
      plan: 'free',
      limits: { ...PLAN_LIMITS.free, aiTokensPerMinute: 1234 },
      computedAt: clock.toISOString(),
      updatedAt: clock.toISOString(),
    });
    expect(concurrent.limits).toEqual(first.limits);
    expect(await rowCount(WS)).toBe(1);

    // Later reads serve the stored snapshot.
    clock = new Date(clock.getTime() + 60_000);
    expect((await service.get(viewer, { workspaceId: WS })).computedAt).toBe(first.computedAt);

    const overridden = await service.get(viewer, { workspaceId: WS_OVERRIDDEN });
    expect(overridden.limits).toEqual({ ...PLAN_LIMITS.free, aiTokensPerMinute: 1234, readRequestsPerMinute: 7 });
  });

  it('reports usage from the gateway counters and the domains’ usage keys', async () => {
    const viewer = ctxOf({ [WS]: 'viewer' });
    const before = await service.get(viewer, { workspaceId: WS });
    expect(before.usage.readRequests).toEqual({ used: 0, limit: PLAN_LIMITS.free.readRequestsPerMinute, remaining: PLAN_LIMITS.free.readRequestsPerMinute, resetsInSeconds: 0 });

    // What the gateway does for three reads: the same counter (the limit does not matter to the count).
    const gatewayCounter = requestCounter(redis, config.redisPrefix, 'read', 5);
    for (let i = 0; i < 3; i++) await gatewayCounter.consume(WS);
    const keys = usageKeys(config.redisPrefix, WS);
    await redis.set(keys.concurrentSandboxes, '2');
    await redis.set(keys.concurrentBrowserSessions, '-1'); // a DECR past zero reads as 0
    await redis.set(keys.aiTokens(aiTokenMinute(clock.getTime())), '1000');

    const { usage } = await service.get(viewer, { workspaceId: WS });
    expect(usage.readRequests).toMatchObject({ used: 3, limit: 600, remaining: 597 });
    expect(usage.readRequests.resetsInSeconds).toBeGreaterThan(0);
    expect(usage.readRequests.resetsInSeconds).toBeLessThanOrEqual(60);
    expect(usage.writeRequests).toEqual({ used: 0, limit: 120, remaining: 120, resetsInSeconds: 0 });
    expect(usage.concurrentSandboxes).toEqual({ inUse: 2, limit: 3, available: 1 });
    expect(usage.concurrentBrowserSessions).toEqual({ inUse: 0, limit: 2, available: 2 });
    expect(usage.aiTokens).toMatchObject({ used: 1000, limit: 1234, remaining: 234, resetsInSeconds: 60 });
  });

  it('refreshes for admins and owners only, picking up changed overrides and telling the gateways', async () => {
    await expect(service.refresh(ctxOf({ [WS]: 'viewer' }), { workspaceId: WS })).rejects.toBeInstanceOf(ForbiddenError);
    await expect(service.refresh(ctxOf({ [WS]: 'member' }), { workspaceId: WS })).rejects.toBeInstanceOf(ForbiddenError);

    const events: RateLimitsChangedEvent[] = [];
    const stop = pubsub.on<RateLimitsChangedEvent>(TOPICS.rateLimitsChanged, (event) => void events.push(event));
    try {
      // The subscription is live once a probe published after it arrives.
      await eventually(async () => {
        pubsub.publish(TOPICS.rateLimitsChanged, { workspaceId: 'probe' });
        await new Promise((resolve) => setTimeout(resolve, 50));
        return events.length > 0;
      }, 5000, 'the pub/sub subscription');
      events.length = 0;

      config.rateLimitOverrides = { ...config.rateLimitOverrides, [WS]: { writeRequestsPerMinute: 42 } };
      clock = new Date(clock.getTime() + 60_000);
      const refreshed = await service.refresh(ctxOf({ [WS]: 'admin' }), { workspaceId: WS });
      expect(refreshed.limits).toEqual({ ...PLAN_LIMITS.free, aiTokensPerMinute: 1234, writeRequestsPerMinute: 42 });
      expect(refreshed.computedAt).toBe(clock.toISOString());
      expect(refreshed.usage.writeRequests.limit).toBe(42);
      await eventually(() => events.some((e) => e.workspaceId === WS), 5000, 'the rate-limits-changed event');

      expect(await service.effective(ctxOf(null), { workspaceId: WS })).toEqual({ workspaceId: WS, limits: refreshed.limits });
      // An owner may refresh too, and a workspace without a row gets one.
      await expect(service.refresh(ctxOf({ [WS_OTHER]: 'owner' }), { workspaceId: WS_OTHER })).resolves.toMatchObject({ workspaceId: WS_OTHER, plan: 'free' });
    } finally {
      stop();
    }
  });

  it('fills a limit the stored snapshot lacks from the plan, and validates the internal body', async () => {
    await dataSource.query(`UPDATE billing.workspace_rate_limits SET limits = limits - 'concurrentSandboxes' WHERE workspace_id = $1`, [WS]);
    const { limits } = await service.effective(ctxOf(null), { workspaceId: WS });
    expect(limits.concurrentSandboxes).toBe(PLAN_LIMITS.free.concurrentSandboxes);
    expect(limits.writeRequestsPerMinute).toBe(42);
    await expect(service.effective(ctxOf(null), {})).rejects.toBeInstanceOf(ValidationError);
    await expect(service.effective(ctxOf(null), { workspaceId: 'has spaces' })).rejects.toBeInstanceOf(ValidationError);
  });
});

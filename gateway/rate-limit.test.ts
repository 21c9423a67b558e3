import { ApolloServer } from '@apollo/server';
import { randomBytes } from 'node:crypto';
import { parse, type OperationDefinitionNode } from 'graphql';
import type { RequestContext } from '../core/context';
import { maskError } from '../core/errors/mask';
import type { Logger } from '../core/logger';
import type { Principal } from '../core/principal';
import { PLAN_LIMITS, type RateLimitValues } from '../core/rate-limits';
import { createRedis, type Redis } from '../core/redis';
import { TEST_REDIS_URL } from '../test/services';
import type { GatewayContext } from './context';
import { operationWorkspace, RequestRateLimiter, requestWorkspace, routeClassOf, useRateLimits } from './rate-limit';

/* The gateway's request limiter against a real Redis: counting, verdicts, headers, the plugin. */

const PREFIX = `t_gw_rl_${process.pid}_${randomBytes(4).toString('hex')}`;
const WS_A = 'ws_limiter0000000000000a';
const WS_B = 'ws_limiter0000000000000b';
const WS_C = 'ws_limiter0000000000000c';

const principal: Principal = { userId: 'usr_limiter', username: 'limiter', isAdmin: false, via: 'jwt', defaultWorkspaceId: WS_A, memberships: { [WS_A]: 'owner', [WS_B]: 'viewer', [WS_C]: 'member' } };
const member = (workspaceHeader?: string): RequestContext => ({ principal, requestId: 'req_t', clientIp: '10.0.0.1', workspaceHeader });
const anonymous = (clientIp: string): RequestContext => ({ principal: null, requestId: 'req_t', clientIp });

function recordingLogger(lines: string[]): Logger {
  const write = (message: string) => void lines.push(message);
  const logger: Logger = { debug: write, info: write, warn: write, error: write, child: () => logger };
  return logger;
}

/** Limits by workspace, changeable during a test. */
const limitsByWorkspace = new Map<string, RateLimitValues>();
const limits = { get: async (workspaceId: string) => limitsByWorkspace.get(workspaceId) ?? PLAN_LIMITS.free };
const withRequests = (read: number, write: number): RateLimitValues => ({ ...PLAN_LIMITS.free, readRequestsPerMinute: read, writeRequestsPerMinute: write });

let redis: Redis;
let otherRedis: Redis;
const logged: string[] = [];
let limiter: RequestRateLimiter;

beforeAll(() => {
  redis = createRedis(TEST_REDIS_URL);
  otherRedis = createRedis(TEST_REDIS_URL);
  limiter = new RequestRateLimiter({ redis, redisPrefix: PREFIX, limits, anonymousPerMinute: 3, logger: recordingLogger(logged) });
});

afterAll(async () => {
  const keys = await redis.keys(`${PREFIX}:*`);
  if (keys.length) await redis.del(...keys);
  await Promise.all([redis.quit(), otherRedis.quit()]);
});

const op = (source: string): OperationDefinitionNode => parse(source).definitions[0] as OperationDefinitionNode;

describe('which workspace and class a request counts against', () => {
  it('takes the explicit workspace, else the header, else the personal one, each only when a member', () => {
    expect(requestWorkspace(principal, WS_B, WS_C)).toBe(WS_B);
    expect(requestWorkspace(principal, 'ws_not_mine', WS_C)).toBe(WS_C);
    expect(requestWorkspace(principal, 'ws_not_mine', 'ws_neither')).toBe(WS_A);
    expect(requestWorkspace(principal, undefined, undefined)).toBe(WS_A);
  });

  it('reads workspaceId arguments of root fields (literal or variable), then a workspaceId variable', () => {
    expect(operationWorkspace(op(`query($w: ID!) { secrets(workspaceId: $w) { total } }`), { w: WS_B }, principal)).toBe(WS_B);
    expect(operationWorkspace(op(`{ secrets(workspaceId: "${WS_C}") { total } }`), undefined, principal)).toBe(WS_C);
    expect(operationWorkspace(op(`query($workspaceId: ID) { profile { id } }`), { workspaceId: WS_B }, principal)).toBe(WS_B);
    expect(operationWorkspace(op(`{ secrets(workspaceId: "ws_not_mine") { total } }`), { workspaceId: WS_C }, principal)).toBe(WS_C);
    expect(operationWorkspace(op(`{ secrets(workspaceId: "ws_not_mine") { total } }`), undefined, principal)).toBeUndefined();
    expect(operationWorkspace(op(`{ profile { id } }`), { workspaceId: WS_B }, null)).toBeUndefined();
  });

  it('counts mutations as writes, queries and subscriptions as reads', () => {
    expect(routeClassOf(op('mutation { logout }'))).toBe('write');
    expect(routeClassOf(op('{ profile { id } }'))).toBe('read');
    expect(routeClassOf(op('subscription { x }'))).toBe('read');
  });
});

describe('RequestRateLimiter', () => {
  it('limits callers without credentials per address, with IETF RateLimit headers', async () => {
    const seen = [];
    for (let i = 0; i < 3; i++) seen.push(await limiter.admit(anonymous('192.0.2.1'), 'write'));
    expect(seen.map((d) => d!.allowed)).toEqual([true, true, true]);
    expect(seen.map((d) => d!.remaining)).toEqual([2, 1, 0]);
    expect(seen[0]!.headers['ratelimit-policy']).toBe('"anonymous";q=3;w=60');
    expect(seen[0]!.headers.ratelimit).toMatch(/^"anonymous";r=2;t=(60|59)$/);
    expect(seen[0]!.headers['retry-after']).toBeUndefined();

    const refused = await limiter.admit(anonymous('192.0.2.1'), 'read');
    expect(refused).toMatchObject({ allowed: false, routeClass: 'anonymous', subject: '192.0.2.1', limit: 3, remaining: 0 });
    expect(refused!.resetSeconds).toBeGreaterThanOrEqual(1);
    expect(refused!.headers['retry-after']).toBe(String(refused!.resetSeconds));
    expect(refused!.headers.ratelimit).toBe(`"anonymous";r=0;t=${refused!.resetSeconds}`);

    expect((await limiter.admit(anonymous('192.0.2.2'), 'read'))!.allowed).toBe(true);
  });

  it('counts reads and writes of a workspace apart, each against its own limit', async () => {
    limitsByWorkspace.set(WS_B, withRequests(2, 1));
    const ctx = member();
    expect((await limiter.admit(ctx, 'read', WS_B))!.headers['ratelimit-policy']).toBe('"read";q=2;w=60');
    expect((await limiter.admit(ctx, 'read', WS_B))!.allowed).toBe(true);
    expect((await limiter.admit(ctx, 'read', WS_B))!.allowed).toBe(false);
    const write = await limiter.admit(ctx, 'write', WS_B);
    expect(write).toMatchObject({ allowed: true, routeClass: 'write', remaining: 0 });
    expect(write!.headers['ratelimit-policy']).toBe('"write";q=1;w=60');
    expect((await limiter.admit(ctx, 'write', WS_B))!.allowed).toBe(false);
    // The personal workspace has a budget of its own.
    expect((await limiter.admit(ctx, 'read'))).toMatchObject({ allowed: true, subject: WS_A, limit: PLAN_LIMITS.free.readRequestsPerMinute });
  });

  it('keeps a workspace’s count when its limit changes within the window', async () => {
    limitsByWorkspace.set(WS_C, withRequests(2, 2));
    const ctx = member(WS_C);
    await limiter.admit(ctx, 'read');
    await limiter.admit(ctx, 'read');
    expect((await limiter.admit(ctx, 'read'))!.allowed).toBe(false);
    limitsByWorkspace.set(WS_C, withRequests(5, 2));
    // Three counted so far; the fourth fits the new limit of five.
    expect(await limiter.admit(ctx, 'read')).toMatchObject({ allowed: true, limit: 5, remaining: 1 });
  });

  it('shares one budget between limiters on different connections (several gateways)', async () => {
    const workspace = 'ws_limitershared00000001';
    const shared: Principal = { ...principal, defaultWorkspaceId: workspace, memberships: { [workspace]: 'owner' } };
    limitsByWorkspace.set(workspace, withRequests(4, 4));
    const second = new RequestRateLimiter({ redis: otherRedis, redisPrefix: PREFIX, limits, anonymousPerMinute: 3, logger: recordingLogger([]) });
    const ctx: RequestContext = { principal: shared, requestId: 'r', clientIp: '10.0.0.2' };
    const verdicts = [];
    for (let i = 0; i < 6; i++) verdicts.push((await (i % 2 ? second : limiter).admit(ctx, 'read'))!.allowed);
    expect(verdicts).toEqual([true, true, true, true, false, false]);
  });

  it('lets requests through uncounted when Redis fails or is down, logging once', async () => {
    // Stand-ins for a connection whose commands fail, and for one ioredis knows is down.
    const failingRedis = { status: 'ready', defineCommand: () => undefined, rlflxIncr: async () => Promise.reject(new Error('READONLY')) } as unknown as Redis;
    const lines: string[] = [];
    const failing = new RequestRateLimiter({ redis: failingRedis, redisPrefix: PREFIX, limits, anonymousPerMinute: 1, logger: recordingLogger(lines) });
    expect(await failing.admit(anonymous('192.0.2.9'), 'read')).toBeNull();
    (failingRedis as { status: string }).status = 'reconnecting';
    expect(await failing.admit(anonymous('192.0.2.9'), 'read')).toBeNull();
    expect(lines.filter((l) => l.includes('cannot be counted'))).toHaveLength(1);
  });
});

describe('useRateLimits (Apollo plugin)', () => {
  let apollo: ApolloServer<GatewayContext>;
  const workspace = 'ws_limiterplugin00000001';
  const owner: Principal = { ...principal, defaultWorkspaceId: WS_A, memberships: { [WS_A]: 'owner', [workspace]: 'owner' } };

  beforeAll(async () => {
    limitsByWorkspace.set(workspace, withRequests(1, 5));
    apollo = new ApolloServer<GatewayContext>({
      typeDefs: 'type Query { ping(workspaceId: ID): String } type Mutation { touch(workspaceId: ID): String }',
      resolvers: { Query: { ping: () => 'pong' }, Mutation: { touch: () => 'touched' } },
      plugins: [useRateLimits(limiter)],
      formatError: (formatted, error) => maskError(formatted, error),
    });
    await apollo.start();
  });
  afterAll(() => apollo.stop());

  const run = (query: string, variables?: Record<string, unknown>) =>
    apollo.executeOperation({ query, variables }, { contextValue: { principal: owner, requestId: 'req_plugin', clientIp: '10.0.0.3' } });

  it('sets the headers on every counted operation and refuses with 429 RATE_LIMITED and Retry-After', async () => {
    const first = await run('query($w: ID) { ping(workspaceId: $w) }', { w: workspace });
    expect(first.body.kind === 'single' && first.body.singleResult.data).toEqual({ ping: 'pong' });
    expect(first.http.headers.get('ratelimit-policy')).toBe('"read";q=1;w=60');
    expect(first.http.headers.get('ratelimit')).toMatch(/^"read";r=0;t=\d+$/);

    const second = await run('query($w: ID) { ping(workspaceId: $w) }', { w: workspace });
    expect(second.http.status).toBe(429);
    expect(second.http.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(second.http.headers.get('ratelimit')).toMatch(/^"read";r=0;t=\d+$/);
    const result = second.body.kind === 'single' ? second.body.singleResult : undefined;
    expect(result?.data).toBeUndefined();
    expect(result?.errors?.[0]).toMatchObject({
      message: expect.stringContaining('Too many read requests'),
      extensions: { code: 'RATE_LIMITED', details: { retryAfterSeconds: Number(second.http.headers.get('retry-after')), class: 'read', limit: 1, windowSeconds: 60 } },
    });
    expect(result?.errors?.[0].extensions).not.toHaveProperty('http');

    // Writes have their own budget.
    const write = await run(`mutation { touch(workspaceId: "${workspace}") }`);
    expect(write.http.status).toBeUndefined();
    expect(write.http.headers.get('ratelimit-policy')).toBe('"write";q=5;w=60');
  });
});

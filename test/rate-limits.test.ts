import { createClient } from 'graphql-ws';
import { Agent, request } from 'undici';
import WebSocket from 'ws';
import { SUBGRAPH_NAMES, subgraphUrl, type SubgraphName } from '../core/config';
import { PLAN_LIMITS, type RateLimitValues } from '../core/rate-limits';
import type { PlatformRuntime } from '../core/subgraph';
import { startGateway, type RunningGateway } from '../gateway';
import { startTestPlatform, type TestPlatform } from './harness';
import { createUserAndLogin, eventually, gql, loginAdmin } from './helpers';
import { createTestRuntime } from './services';

/**
 * Workspace rate limits end to end: billing's routes (REST and GraphQL), the gateway's
 * enforcement with its headers and 429s, two gateway processes sharing one budget in Redis, the
 * change event reaching every gateway, anonymous callers limited per address, subscriptions.
 *
 * Workspaces get the test plan (enterprise, 20 000 reads a minute); a test that needs a tight
 * budget gives its fresh workspace an override before the workspace's first request, which is
 * when billing computes its limits. Every budget here is spent within a few seconds, well inside
 * the 60-second window it opened.
 */

const ANONYMOUS_PER_MINUTE = 20;
const ENV = {
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: String(ANONYMOUS_PER_MINUTE),
  // The failed-login throttle must not answer before the anonymous limit does.
  LOGIN_FAILURES_PER_ADDRESS: '100000',
  LOGIN_FAILURES_PER_USERNAME: '1000',
};
const RATE_LIMITS_QUERY = `query($workspaceId: ID!) { rateLimits(workspaceId: $workspaceId) { workspaceId plan limits { readRequestsPerMinute } usage { readRequests { used limit remaining resetsInSeconds } } } }`;

type Auth = Record<string, string>;

describe('workspace rate limits', () => {
  let platform: TestPlatform;
  let secondRuntime: PlatformRuntime;
  let second: RunningGateway;
  let admin: Awaited<ReturnType<typeof loginAdmin>>;
  let viewer: Awaited<ReturnType<typeof createUserAndLogin>>;
  let outsider: Awaited<ReturnType<typeof createUserAndLogin>>;
  let workspaceCount = 0;

  beforeAll(async () => {
    platform = await startTestPlatform({ services: ['identity', 'billing', 'gateway'], env: ENV });
    // A second gateway process in all but process: its own runtime, pub/sub, Redis connections
    // and caches, in front of the same subgraphs and the same Redis prefix.
    secondRuntime = createTestRuntime({ databaseUrl: platform.databaseUrl, prefix: platform.config.redisPrefix, env: ENV });
    const subgraphUrls = Object.fromEntries(SUBGRAPH_NAMES.map((name) => [name, platform.subgraphs[name]?.url ?? subgraphUrl(platform.config, name)])) as Record<SubgraphName, string>;
    second = await startGateway(secondRuntime, { subgraphUrls, port: 0 });
    admin = await loginAdmin(platform);
    viewer = await createUserAndLogin(platform, admin.auth, 'rl-viewer');
    outsider = await createUserAndLogin(platform, admin.auth, 'rl-outsider');
  });

  afterAll(async () => {
    await second?.stop();
    await secondRuntime?.pubsub.close();
    await platform?.stop();
  });

  const rest = async (method: string, path: string, auth: Auth, base = platform.baseUrl, headers: Record<string, string> = {}) => {
    const response = await fetch(`${base}/v1${path}`, { method, headers: { ...auth, ...headers } });
    return { status: response.status, headers: response.headers, body: await response.json() };
  };
  const graphql = async (query: string, variables: Record<string, unknown>, auth: Auth, base = platform.baseUrl, headers: Record<string, string> = {}) => {
    const response = await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth, ...headers }, body: JSON.stringify({ query, variables }) });
    return { status: response.status, headers: response.headers, body: await response.json() };
  };
  const limitsPath = (workspaceId: string) => `/workspaces/${workspaceId}/rate-limits`;

  /**
   * A fresh workspace of the admin (a budget of its own), with `overrides` in force from its
   * first request. Waits until the admin's principal on each of `gateways` knows the membership
   * (identity's event); that spends exactly one read of the workspace per gateway, the 200 that
   * ends the wait (a 404 before it counts against the admin's personal workspace).
   */
  async function newWorkspace(overrides?: Partial<RateLimitValues>, gateways = [platform.baseUrl]): Promise<string> {
    const created = await gql(platform, 'mutation($name: String!) { createWorkspace(name: $name) { id } }', { name: `Limits ${++workspaceCount}` }, admin.auth);
    expect(created.errors).toBeUndefined();
    const workspaceId: string = created.data.createWorkspace.id;
    // What an operator's RATE_LIMIT_OVERRIDES entry does; read by billing when it computes.
    if (overrides) platform.config.rateLimitOverrides = { ...platform.config.rateLimitOverrides, [workspaceId]: overrides };
    for (const base of gateways) {
      await eventually(async () => (await rest('GET', limitsPath(workspaceId), admin.auth, base)).status === 200, 5000, `the new membership on ${base}`);
    }
    return workspaceId;
  }

  it('answers members, lets only admins refresh, and answers 404 to non-members', async () => {
    const workspaceId = await newWorkspace();
    const added = await gql(platform, 'mutation($w: ID!, $u: ID!) { addWorkspaceMember(workspaceId: $w, userId: $u, role: viewer) { id } }', { w: workspaceId, u: viewer.userId }, admin.auth);
    expect(added.errors).toBeUndefined();

    const read = await rest('GET', limitsPath(workspaceId), admin.auth);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      workspaceId,
      plan: 'enterprise',
      limits: PLAN_LIMITS.enterprise,
      usage: {
        readRequests: { used: expect.any(Number), limit: PLAN_LIMITS.enterprise.readRequestsPerMinute, remaining: expect.any(Number), resetsInSeconds: expect.any(Number) },
        writeRequests: { limit: PLAN_LIMITS.enterprise.writeRequestsPerMinute },
        concurrentSandboxes: { inUse: 0, limit: PLAN_LIMITS.enterprise.concurrentSandboxes, available: PLAN_LIMITS.enterprise.concurrentSandboxes },
        concurrentBrowserSessions: { inUse: 0, limit: PLAN_LIMITS.enterprise.concurrentBrowserSessions },
        aiTokens: { used: 0, limit: PLAN_LIMITS.enterprise.aiTokensPerMinute },
      },
      computedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      updatedAt: expect.any(String),
    });
    expect(read.headers.get('ratelimit-policy')).toBe(`"read";q=${PLAN_LIMITS.enterprise.readRequestsPerMinute};w=60`);
    expect(read.headers.get('ratelimit')).toMatch(/^"read";r=\d+;t=\d+$/);

    await eventually(async () => (await rest('GET', limitsPath(workspaceId), viewer.auth)).status === 200, 5000, 'the viewer membership');
    const viewerRefresh = await rest('POST', `${limitsPath(workspaceId)}/refresh`, viewer.auth);
    expect(viewerRefresh.status).toBe(403);
    expect(viewerRefresh.body.error.code).toBe('FORBIDDEN');

    const refreshed = await rest('POST', `${limitsPath(workspaceId)}/refresh`, admin.auth);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body).toMatchObject({ workspaceId, plan: 'enterprise', limits: PLAN_LIMITS.enterprise });
    expect(refreshed.headers.get('ratelimit-policy')).toBe(`"write";q=${PLAN_LIMITS.enterprise.writeRequestsPerMinute};w=60`);

    for (const [method, path] of [['GET', limitsPath(workspaceId)], ['POST', `${limitsPath(workspaceId)}/refresh`]]) {
      const refused = await rest(method, path, outsider.auth);
      expect(refused.status).toBe(404);
      expect(refused.body.error).toMatchObject({ code: 'NOT_FOUND', requestId: expect.any(String) });
    }
  });

  it('reports usage that moves as requests are made', async () => {
    const workspaceId = await newWorkspace();
    const first = (await rest('GET', limitsPath(workspaceId), admin.auth)).body.usage;
    const second = (await rest('GET', limitsPath(workspaceId), admin.auth)).body.usage;
    // Each request is counted before it runs, so it sees itself.
    expect(second.readRequests.used).toBe(first.readRequests.used + 1);
    expect(second.readRequests.remaining).toBe(second.readRequests.limit - second.readRequests.used);
    expect(second.readRequests.resetsInSeconds).toBeGreaterThan(0);
    expect(second.readRequests.resetsInSeconds).toBeLessThanOrEqual(60);
    expect(second.writeRequests).toMatchObject({ used: 0, resetsInSeconds: 0 });

    const viaGraphQL = await graphql(RATE_LIMITS_QUERY, { workspaceId }, admin.auth);
    expect(viaGraphQL.body.data.rateLimits.usage.readRequests.used).toBe(second.readRequests.used + 1);
    const refreshed = await rest('POST', `${limitsPath(workspaceId)}/refresh`, admin.auth);
    expect(refreshed.body.usage.writeRequests).toMatchObject({ used: 1, remaining: PLAN_LIMITS.enterprise.writeRequestsPerMinute - 1 });
    expect(refreshed.body.usage.readRequests.used).toBe(second.readRequests.used + 1);
  });

  it('refuses reads over the limit with 429 RATE_LIMITED, Retry-After and RateLimit headers, on REST and /graphql', async () => {
    const workspaceId = await newWorkspace({ readRequestsPerMinute: 5 });
    const remaining: string[] = [];
    let refused;
    for (let i = 0; i < 10 && !refused; i++) {
      const answer = await rest('GET', limitsPath(workspaceId), admin.auth);
      if (answer.status === 429) refused = answer;
      else {
        expect(answer.status).toBe(200);
        remaining.push(answer.headers.get('ratelimit')!.replace(/;t=\d+$/, ''));
      }
    }
    // The first read was newWorkspace's.
    expect(remaining).toEqual(['"read";r=3', '"read";r=2', '"read";r=1', '"read";r=0']);
    expect(refused!.body.error).toMatchObject({ code: 'RATE_LIMITED', message: expect.stringContaining('Too many read requests'), requestId: expect.any(String) });
    const retryAfter = Number(refused!.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused!.headers.get('ratelimit-policy')).toBe('"read";q=5;w=60');
    expect(refused!.headers.get('ratelimit')).toBe(`"read";r=0;t=${retryAfter}`);
    expect(refused!.body.error.details).toMatchObject({ retryAfterSeconds: retryAfter, class: 'read', limit: 5, windowSeconds: 60 });

    const overGraphQL = await graphql(RATE_LIMITS_QUERY, { workspaceId }, admin.auth);
    expect(overGraphQL.status).toBe(429);
    expect(overGraphQL.body.data).toBeUndefined();
    expect(overGraphQL.body.errors).toEqual([
      { message: expect.stringContaining('Too many read requests'), extensions: { code: 'RATE_LIMITED', details: expect.objectContaining({ retryAfterSeconds: expect.any(Number) }) } },
    ]);
    expect(overGraphQL.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(overGraphQL.headers.get('ratelimit-policy')).toBe('"read";q=5;w=60');

    // X-Workspace-ID names the workspace of an operation that names none.
    const byHeader = await graphql('{ profile { id } }', {}, admin.auth, platform.baseUrl, { 'x-workspace-id': workspaceId });
    expect(byHeader.status).toBe(429);
    // Writes have a budget of their own; the admin's other workspaces are untouched.
    expect((await rest('POST', `${limitsPath(workspaceId)}/refresh`, admin.auth)).status).toBe(200);
    expect((await rest('GET', limitsPath(admin.defaultWorkspaceId), admin.auth)).status).toBe(200);
    // A non-member naming the workspace spends its own budget, not the workspace's.
    expect((await rest('GET', limitsPath(workspaceId), outsider.auth)).status).toBe(404);
  });

  it('shares one budget between two gateway processes', async () => {
    const gateways = [platform.baseUrl, second.url];
    const workspaceId = await newWorkspace({ readRequestsPerMinute: 6 }, gateways);
    const answers: Array<{ gateway: number; status: number; ratelimit: string | null }> = [];
    for (let i = 0; i < 8; i++) {
      const answer = await rest('GET', limitsPath(workspaceId), admin.auth, gateways[i % 2]);
      answers.push({ gateway: i % 2, status: answer.status, ratelimit: answer.headers.get('ratelimit')?.replace(/;t=\d+$/, '') ?? null });
    }
    // Two reads went to newWorkspace (one per gateway); four more fit, alternating gateways, then both refuse.
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 429, 429, 429, 429]);
    expect(answers.map((a) => a.ratelimit)).toEqual(['"read";r=3', '"read";r=2', '"read";r=1', '"read";r=0', '"read";r=0', '"read";r=0', '"read";r=0', '"read";r=0']);
  });

  it('applies a refreshed limit on every gateway at once, through the change event', async () => {
    const workspaceId = await newWorkspace(undefined, [platform.baseUrl, second.url]);
    const policyOn = async (base: string) => (await rest('GET', limitsPath(workspaceId), admin.auth, base)).headers.get('ratelimit-policy');
    // Both gateways have the limits cached now.
    expect(await policyOn(platform.baseUrl)).toBe(`"read";q=${PLAN_LIMITS.enterprise.readRequestsPerMinute};w=60`);
    expect(await policyOn(second.url)).toBe(`"read";q=${PLAN_LIMITS.enterprise.readRequestsPerMinute};w=60`);

    platform.config.rateLimitOverrides = { ...platform.config.rateLimitOverrides, [workspaceId]: { readRequestsPerMinute: 3 } };
    // The stored limits are a snapshot: a changed override waits for a refresh.
    expect((await rest('GET', limitsPath(workspaceId), admin.auth)).body.limits.readRequestsPerMinute).toBe(PLAN_LIMITS.enterprise.readRequestsPerMinute);

    const refreshed = await rest('POST', `${limitsPath(workspaceId)}/refresh`, admin.auth);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.limits.readRequestsPerMinute).toBe(3);
    // Well inside the 30 s the gateways would otherwise keep their copy.
    for (const base of [platform.baseUrl, second.url]) {
      await eventually(async () => (await policyOn(base)) === '"read";q=3;w=60', 3000, `the new limit on ${base}`);
    }
    // At least six reads counted so far: over the new limit.
    const refused = await rest('GET', limitsPath(workspaceId), admin.auth, second.url);
    expect(refused.status).toBe(429);
  });

  it('limits callers without credentials per client address', async () => {
    // Another loopback address: an anonymous budget of its own.
    const spammer = new Agent({ localAddress: '127.0.0.5' });
    try {
      const login = (username: string, password: string) =>
        request(`${platform.restUrl}/auth/login`, { method: 'POST', dispatcher: spammer, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) });
      const statuses: number[] = [];
      let refused;
      for (let i = 0; i < ANONYMOUS_PER_MINUTE + 2; i++) {
        const answer = await login('rl-nobody', `wrong password ${i}`);
        statuses.push(answer.statusCode);
        if (answer.statusCode === 429) refused = { headers: answer.headers, body: (await answer.body.json()) as any };
        else await answer.body.dump();
      }
      expect(statuses).toEqual([...Array(ANONYMOUS_PER_MINUTE).fill(401), 429, 429]);
      expect(refused!.body.error.code).toBe('RATE_LIMITED');
      expect(refused!.headers['ratelimit-policy']).toBe(`"anonymous";q=${ANONYMOUS_PER_MINUTE};w=60`);
      expect(refused!.headers['retry-after']).toMatch(/^\d+$/);

      // The same address over /graphql is refused too; another address still signs in.
      const overGraphQL = await request(`${platform.graphqlUrl}`, {
        method: 'POST',
        dispatcher: spammer,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'mutation { login(username: "admin", password: "x") { accessToken } }' }),
      });
      expect(overGraphQL.statusCode).toBe(429);
      expect(((await overGraphQL.body.json()) as any).errors[0].extensions.code).toBe('RATE_LIMITED');
      // And so are the raw browser sign-in routes (no GraphQL operation behind them).
      const signIn = await request(`${platform.restUrl}/auth/idp-a`, { dispatcher: spammer });
      expect(signIn.statusCode).toBe(429);
      expect(signIn.headers['retry-after']).toMatch(/^\d+$/);
      expect(((await signIn.body.json()) as any).error.code).toBe('RATE_LIMITED');
      const elsewhere = await fetch(`${platform.restUrl}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: platform.config.adminUsername, password: platform.config.adminPassword }),
      });
      expect(elsewhere.status).toBe(200);
      expect(elsewhere.headers.get('ratelimit-policy')).toBe(`"anonymous";q=${ANONYMOUS_PER_MINUTE};w=60`);
    } finally {
      await spammer.close();
    }
  });

  it('counts a subscription as a read when it starts', async () => {
    const workspaceId = await newWorkspace({ readRequestsPerMinute: 1 });
    // newWorkspace spent the only read: the subscription is refused.
    const client = createClient({ url: platform.wsUrl, webSocketImpl: WebSocket, connectionParams: { authorization: admin.auth.authorization }, retryAttempts: 0 });
    try {
      const first = await new Promise<any>((resolve, reject) => {
        client.subscribe(
          { query: 'subscription($w: ID!) { workspaceMembershipChanged(workspaceId: $w) { kind } }', variables: { w: workspaceId } },
          { next: resolve, error: reject, complete: () => resolve(undefined) },
        );
      });
      expect(first?.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    } finally {
      await client.dispose();
    }
  });
});

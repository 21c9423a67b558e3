import type { Logger } from '../core/logger';
import { TOPICS, type PlatformPubSub } from '../core/pubsub';
import { effectiveLimits, PLAN_LIMITS } from '../core/rate-limits';
import { startSubgraph, type RunningSubgraph } from '../core/subgraph';
import { billingSubgraph } from '../subgraphs/billing';
import { createTestDatabase, createTestRuntime, eventually, type TestDatabase } from '../test/services';
import { WorkspaceLimits } from './workspace-limits';

/* The gateway's cache of workspace limits, against a real billing subgraph and real pub/sub. */

const WS = 'ws_limitscache0000000001';
const WS_2 = 'ws_limitscache0000000002';
const WS_3 = 'ws_limitscache0000000003';

function recordingLogger(lines: string[]): Logger {
  const write = (message: string) => void lines.push(message);
  const logger: Logger = { debug: write, info: write, warn: write, error: write, child: () => logger };
  return logger;
}

let database: TestDatabase;
let billing: RunningSubgraph;
let pubsub: PlatformPubSub;
let signingSecret: string;
/** Reads of billing.workspace_rate_limits seen by billing: one per lookup that reached it. */
let lookups = 0;
const caches: WorkspaceLimits[] = [];

beforeAll(async () => {
  database = await createTestDatabase('t_gw_limits');
  const runtime = createTestRuntime({
    databaseUrl: database.url,
    prefix: database.name,
    env: { DEFAULT_PLAN: 'pro', RATE_LIMIT_OVERRIDES: JSON.stringify({ [WS_2]: { readRequestsPerMinute: 11 } }) },
    onQuery: (_subgraph, sql) => {
      if (/^SELECT/i.test(sql) && sql.includes('workspace_rate_limits')) lookups++;
    },
  });
  pubsub = runtime.pubsub;
  signingSecret = runtime.config.internalSigningSecret;
  billing = await startSubgraph(billingSubgraph, runtime, 0);
});

afterAll(async () => {
  for (const cache of caches) cache.close();
  await billing?.stop();
  await pubsub?.close();
  await database?.drop();
});

function cacheOf(billingUrl: string, lines: string[] = [], options: { maxEntries?: number } = {}): WorkspaceLimits {
  const cache = new WorkspaceLimits({
    billingUrl,
    internalSigningSecret: signingSecret,
    pubsub,
    fallback: (workspaceId) => effectiveLimits('free', workspaceId, {}),
    logger: recordingLogger(lines),
    ...options,
  });
  caches.push(cache);
  return cache;
}

const billingBase = () => billing.url.replace(/\/graphql$/, '');

describe('WorkspaceLimits', () => {
  it('asks billing once per workspace and serves the answer from memory', async () => {
    const cache = cacheOf(billingBase());
    lookups = 0;
    const [a, b] = await Promise.all([cache.get(WS), cache.get(WS)]);
    expect(a).toEqual(PLAN_LIMITS.pro);
    expect(b).toBe(a);
    const afterFirst = lookups;
    expect(afterFirst).toBeGreaterThan(0);
    expect(await cache.get(WS)).toEqual(PLAN_LIMITS.pro);
    expect(lookups).toBe(afterFirst);
    expect(await cache.get(WS_2)).toEqual({ ...PLAN_LIMITS.pro, readRequestsPerMinute: 11 });
  });

  it('drops a workspace when billing announces a change', async () => {
    const cache = cacheOf(billingBase());
    await cache.get(WS);
    const before = lookups;
    // The subscription is live once an announcement makes the next get ask billing again.
    await eventually(async () => {
      pubsub.publish(TOPICS.rateLimitsChanged, { workspaceId: WS });
      await new Promise((resolve) => setTimeout(resolve, 50));
      await cache.get(WS);
      return lookups > before;
    }, 5000, 'the eviction');
    const settled = lookups;
    await cache.get(WS);
    expect(lookups).toBe(settled);
  });

  it('keeps at most maxEntries workspaces, dropping the least recently used', async () => {
    const cache = cacheOf(billingBase(), [], { maxEntries: 2 });
    await cache.get(WS);
    await cache.get(WS_2);
    await cache.get(WS); // WS_2 is now the least recently used
    await cache.get(WS_3);
    expect(cache.size).toBe(2);
    const before = lookups;
    await cache.get(WS);
    expect(lookups).toBe(before);
    await cache.get(WS_2);
    expect(lookups).toBeGreaterThan(before);
  });

  it('falls back to the default plan when billing cannot answer, logging once', async () => {
    const lines: string[] = [];
    // Nothing listens there: billing is down.
    const cache = cacheOf('http://127.0.0.1:1', lines);
    expect(await cache.get(WS)).toEqual(PLAN_LIMITS.free);
    expect(await cache.get(WS_2)).toEqual(PLAN_LIMITS.free);
    expect(lines.filter((l) => l.includes('billing unreachable'))).toHaveLength(1);

    // An unsigned call is refused by billing, and treated the same way.
    const unsigned = new WorkspaceLimits({ billingUrl: billingBase(), internalSigningSecret: 'not-the-signing-secret-0123456789abcdef', pubsub, fallback: () => PLAN_LIMITS.enterprise, logger: recordingLogger([]) });
    caches.push(unsigned);
    expect(await unsigned.get(WS)).toEqual(PLAN_LIMITS.enterprise);
  });
});

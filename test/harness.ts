import { randomBytes } from 'node:crypto';
import { SUBGRAPH_NAMES, loadConfig, type PlatformConfig, type ServiceName, type SubgraphName } from '../core/config';
import { dropDatabase, ensureDatabase } from '../core/database';
import { startPlatform, type RunningPlatform } from '../scripts/platform';

import { TEST_PG_ADMIN_URL, TEST_REDIS_URL } from './services';

export { TEST_PG_ADMIN_URL, TEST_REDIS_URL };

export interface TestPlatform extends RunningPlatform {
  config: PlatformConfig;
  databaseUrl: string;
  /** http://127.0.0.1:<port> of the edge. */
  baseUrl: string;
  /** REST base: baseUrl + /v1 */
  restUrl: string;
  graphqlUrl: string;
  wsUrl: string;
  /** SQL statements seen since the last reset, by subgraph. */
  queries: Record<SubgraphName, string[]>;
  resetQueries(): void;
}

export interface TestPlatformOptions {
  services?: ServiceName[];
  /** Extra environment, read through loadConfig like production. */
  env?: Record<string, string>;
  overrides?: Partial<PlatformConfig>;
}

/**
 * Boots the platform against a fresh database of its own and a Redis prefix of its own, on
 * free ports, so test files run in parallel without seeing each other's records.
 */
export async function startTestPlatform(options: TestPlatformOptions = {}): Promise<TestPlatform> {
  const id = `t_${process.pid}_${randomBytes(4).toString('hex')}`;
  await ensureDatabase(TEST_PG_ADMIN_URL, id);
  const databaseUrl = TEST_PG_ADMIN_URL.replace(/\/[^/]*$/, `/${id}`);
  const subgraphPorts = Object.fromEntries(SUBGRAPH_NAMES.map((n) => [n, 0])) as Record<SubgraphName, number>;
  const config = loadConfig(
    { NODE_ENV: 'test', LOG_LEVEL: process.env.LOG_LEVEL ?? 'error', ...options.env },
    { port: 0, subgraphPorts, workerHealthPort: 0, redisPrefix: id, databaseUrl, redisUrl: TEST_REDIS_URL, ...options.overrides },
  );
  const queries = Object.fromEntries(SUBGRAPH_NAMES.map((n) => [n, [] as string[]])) as Record<SubgraphName, string[]>;
  const platform = await startPlatform({
    config,
    databaseUrl,
    redisUrl: TEST_REDIS_URL,
    services: options.services,
    onQuery: (subgraph, sql) => queries[subgraph].push(sql),
  });
  const baseUrl = platform.gateway?.url ?? 'http://127.0.0.1:0';
  const stopPlatform = platform.stop;
  return {
    ...platform,
    config,
    databaseUrl,
    baseUrl,
    restUrl: `${baseUrl}/v1`,
    graphqlUrl: `${baseUrl}/graphql`,
    wsUrl: `${baseUrl.replace(/^http/, 'ws')}/graphql`,
    queries,
    resetQueries: () => SUBGRAPH_NAMES.forEach((n) => (queries[n].length = 0)),
    stop: async () => {
      await stopPlatform();
      await dropDatabase(TEST_PG_ADMIN_URL, id).catch(() => undefined);
    },
  };
}

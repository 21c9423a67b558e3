import { SUBGRAPH_NAMES, type PlatformConfig, type ServiceName, type SubgraphName } from '../core/config';
import { startPlatform, type RunningPlatform } from '../scripts/platform';
import { TEST_REDIS_URL, createTestConfig, createTestDatabase } from './services';

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
  const database = await createTestDatabase('t');
  const databaseUrl = database.url;
  const config = createTestConfig({ databaseUrl, prefix: database.name, env: options.env, overrides: options.overrides });
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
      await database.drop();
    },
  };
}

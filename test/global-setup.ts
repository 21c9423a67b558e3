import { Client } from 'pg';
import { Redis } from 'ioredis';
import { TEST_PG_ADMIN_URL, TEST_REDIS_URL } from './services';

/** Fails the run at once, with a clear message, when PostgreSQL or Redis is not reachable. */
export default async function globalSetup(): Promise<void> {
  const pg = new Client({ connectionString: TEST_PG_ADMIN_URL, connectionTimeoutMillis: 5000 });
  try {
    await pg.connect();
    await pg.query('SELECT 1');
  } catch (err) {
    throw new Error(`PostgreSQL is not reachable at ${TEST_PG_ADMIN_URL}: ${(err as Error).message}. Run .ci/run or start it.`);
  } finally {
    await pg.end().catch(() => undefined);
  }
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5000 });
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    throw new Error(`Redis is not reachable at ${TEST_REDIS_URL}: ${(err as Error).message}. Run .ci/run or start it.`);
  } finally {
    redis.disconnect();
  }
}

/** PostgreSQL and Redis of the test machine (services on loopback; see .ci/run). */
export const TEST_PG_ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

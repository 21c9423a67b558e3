import 'reflect-metadata';
import { Client, type Pool } from 'pg';
import { DataSource, type Logger as TypeOrmLogger, type MixedList, type EntitySchema } from 'typeorm';

export interface SubgraphDatabaseOptions {
  url: string;
  /** PostgreSQL schema owned by the subgraph; every table of the domain lives there. */
  schema: string;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  entities: MixedList<Function | string | EntitySchema>;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  migrations: MixedList<Function | string>;
  /** Connections in the pool. @defaultValue 10 */
  poolSize?: number;
  /** Receives every SQL statement; tests count queries with it. */
  onQuery?: (sql: string) => void;
}

/**
 * Runs one statement on the DataSource's own pool as a named prepared statement: PostgreSQL parses
 * and plans it once per connection, and only the parameters travel after that. For hot paths
 * (the workflow engine's step writes); it bypasses TypeORM's query logging. `name` must be unique
 * to `text` across the process.
 */
export async function preparedQuery<T = Record<string, unknown>>(dataSource: DataSource, name: string, text: string, values: unknown[]): Promise<T[]> {
  const pool = (dataSource.driver as unknown as { master: Pool }).master;
  const result = await pool.query({ name, text, values });
  return result.rows as T[];
}

/** Lock key of migrations, so several processes starting at once migrate one at a time. */
const MIGRATION_LOCK = 724_001;

/**
 * Opens a subgraph's DataSource on its own schema and brings the schema up to date. Each
 * subgraph migrates only its schema, with its own migrations table.
 */
export async function openSubgraphDatabase(options: SubgraphDatabaseOptions): Promise<DataSource> {
  await withAdvisoryLock(options.url, async (client) => {
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${options.schema}"`);
  });
  const dataSource = new DataSource({
    type: 'postgres',
    url: options.url,
    schema: options.schema,
    entities: options.entities,
    migrations: options.migrations,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: options.onQuery ? ['query'] : false,
    logger: options.onQuery ? queryCounter(options.onQuery) : undefined,
    extra: { max: options.poolSize ?? 10, application_name: `platform-${options.schema}` },
  });
  await dataSource.initialize();
  await withAdvisoryLock(options.url, () => dataSource.runMigrations({ transaction: 'each' }).then(() => undefined));
  return dataSource;
}

async function withAdvisoryLock(url: string, fn: (client: Client) => Promise<void>): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await fn(client);
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await client.end();
  }
}

function queryCounter(onQuery: (sql: string) => void): TypeOrmLogger {
  return {
    logQuery: (query) => onQuery(query),
    logQueryError: () => undefined,
    logQuerySlow: () => undefined,
    logSchemaBuild: () => undefined,
    logMigration: () => undefined,
    log: () => undefined,
  };
}

/** Creates a database if it does not exist (used by the test harness and the launcher). */
export async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE "${name.replace(/"/g, '')}"`);
  } finally {
    await client.end();
  }
}

export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '')}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

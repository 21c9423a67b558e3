import type { DataSource } from 'typeorm';
import { openSubgraphDatabase } from '../core/database';
import type { PlatformRuntime, SubgraphDefinition } from '../core/subgraph';

/** The DataSources a worker process opened, one per subgraph schema. */
export interface SubgraphDatabases {
  /** The subgraph's DataSource, opened (and migrated) by the first caller, shared afterwards. */
  get(definition: SubgraphDefinition<any, any>): Promise<DataSource>;
  /** Destroys every DataSource opened so far; idempotent. */
  close(): Promise<void>;
}

/**
 * Lazily opened subgraph databases. A worker only connects to the schemas its jobs touch, and
 * a failed open is forgotten so that the job's retry tries again.
 */
export function createSubgraphDatabases(runtime: PlatformRuntime): SubgraphDatabases {
  const opening = new Map<string, Promise<DataSource>>();
  let closed = false;
  return {
    get(definition) {
      if (closed) return Promise.reject(new Error('worker databases are closed'));
      let dataSource = opening.get(definition.name);
      if (!dataSource) {
        dataSource = openSubgraphDatabase({
          url: runtime.databaseUrl,
          schema: definition.name,
          entities: definition.entities,
          migrations: definition.migrations,
          poolSize: 4,
          onQuery: runtime.onQuery ? (sql) => runtime.onQuery!(definition.name, sql) : undefined,
        });
        opening.set(definition.name, dataSource);
        dataSource.catch(() => opening.delete(definition.name));
      }
      return dataSource;
    },
    async close() {
      closed = true;
      const pending = [...opening.values()];
      opening.clear();
      await Promise.allSettled(pending.map(async (p) => (await p).destroy()));
    },
  };
}

import type { DataSource } from 'typeorm';

/**
 * Runs one report statement (a scan of up to millions of events or sessions) in a transaction of
 * its own with settings for that shape, local to it: no JIT (compiling costs more than it saves
 * at this size and grows with the row estimate) and enough work_mem for its hash aggregates and
 * materialized CTEs not to spill to disk.
 */
export function reportQuery<T = Record<string, unknown>>(dataSource: DataSource, sql: string, params: unknown[]): Promise<T[]> {
  return dataSource.transaction(async (manager) => {
    await manager.query(`SELECT set_config('jit', 'off', true), set_config('work_mem', '64MB', true)`);
    return manager.query(sql, params);
  });
}

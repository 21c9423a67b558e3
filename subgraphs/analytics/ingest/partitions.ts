import type { DataSource } from 'typeorm';
import type { Logger } from '../../../core/logger';

/**
 * Monthly partitions of analytics.events (`events_YYYY_MM`, UTC months), created by the writer
 * before it writes a month's first rows, and remembered. When the default partition already holds
 * rows of a month its partition cannot be created (PostgreSQL refuses: they would be in the wrong
 * place); that month keeps going to the default partition, said once in the log.
 */
export interface PartitionKeeper {
  /** Makes sure the months from `fromMs` to `toMs` (epoch ms) have their partitions. */
  ensure(fromMs: number, toMs: number): Promise<void>;
}

export function createPartitionKeeper(db: DataSource, logger: Logger): PartitionKeeper {
  /** Months (year × 12 + month) already seen to, partition made or the default kept. */
  const done = new Set<number>();

  const create = async (month: number): Promise<void> => {
    const name = `events_${monthLabel(month, '_')}`;
    try {
      await db.query(
        `CREATE TABLE IF NOT EXISTS analytics.${name} PARTITION OF analytics.events FOR VALUES FROM ('${monthStart(month)}') TO ('${monthStart(month + 1)}')`,
      );
    } catch (err) {
      const code = (err as { code?: string }).code;
      // check_violation: the default partition holds rows of this month.
      if (code === '23514') {
        logger.warn('analytics.events_default holds rows of this month: its partition cannot be created, its events go to the default partition', { partition: name });
      } else if (code !== '42P07' && code !== '23505') {
        // 42P07 / 23505: another process created it a moment ago.
        throw err;
      }
    }
    done.add(month);
  };

  return {
    async ensure(fromMs, toMs) {
      const last = monthOf(toMs);
      for (let month = monthOf(fromMs); month <= last; month++) if (!done.has(month)) await create(month);
    },
  };
}

function monthOf(ms: number): number {
  const date = new Date(ms);
  return date.getUTCFullYear() * 12 + date.getUTCMonth();
}

function monthLabel(month: number, separator: string): string {
  return `${Math.floor(month / 12)}${separator}${String((month % 12) + 1).padStart(2, '0')}`;
}

function monthStart(month: number): string {
  return `${monthLabel(month, '-')}-01T00:00:00Z`;
}

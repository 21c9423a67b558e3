import { MAINTENANCE_JOBS } from '../../core/queues';
import { purgeExpiredRefreshTokensProcessor } from './maintenance/purge-expired-refresh-tokens';
import type { JobSchedule, ProcessorRegistry } from './types';

export type { JobProcessor, JobSchedule, ProcessorContext, ProcessorRegistry, QueueProcessors } from './types';

/** Every processor of the worker tier: queue → job name → processor. */
export const PROCESSORS: ProcessorRegistry = {
  maintenance: {
    [MAINTENANCE_JOBS.purgeExpiredRefreshTokens]: purgeExpiredRefreshTokensProcessor,
  },
};

/** Jobs the worker tier adds on a schedule. Every worker upserts them; the ids keep them single. */
export const SCHEDULES: JobSchedule[] = [
  {
    id: 'purge-expired-refresh-tokens',
    queue: 'maintenance',
    jobName: MAINTENANCE_JOBS.purgeExpiredRefreshTokens,
    repeat: (config) => ({ pattern: config.refreshTokenPurgeCron }),
  },
];

import { MAINTENANCE_JOBS } from '../../core/queues';
import { COMPUTE_PROCESSORS, COMPUTE_QUEUE_OPTIONS, COMPUTE_SCHEDULES, GPU_PROCESSORS } from './compute';
import { purgeExpiredRefreshTokensProcessor } from './maintenance/purge-expired-refresh-tokens';
import { WORKFLOW_PROCESSORS, WORKFLOW_QUEUE_OPTIONS } from './workflows';
import type { JobSchedule, ProcessorRegistry, QueueWorkerOptions } from './types';

export type { JobProcessor, JobSchedule, ProcessorContext, ProcessorRegistry, QueueProcessors, QueueWorkerOptions } from './types';

/** Every processor of the worker tier: queue → job name → processor. */
export const PROCESSORS: ProcessorRegistry = {
  compute: COMPUTE_PROCESSORS,
  gpu: GPU_PROCESSORS,
  workflows: WORKFLOW_PROCESSORS,
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
  ...COMPUTE_SCHEDULES,
];

/** BullMQ Worker options of queues that need other than the defaults (concurrency, lock duration). */
export const QUEUE_WORKER_OPTIONS: QueueWorkerOptions = {
  ...COMPUTE_QUEUE_OPTIONS,
  ...WORKFLOW_QUEUE_OPTIONS,
};

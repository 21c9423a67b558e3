import { COMPUTE_JOBS } from '../../../core/queues';
import type { JobSchedule, QueueProcessors, QueueWorkerOptions } from '../types';
import { deleteProcessor } from './delete';
import { reconcileProcessor } from './reconcile';
import { snapshotFromImageProcessor, snapshotProcessor } from './snapshot';
import { startProcessor } from './start';
import { purgeStatsProcessor, sampleStatsProcessor } from './stats';
import { stopProcessor } from './stop';
import { ttlExpireProcessor } from './ttl';

export { computeContext, type ComputeContext } from './context';

/** The compute queue: sandbox lifecycle, snapshots, TTLs and the scheduled upkeep. */
export const COMPUTE_PROCESSORS: QueueProcessors = {
  [COMPUTE_JOBS.start]: startProcessor,
  [COMPUTE_JOBS.stop]: stopProcessor,
  [COMPUTE_JOBS.snapshot]: snapshotProcessor,
  [COMPUTE_JOBS.delete]: deleteProcessor,
  [COMPUTE_JOBS.ttlExpire]: ttlExpireProcessor,
  [COMPUTE_JOBS.snapshotFromImage]: snapshotFromImageProcessor,
  [COMPUTE_JOBS.reconcile]: reconcileProcessor,
  [COMPUTE_JOBS.sampleStats]: sampleStatsProcessor,
  [COMPUTE_JOBS.purgeStats]: purgeStatsProcessor,
};

/** The gpu queue: starts of sandboxes with GPUs (they wait there for free devices). */
export const GPU_PROCESSORS: QueueProcessors = {
  [COMPUTE_JOBS.start]: startProcessor,
};

export const COMPUTE_SCHEDULES: JobSchedule[] = [
  { id: 'compute-reconcile', queue: 'compute', jobName: COMPUTE_JOBS.reconcile, repeat: (config) => ({ every: config.compute.reconcileIntervalSeconds * 1000 }) },
  { id: 'compute-sample-stats', queue: 'compute', jobName: COMPUTE_JOBS.sampleStats, repeat: (config) => ({ every: config.compute.statsIntervalSeconds * 1000 }) },
  { id: 'compute-purge-stats', queue: 'compute', jobName: COMPUTE_JOBS.purgeStats, repeat: () => ({ every: 3600 * 1000 }) },
];

/**
 * Compute and gpu queue workers: as many jobs side by side as config.compute.workerConcurrency,
 * and a short lock (config.compute.jobLockMs, checked every half of it), so the job of a killed
 * worker goes to another one within about 1.5 × jobLockMs.
 */
const computeWorkerOptions: NonNullable<QueueWorkerOptions['compute']> = (config) => ({
  concurrency: config.compute.workerConcurrency,
  lockDuration: config.compute.jobLockMs,
  stalledInterval: Math.max(500, Math.floor(config.compute.jobLockMs / 2)),
});

export const COMPUTE_QUEUE_OPTIONS: QueueWorkerOptions = { compute: computeWorkerOptions, gpu: computeWorkerOptions };

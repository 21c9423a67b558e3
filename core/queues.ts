import { Queue, type JobsOptions, type ConnectionOptions } from 'bullmq';

/** Every queue of the worker tier. Producers and processors import the names from here. */
export const QUEUE_NAMES = ['compute', 'gpu', 'images', 'browser', 'notebooks', 'agents', 'workflows', 'metering', 'maintenance'] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

/** Jobs of the maintenance queue. */
export const MAINTENANCE_JOBS = {
  purgeExpiredRefreshTokens: 'purge-expired-refresh-tokens',
} as const;

/**
 * Jobs of the compute queue (and of the gpu queue, which takes `sandbox.start` of sandboxes
 * that ask for GPUs). Sandbox jobs carry `{ sandboxId, opSeq }` and their job id is
 * `<sandboxId>-<opSeq>` (`sandboxJobId`): the transition that queued the job and the job are one step, and a
 * job whose opSeq is no longer the sandbox's does nothing (a newer operation superseded it).
 */
export const COMPUTE_JOBS = {
  /** stopped/failed/pending → (starting) → running: creates the container when there is none or a boot snapshot is set, else starts it. */
  start: 'sandbox.start',
  /** stopping → stopped; with `snapshotId`, stopping → snapshotting → stopped. */
  stop: 'sandbox.stop',
  /** snapshotting → back to `resumeStatus` (running or stopped), committing into `snapshotId`. */
  snapshot: 'sandbox.snapshot',
  /** deleting → deleted: removes the container and frees GPUs. */
  delete: 'sandbox.delete',
  /** Delayed until `expiresAt`; applies onTtlExpire unless extend-ttl moved the deadline since. */
  ttlExpire: 'sandbox.ttl-expire',
  /** creating → ready: a snapshot of a plain image (POST /snapshots with `image`). */
  snapshotFromImage: 'snapshot.from-image',
  /** Heals the database and the engine after crashes (scheduled). */
  reconcile: 'compute.reconcile',
  /** Samples running sandboxes: stats history and metering events (scheduled). */
  sampleStats: 'compute.sample-stats',
  /** Drops stats samples older than the retention window (scheduled). */
  purgeStats: 'compute.purge-stats',
} as const;

/** Jobs of the workflows queue. */
export const WORKFLOW_JOBS = {
  /** Runs (or resumes) an execution from its first unfinished step: `{ executionId }`, job id = execution id. */
  execute: 'workflow.execute',
  /** A schedule trigger fired (BullMQ job scheduler per deployed schedule node): `{ workflowId, nodeId }`. */
  scheduled: 'workflow.scheduled',
} as const;

export interface SandboxJobData {
  sandboxId: string;
  opSeq: number;
  /** stop: commit into this snapshot after stopping (stop-with-snapshot). snapshot: the snapshot to fill. */
  snapshotId?: string;
  /** snapshot: the status to return to afterwards. */
  resumeStatus?: 'running' | 'stopped';
  /** ttl-expire: the deadline the job was queued for (an extended TTL leaves the job stale). */
  expiresAt?: string;
}

/** Retries with exponential backoff (1 s, 2 s, 4 s …); finished jobs are kept briefly for inspection. */
export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: { age: 7 * 86400 },
};

export function createQueue(name: QueueName, connection: ConnectionOptions, prefix: string): Queue {
  return new Queue(name, { connection, prefix: `${prefix}:bull`, defaultJobOptions: DEFAULT_JOB_OPTIONS });
}

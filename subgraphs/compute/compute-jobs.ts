import type { JobsOptions, Queue } from 'bullmq';
import { COMPUTE_JOBS, type SandboxJobData } from '../../core/queues';

/** Sandbox work a transition queues: attempts cover a crashed worker and a briefly unreachable database. */
const SANDBOX_JOB_OPTIONS: JobsOptions = {
  attempts: 3,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: { age: 3600, count: 2000 },
  removeOnFail: { age: 7 * 86400 },
};

interface QueuedSandbox {
  id: string;
  opSeq: number;
  gpuCount: number;
}

/** Id of the job a sandbox transition queued (BullMQ refuses ':' in custom ids). */
export function sandboxJobId(sandboxId: string, opSeq: number): string {
  return `${sandboxId}-${opSeq}`;
}

/**
 * The producer side of the compute queues; the subgraph and the worker (TTL, reconciler) both
 * queue through it. Job ids are `<sandboxId>-<opSeq>` (sandboxJobId), so queueing the same step twice adds one job.
 */
export class ComputeJobs {
  constructor(private readonly queues: { compute: Queue; gpu: Queue }) {}

  /** Boots the sandbox; sandboxes with GPUs go to the gpu queue, where they wait for free devices. */
  start(sandbox: QueuedSandbox): Promise<unknown> {
    const queue = sandbox.gpuCount > 0 ? this.queues.gpu : this.queues.compute;
    return queue.add(COMPUTE_JOBS.start, this.data(sandbox), this.options(sandbox));
  }

  stop(sandbox: QueuedSandbox, snapshotId?: string): Promise<unknown> {
    return this.queues.compute.add(COMPUTE_JOBS.stop, { ...this.data(sandbox), snapshotId }, this.options(sandbox));
  }

  snapshot(sandbox: QueuedSandbox, snapshotId: string, resumeStatus: 'running' | 'stopped'): Promise<unknown> {
    return this.queues.compute.add(COMPUTE_JOBS.snapshot, { ...this.data(sandbox), snapshotId, resumeStatus }, this.options(sandbox));
  }

  delete(sandbox: QueuedSandbox): Promise<unknown> {
    return this.queues.compute.add(COMPUTE_JOBS.delete, this.data(sandbox), this.options(sandbox));
  }

  /** A delayed job at the deadline; extend-ttl queues a new one and the old one finds itself stale. */
  ttlExpire(sandbox: QueuedSandbox, expiresAt: Date): Promise<unknown> {
    const data: SandboxJobData = { ...this.data(sandbox), expiresAt: expiresAt.toISOString() };
    return this.queues.compute.add(COMPUTE_JOBS.ttlExpire, data, {
      ...SANDBOX_JOB_OPTIONS,
      jobId: `${sandbox.id}-ttl-${expiresAt.getTime()}`,
      delay: Math.max(0, expiresAt.getTime() - Date.now()),
    });
  }

  snapshotFromImage(snapshotId: string): Promise<unknown> {
    return this.queues.compute.add(COMPUTE_JOBS.snapshotFromImage, { snapshotId }, { ...SANDBOX_JOB_OPTIONS, jobId: `${snapshotId}-from-image` });
  }

  private data(sandbox: QueuedSandbox): SandboxJobData {
    return { sandboxId: sandbox.id, opSeq: sandbox.opSeq };
  }

  private options(sandbox: QueuedSandbox): JobsOptions {
    return { ...SANDBOX_JOB_OPTIONS, jobId: sandboxJobId(sandbox.id, sandbox.opSeq) };
  }
}

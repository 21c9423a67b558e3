import { DelayedError, type Job } from 'bullmq';
import { ID_PREFIX, newId } from '../../../core/ids';
import type { SandboxJobData } from '../../../core/queues';
import type { SandboxEntity } from '../../../subgraphs/compute/sandboxes/sandbox.entity';
import { ALLOWED_FROM, allows } from '../../../subgraphs/compute/sandboxes/sandbox.states';
import type { SnapshotEntity } from '../../../subgraphs/compute/snapshots/snapshot.entity';
import { snapshotImageRef } from '../../../subgraphs/compute/snapshots/snapshot.repository';
import type { JobProcessor } from '../types';
import { PLATFORM_ACTOR } from './common';
import { computeContext, type ComputeContext } from './context';

/** A TTL action that cannot apply yet (the sandbox is starting, stopping, ...) is tried again after this long. */
export const TTL_RETRY_DELAY_MS = 3000;

export const TTL_REASON = 'lifetime ended';

export type TtlResult =
  | { outcome: 'stale'; status: string | null }
  | { outcome: 'deleting' | 'stopping' | 'nothing-to-do'; snapshotId?: string };

/**
 * sandbox.ttl-expire, delayed until expiresAt. Stale unless `expiresAt` is still the sandbox's
 * (extend-ttl queues a new job and leaves this one stale). Applies onTtlExpire.action
 * (default delete): delete → deleting + delete job; stop → stopping + stop job;
 * snapshot-then-stop → a `creating` snapshot row, stopping + stop job with its id. A sandbox in
 * a state the action cannot apply to yet comes back TTL_RETRY_DELAY_MS later.
 */
export const ttlExpireProcessor: JobProcessor<SandboxJobData, TtlResult> = async (job, ctx, _signal, token) => {
  const c = await computeContext(ctx);
  const sandbox = await c.sandboxes.findById(job.data.sandboxId);
  if (!sandbox || sandbox.status === 'deleted' || sandbox.status === 'deleting') return { outcome: 'stale', status: sandbox?.status ?? null };
  if (!sandbox.expiresAt || sandbox.expiresAt.toISOString() !== job.data.expiresAt) return { outcome: 'stale', status: sandbox.status };

  const action = sandbox.onTtlExpire?.action ?? 'delete';
  if (action === 'delete') {
    if (allows('delete', sandbox.status)) {
      const result = await c.sandboxes.transition(sandbox.id, { from: ALLOWED_FROM.delete, to: 'deleting', reason: TTL_REASON, actor: PLATFORM_ACTOR, bumpOp: true });
      if (result.applied) {
        await c.jobs.delete(result.sandbox);
        return { outcome: 'deleting' };
      }
    }
  } else if (sandbox.status === 'stopped' || sandbox.status === 'failed') {
    return { outcome: 'nothing-to-do' };
  } else if (sandbox.status === 'running') {
    const snapshotId = action === 'snapshot-then-stop' ? await insertTtlSnapshot(c, sandbox) : undefined;
    const result = await c.sandboxes.transition(sandbox.id, { from: ALLOWED_FROM.stop, to: 'stopping', reason: TTL_REASON, actor: PLATFORM_ACTOR, bumpOp: true });
    if (result.applied) {
      await c.jobs.stop(result.sandbox, snapshotId);
      return { outcome: 'stopping', snapshotId };
    }
    if (snapshotId) await c.snapshots.delete(snapshotId);
  }
  return later(job, token);
};

async function later(job: Job, token: string | undefined): Promise<never> {
  if (!token) throw new Error('sandbox.ttl-expire needs the job token to wait');
  await job.moveToDelayed(Date.now() + TTL_RETRY_DELAY_MS, token);
  throw new DelayedError();
}

async function insertTtlSnapshot(c: ComputeContext, sandbox: SandboxEntity): Promise<string> {
  const id = newId(ID_PREFIX.snapshot);
  const now = new Date();
  const snapshot: SnapshotEntity = {
    id,
    workspaceId: sandbox.workspaceId,
    name: `${sandbox.name} at ttl expiry`,
    description: null,
    labels: {},
    status: 'creating',
    statusReason: null,
    sourceSandboxId: sandbox.id,
    sourceImage: sandbox.image,
    imageRef: snapshotImageRef(sandbox.workspaceId, id).ref,
    sizeBytes: null,
    createdByUserId: null,
    createdAt: now,
    updatedAt: now,
    readyAt: null,
  };
  await c.snapshots.insert(snapshot);
  return id;
}

import type { Job } from 'bullmq';
import type { SandboxJobData } from '../../../core/queues';
import type { SandboxEntity } from '../../../subgraphs/compute/sandboxes/sandbox.entity';
import { ALLOWED_FROM } from '../../../subgraphs/compute/sandboxes/sandbox.states';
import { snapshotImageRef } from '../../../subgraphs/compute/snapshots/snapshot.repository';
import { ImageNotFoundError } from '../../runtime/errors';
import type { JobProcessor } from '../types';
import { LABEL, PLATFORM_ACTOR, describeError, isLastAttempt, isRetryable } from './common';
import { computeContext, type ComputeContext } from './context';

export type SnapshotResult = { outcome: 'stale'; status: string | null } | { outcome: 'ready' | 'failed'; status: string; reason?: string };

/**
 * sandbox.snapshot: snapshotting → back to `resumeStatus`, committing the container into the
 * snapshot's image (the engine pauses a running container for the commit). The sandbox goes
 * back even when the commit fails; then the snapshot row is failed and the reason says why.
 */
export const snapshotProcessor: JobProcessor<SandboxJobData, SnapshotResult> = async (job, ctx) => {
  const c = await computeContext(ctx);
  const { sandboxId, snapshotId, resumeStatus } = job.data;
  const sandbox = await c.sandboxes.findById(sandboxId);
  if (!sandbox || sandbox.opSeq !== job.data.opSeq || sandbox.status !== 'snapshotting' || !snapshotId) return { outcome: 'stale', status: sandbox?.status ?? null };

  const outcome = await commitSnapshot(c, job, sandbox, snapshotId);
  const to = resumeStatus === 'stopped' ? 'stopped' : 'running';
  const reason = outcome.ok ? `snapshot ${snapshotId} ready` : `snapshot ${snapshotId} failed: ${outcome.reason}`;
  await c.sandboxes.transition(sandbox.id, { from: ALLOWED_FROM.workerSnapshotDone, to, reason, actor: PLATFORM_ACTOR });
  return { outcome: outcome.ok ? 'ready' : 'failed', status: to, ...(outcome.ok ? {} : { reason: outcome.reason }) };
};

/**
 * Commits the sandbox's container into the snapshot's image and completes the row (ready with
 * its size, or failed with the reason). A retryable error is rethrown while attempts remain.
 */
export async function commitSnapshot(c: ComputeContext, job: Job, sandbox: SandboxEntity, snapshotId: string): Promise<{ ok: true } | { ok: false; reason: string }> {
  const snapshot = await c.snapshots.findById(snapshotId);
  if (!snapshot) return { ok: false, reason: `snapshot ${snapshotId} not found` };
  if (snapshot.status === 'ready') return { ok: true }; // a retry after the row was completed
  if (snapshot.status === 'failed') return { ok: false, reason: snapshot.statusReason ?? 'failed' };
  try {
    if (!sandbox.containerId) throw new Error('the sandbox has no container');
    const { repository, tag } = snapshotImageRef(sandbox.workspaceId, snapshotId);
    const image = await c.engine.commit(sandbox.containerId, repository, tag, snapshotLabels(c, sandbox.workspaceId, snapshotId));
    await c.snapshots.complete(snapshotId, { status: 'ready', sizeBytes: image.sizeBytes });
    return { ok: true };
  } catch (err) {
    if (isRetryable(err) && !isLastAttempt(job)) throw err;
    const reason = describeError(err);
    await c.snapshots.complete(snapshotId, { status: 'failed', reason });
    c.logger.warn('snapshot failed', { sandboxId: sandbox.id, snapshotId, reason });
    return { ok: false, reason };
  }
}

function snapshotLabels(c: ComputeContext, workspaceId: string, snapshotId: string): Record<string, string> {
  return { [LABEL.workspace]: workspaceId, [LABEL.deployment]: c.config.deploymentId, [LABEL.kind]: 'snapshot', 'platform.snapshot': snapshotId };
}

/** snapshot.from-image: creating → ready by tagging an existing image (failed when it does not exist). */
export const snapshotFromImageProcessor: JobProcessor<{ snapshotId: string }, { outcome: 'stale' | 'ready' | 'failed'; reason?: string }> = async (job, ctx) => {
  const c = await computeContext(ctx);
  const snapshot = await c.snapshots.findById(job.data.snapshotId);
  if (!snapshot || snapshot.status !== 'creating') return { outcome: 'stale' };
  try {
    const { repository, tag } = snapshotImageRef(snapshot.workspaceId, snapshot.id);
    const image = await c.engine.tagImage(snapshot.sourceImage, repository, tag);
    await c.snapshots.complete(snapshot.id, { status: 'ready', sizeBytes: image.sizeBytes });
    return { outcome: 'ready' };
  } catch (err) {
    if (!(err instanceof ImageNotFoundError) && isRetryable(err) && !isLastAttempt(job)) throw err;
    const reason = err instanceof ImageNotFoundError ? `image ${snapshot.sourceImage} not found` : describeError(err);
    await c.snapshots.complete(snapshot.id, { status: 'failed', reason });
    return { outcome: 'failed', reason };
  }
};

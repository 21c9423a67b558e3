import type { SandboxJobData } from '../../../core/queues';
import { ALLOWED_FROM } from '../../../subgraphs/compute/sandboxes/sandbox.states';
import { ContainerNotFoundError } from '../../runtime/errors';
import type { JobProcessor } from '../types';
import { PLATFORM_ACTOR, describeError, isLastAttempt, isRetryable } from './common';
import { computeContext } from './context';
import { releaseGpus } from './gpu';
import { commitSnapshot } from './snapshot';
import { sampleNow } from './stats';

/** Seconds between SIGTERM and SIGKILL. */
export const STOP_TIMEOUT_SECONDS = 10;

export type StopResult = { outcome: 'stale'; status: string | null } | { outcome: 'stopped'; snapshot?: 'ready' | 'failed' } | { outcome: 'failed'; reason: string };

/**
 * sandbox.stop: stopping → stopped, the container kept (its files stay for the next start).
 * With `snapshotId`: stopping → snapshotting → stopped, committing the stopped container into
 * the snapshot's image. A retry after a crash mid-commit finds the sandbox snapshotting and goes on.
 */
export const stopProcessor: JobProcessor<SandboxJobData, StopResult> = async (job, ctx) => {
  const c = await computeContext(ctx);
  const { sandboxId, snapshotId } = job.data;
  const sandbox = await c.sandboxes.findById(sandboxId);
  const expected = snapshotId ? ['stopping', 'snapshotting'] : ['stopping'];
  if (!sandbox || sandbox.opSeq !== job.data.opSeq || !expected.includes(sandbox.status)) return { outcome: 'stale', status: sandbox?.status ?? null };

  let containerGone = !sandbox.containerId;
  try {
    if (sandbox.containerId && sandbox.status === 'stopping') {
      await sampleNow(c, sandbox);
      try {
        await c.engine.stop(sandbox.containerId, STOP_TIMEOUT_SECONDS);
      } catch (err) {
        if (!(err instanceof ContainerNotFoundError)) throw err;
        containerGone = true;
      }
    }

    let snapshot: 'ready' | 'failed' | undefined;
    let reason = containerGone ? 'stopped (the container was gone)' : 'container stopped';
    if (snapshotId) {
      if (sandbox.status === 'stopping') {
        await c.sandboxes.transition(sandbox.id, { from: ['stopping'], to: 'snapshotting', reason: `committing snapshot ${snapshotId}`, actor: PLATFORM_ACTOR });
      }
      const outcome = await commitSnapshot(c, job, sandbox, snapshotId);
      snapshot = outcome.ok ? 'ready' : 'failed';
      reason = outcome.ok ? `stopped; snapshot ${snapshotId} ready` : `stopped; snapshot ${snapshotId} failed: ${outcome.reason}`;
    }

    await c.sandboxes.transition(sandbox.id, {
      from: ALLOWED_FROM.workerStopped,
      to: 'stopped',
      reason,
      actor: PLATFORM_ACTOR,
      patch: { stoppedAt: new Date(), ...(containerGone ? { containerId: null } : {}) },
    });
    await releaseGpus(c, sandbox.id);
    return { outcome: 'stopped', snapshot };
  } catch (err) {
    if (isRetryable(err) && !isLastAttempt(job)) throw err;
    const reason = `stop failed: ${describeError(err)}`;
    if (snapshotId) await c.snapshots.complete(snapshotId, { status: 'failed', reason });
    await c.sandboxes.transition(sandbox.id, { from: ALLOWED_FROM.workerFailed, to: 'failed', reason, actor: PLATFORM_ACTOR });
    await releaseGpus(c, sandbox.id);
    return { outcome: 'failed', reason };
  }
};

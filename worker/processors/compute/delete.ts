import type { SandboxJobData } from '../../../core/queues';
import { ALLOWED_FROM, allows } from '../../../subgraphs/compute/sandboxes/sandbox.states';
import type { JobProcessor } from '../types';
import { PLATFORM_ACTOR } from './common';
import { computeContext } from './context';
import { releaseGpus } from './gpu';
import { removeSandboxContainers } from './start';

export type DeleteResult = { outcome: 'stale'; status: string | null } | { outcome: 'deleted'; containersRemoved: number };

/**
 * sandbox.delete: deleting → deleted. Removes every container labelled with the sandbox id (the
 * current one and any leftover), frees its GPUs and drops its ports. Idempotent: a retry, or a
 * second job, finds nothing left to remove. Errors are retried; after the last attempt the
 * sandbox stays `deleting` and the reconciler queues the delete again.
 */
export const deleteProcessor: JobProcessor<SandboxJobData, DeleteResult> = async (job, ctx) => {
  const c = await computeContext(ctx);
  const sandbox = await c.sandboxes.findById(job.data.sandboxId);
  if (!sandbox || !allows('workerDeleted', sandbox.status)) return { outcome: 'stale', status: sandbox?.status ?? null };

  const removed = await removeSandboxContainers(c, sandbox.id);
  // The recorded container goes by id as well, should its labels ever not match (remove is a no-op when missing).
  if (sandbox.containerId && removed === 0) await c.engine.remove(sandbox.containerId);
  await releaseGpus(c, sandbox.id);
  await c.sandboxes.deletePorts(sandbox.id);
  await c.sandboxes.transition(sandbox.id, {
    from: ALLOWED_FROM.workerDeleted,
    to: 'deleted',
    reason: 'container removed',
    actor: PLATFORM_ACTOR,
    patch: { deletedAt: new Date(), containerId: null },
  });
  return { outcome: 'deleted', containersRemoved: removed };
};

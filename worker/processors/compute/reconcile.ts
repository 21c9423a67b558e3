import { sandboxJobId } from '../../../subgraphs/compute/compute-jobs';
import type { SandboxEntity } from '../../../subgraphs/compute/sandboxes/sandbox.entity';
import { ALLOWED_FROM, TRANSITIONAL_STATUSES } from '../../../subgraphs/compute/sandboxes/sandbox.states';
import { RuntimeUnavailableError } from '../../runtime/errors';
import type { ContainerSummary } from '../../runtime/types';
import type { JobProcessor } from '../types';
import { LABEL, PLATFORM_ACTOR, deploymentSelector, mapBounded } from './common';
import { computeContext, type ComputeContext } from './context';
import { releaseGpus, releaseOrphanedGpus } from './gpu';
import { failIfContainerDead } from './stats';

/**
 * The status reason the reconciler leaves on a pending/starting sandbox whose start it queued
 * again. Found there a second time (the job was lost again), the sandbox fails instead.
 */
export const START_REQUEUED_REASON = 'start queued again by the reconciler';
export const START_LOST_REASON = 'start did not complete: the worker running it was lost twice';

/** Job states in which a job still stands behind its sandbox. */
const LIVE_JOB_STATES = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);

export interface ReconcileReport {
  containersRemoved: number;
  runningFailed: number;
  requeued: number;
  healed: number;
  gpusReleased: number;
}

/**
 * compute.reconcile (scheduled every reconcileIntervalSeconds): heals the engine and the
 * database after crashes; see README.md for the rules.
 */
export const reconcileProcessor: JobProcessor<unknown, ReconcileReport> = async (_job, ctx) => {
  const c = await computeContext(ctx);
  const report: ReconcileReport = { containersRemoved: 0, runningFailed: 0, requeued: 0, healed: 0, gpusReleased: 0 };
  const workspaces = new Set<string>();

  // Engine → database: containers no sandbox stands behind. Listed before the rows are read, so
  // a container a start job creates meanwhile is seen with its sandbox still starting.
  let containers: ContainerSummary[];
  try {
    containers = await c.engine.listByLabels(deploymentSelector(c));
  } catch (err) {
    // No engine, nothing to compare with: skip this run quietly instead of retrying it.
    if (!(err instanceof RuntimeUnavailableError)) throw err;
    c.logger.warn('reconcile skipped: the container engine is unavailable', { err: err.message });
    return report;
  }
  const rows = new Map((await c.sandboxes.findByIds([...new Set(containers.map((x) => x.labels[LABEL.id]).filter((id): id is string => !!id))])).map((s) => [s.id, s]));
  await mapBounded(containers, 8, async (container) => {
    const sandbox = rows.get(container.labels[LABEL.id] ?? '');
    if (!isOrphan(container, sandbox)) return;
    await c.engine.remove(container.id);
    report.containersRemoved += 1;
    if (sandbox) workspaces.add(sandbox.workspaceId);
    c.logger.info('removed an orphaned container', { containerId: container.id, sandboxId: sandbox?.id ?? container.labels[LABEL.id] ?? null, status: sandbox?.status ?? null });
  });

  // Running sandboxes whose container is gone or exited on its own.
  const live = new Set(containers.filter((x) => x.state === 'running' || x.state === 'paused').map((x) => x.id));
  const running = await c.sandboxes.findByStatus(['running'], 1000);
  await mapBounded(
    running.filter((s) => !s.containerId || !live.has(s.containerId)),
    8,
    async (sandbox) => {
      if (await failIfContainerDead(c, sandbox)) {
        report.runningFailed += 1;
        workspaces.add(sandbox.workspaceId);
      }
    },
  );

  // Database → engine: transitional sandboxes with no job behind them.
  const stuck = await c.sandboxes.findInStatesSince(TRANSITIONAL_STATUSES, new Date(Date.now() - c.config.stuckAfterSeconds * 1000));
  for (const sandbox of stuck) {
    try {
      const outcome = await healStuck(c, sandbox);
      if (outcome === 'requeued') report.requeued += 1;
      if (outcome === 'healed') report.healed += 1;
      if (outcome !== 'busy') workspaces.add(sandbox.workspaceId);
    } catch (err) {
      c.logger.warn('could not heal a stuck sandbox', { sandboxId: sandbox.id, status: sandbox.status, err });
    }
  }

  report.gpusReleased = await releaseOrphanedGpus(c);
  for (const workspaceId of workspaces) await c.sandboxes.syncActiveCount(workspaceId);
  if (report.containersRemoved || report.runningFailed || report.requeued || report.healed || report.gpusReleased) c.logger.info('reconciled', { ...report });
  return report;
};

/**
 * A container is orphaned when its sandbox is missing, deleted or deleting, or when it is not
 * the sandbox's container while no start is under way (a crashed create's leftover).
 */
function isOrphan(container: ContainerSummary, sandbox: SandboxEntity | undefined): boolean {
  if (!sandbox || sandbox.status === 'deleted' || sandbox.status === 'deleting') return true;
  return container.id !== sandbox.containerId && sandbox.status !== 'starting' && sandbox.status !== 'pending';
}

async function healStuck(c: ComputeContext, sandbox: SandboxEntity): Promise<'busy' | 'requeued' | 'healed'> {
  const startJob = sandbox.status === 'pending' || sandbox.status === 'starting';
  const queue = startJob && sandbox.gpuCount > 0 ? c.queues.gpu : c.queues.compute;
  const job = await queue.getJob(sandboxJobId(sandbox.id, sandbox.opSeq));
  if (job && LIVE_JOB_STATES.has(await job.getState())) return 'busy';
  const requeue = async (add: () => Promise<unknown>) => {
    await job?.remove();
    await add();
    c.logger.info('queued a lost sandbox job again', { sandboxId: sandbox.id, status: sandbox.status, opSeq: sandbox.opSeq });
    return 'requeued' as const;
  };

  switch (sandbox.status) {
    case 'pending':
    case 'starting': {
      if (sandbox.statusReason === START_REQUEUED_REASON) {
        await c.sandboxes.transition(sandbox.id, { from: [sandbox.status], to: 'failed', reason: START_LOST_REASON, actor: PLATFORM_ACTOR });
        await releaseGpus(c, sandbox.id);
        return 'healed';
      }
      const marked = await c.sandboxes.transition(sandbox.id, { from: [sandbox.status], to: sandbox.status, reason: START_REQUEUED_REASON, actor: PLATFORM_ACTOR });
      if (!marked.applied) return 'busy';
      return requeue(() => c.jobs.start(sandbox));
    }
    case 'stopping': {
      const state = sandbox.containerId ? await c.engine.inspect(sandbox.containerId) : null;
      if (state?.running) return requeue(() => c.jobs.stop(sandbox, job?.data?.snapshotId));
      const result = await c.sandboxes.transition(sandbox.id, {
        from: ['stopping'],
        to: 'stopped',
        reason: 'stop completed by the reconciler',
        actor: PLATFORM_ACTOR,
        patch: { stoppedAt: new Date(), ...(state ? {} : { containerId: null }) },
      });
      if (result.applied) await finishInterrupted(c, sandbox, 'the sandbox stopped before the snapshot was taken');
      return 'healed';
    }
    case 'snapshotting': {
      const state = sandbox.containerId ? await c.engine.inspect(sandbox.containerId) : null;
      const to = state?.running ? 'running' : 'stopped';
      const result = await c.sandboxes.transition(sandbox.id, {
        from: ALLOWED_FROM.workerSnapshotDone,
        to,
        reason: `snapshot interrupted; back to ${to}`,
        actor: PLATFORM_ACTOR,
        patch: to === 'stopped' ? { stoppedAt: new Date(), ...(state ? {} : { containerId: null }) } : {},
      });
      if (result.applied) await finishInterrupted(c, sandbox, 'the worker taking the snapshot was lost', to === 'stopped');
      return 'healed';
    }
    case 'deleting':
      return requeue(() => c.jobs.delete(sandbox));
    default:
      return 'busy';
  }
}

/** Snapshot rows of the sandbox left `creating` fail; GPUs are freed when it no longer runs. */
async function finishInterrupted(c: ComputeContext, sandbox: SandboxEntity, reason: string, release = true): Promise<void> {
  const creating = await c.snapshots.rows.find({ where: { sourceSandboxId: sandbox.id, status: 'creating' } });
  for (const snapshot of creating) await c.snapshots.complete(snapshot.id, { status: 'failed', reason });
  if (release) await releaseGpus(c, sandbox.id);
}

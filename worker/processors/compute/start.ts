import { DelayedError, type Job } from 'bullmq';
import type { SandboxJobData } from '../../../core/queues';
import type { SandboxEntity } from '../../../subgraphs/compute/sandboxes/sandbox.entity';
import { ACTIVE_STATUSES, ALLOWED_FROM, allows } from '../../../subgraphs/compute/sandboxes/sandbox.states';
import type { SnapshotEntity } from '../../../subgraphs/compute/snapshots/snapshot.entity';
import { ContainerNotFoundError } from '../../runtime/errors';
import type { ContainerSpec } from '../../runtime/types';
import type { JobProcessor } from '../types';
import { LABEL, PLATFORM_ACTOR, PermanentError, containerLabels, describeError, engineStatus, isLastAttempt, isRetryable } from './common';
import { computeContext, type ComputeContext } from './context';
import { allocateGpus, releaseGpus } from './gpu';

/** How long a GPU sandbox waits before it looks for free devices again. */
export const GPU_RETRY_DELAY_MS = 2000;

export type StartResult =
  | { outcome: 'stale'; status: string | null }
  | { outcome: 'running'; containerId: string; how: 'restarted' | 'created'; durationMs: number }
  | { outcome: 'failed'; reason: string }
  | { outcome: 'superseded'; status: string | null };

/**
 * sandbox.start (compute queue; gpu queue for sandboxes with GPUs): pending|starting → running.
 * Restarts the kept container when there is one and no boot snapshot; otherwise removes any
 * container of the sandbox (a crashed attempt's, or the one a snapshot replaces) and creates a
 * new one. Done with the fewest engine and database round trips: the first boot of a sandbox is
 * one conditional UPDATE to `starting` (side by side with the container create), create+start,
 * and one UPDATE to `running`.
 */
export const startProcessor: JobProcessor<SandboxJobData, StartResult> = async (job, ctx, _signal, token) => {
  const c = await computeContext(ctx);
  const sandbox = await c.sandboxes.findById(job.data.sandboxId);
  if (!sandbox || sandbox.opSeq !== job.data.opSeq || !allows('workerStart', sandbox.status)) {
    return { outcome: 'stale', status: sandbox?.status ?? null };
  }

  let gpus: string[] = [];
  if (sandbox.gpuCount > 0) {
    let allocated: string[] | null;
    try {
      allocated = await allocateGpus(c, sandbox);
    } catch (err) {
      if (!(err instanceof PermanentError)) throw err;
      return fail(c, sandbox, err.message, {});
    }
    if (!allocated) {
      // Stays pending; the same job comes back in a moment (BullMQ's delay-from-the-processor pattern).
      if (!token) throw new Error('sandbox.start needs the job token to wait for GPUs');
      c.logger.debug('waiting for free GPUs', { sandboxId: sandbox.id, gpuType: sandbox.gpuType, gpuCount: sandbox.gpuCount });
      await job.moveToDelayed(Date.now() + GPU_RETRY_DELAY_MS, token);
      throw new DelayedError();
    }
    gpus = allocated;
  }
  return boot(c, job, sandbox, gpus);
};

async function boot(c: ComputeContext, job: Job<SandboxJobData>, sandbox: SandboxEntity, gpus: string[]): Promise<StartResult> {
  const began = Date.now();
  // pending → starting runs beside the engine calls; it is awaited before → running.
  const starting =
    sandbox.status === 'pending'
      ? c.sandboxes.transition(sandbox.id, { from: ALLOWED_FROM.workerStart, to: 'starting', reason: 'worker picked the job', actor: PLATFORM_ACTOR })
      : null;
  starting?.catch(() => undefined); // awaited below; never an unhandled rejection meanwhile
  let created: string | null = null;
  let restarted: string | null = null;
  let removedOld = false;
  try {
    let fromSnapshot: SnapshotEntity | null = null;
    if (sandbox.containerId && !sandbox.bootSnapshotId) {
      try {
        await c.engine.start(sandbox.containerId);
        restarted = sandbox.containerId;
      } catch (err) {
        if (!(err instanceof ContainerNotFoundError)) throw err;
        c.logger.warn('the sandbox container is gone, creating a new one', { sandboxId: sandbox.id, containerId: sandbox.containerId });
      }
    }
    if (!restarted) {
      if (sandbox.bootSnapshotId) fromSnapshot = await readySnapshot(c, sandbox);
      const [env, volumes] = await Promise.all([environment(c, job, sandbox), volumesOf(c, sandbox)]);
      // Nothing can exist yet on a first attempt of a first boot; otherwise clear the way.
      const fresh = sandbox.opSeq === 0 && !sandbox.containerId && job.attemptsMade === 0 && !job.stalledCounter;
      if (!fresh) removedOld = (await removeSandboxContainers(c, sandbox.id)) > 0 || !!sandbox.containerId;
      const spec: ContainerSpec = {
        name: `plat-${sandbox.id}-${sandbox.opSeq}`,
        image: fromSnapshot?.imageRef ?? sandbox.image,
        env,
        args: sandbox.args ?? undefined,
        labels: containerLabels(c, sandbox),
        cpuMillis: sandbox.cpuMillis ?? undefined,
        memoryMb: sandbox.memoryMb ?? undefined,
        gpuDeviceIds: gpus.length ? gpus : undefined,
        volumes,
      };
      created = await createContainer(c, sandbox, spec);
    }

    if (starting && !(await starting).applied) return abandon(c, sandbox, created, restarted);
    const containerId = (created ?? restarted)!;
    const reason = fromSnapshot ? `container started from snapshot ${fromSnapshot.id}` : restarted ? 'container restarted' : 'container started';
    const result = await c.sandboxes.transition(sandbox.id, {
      from: ALLOWED_FROM.workerRunning,
      to: 'running',
      reason,
      actor: PLATFORM_ACTOR,
      patch: { containerId, startedAt: new Date(), bootSnapshotId: null, ...(fromSnapshot ? { image: fromSnapshot.imageRef } : {}) },
    });
    if (!result.applied) return abandon(c, sandbox, created, restarted);
    const durationMs = Date.now() - began;
    c.logger.info('sandbox running', { sandboxId: sandbox.id, containerId, how: restarted ? 'restarted' : 'created', durationMs });
    return { outcome: 'running', containerId, how: restarted ? 'restarted' : 'created', durationMs };
  } catch (err) {
    await starting?.catch(() => undefined);
    // A half-made container never outlives the attempt that made it.
    if (created) await c.engine.remove(created).catch((e) => c.logger.warn('could not remove a half-made container', { sandboxId: sandbox.id, err: e }));
    if (isRetryable(err) && !isLastAttempt(job)) {
      c.logger.warn('sandbox start attempt failed, will retry', { sandboxId: sandbox.id, attemptsMade: job.attemptsMade, err });
      throw err;
    }
    if (restarted) await c.engine.stop(restarted, 0).catch(() => undefined);
    return fail(c, sandbox, describeError(err), removedOld || created ? { containerId: null } : {});
  }
}

/** The transition to running was refused (deleted or failed meanwhile): undo this attempt's work. */
async function abandon(c: ComputeContext, sandbox: SandboxEntity, created: string | null, restarted: string | null): Promise<StartResult> {
  const current = await c.sandboxes.findById(sandbox.id);
  if (created) await c.engine.remove(created).catch(() => undefined);
  else if (restarted && current?.status !== 'running') await c.engine.stop(restarted, 10).catch(() => undefined);
  if (!current || !ACTIVE_STATUSES.includes(current.status)) await releaseGpus(c, sandbox.id);
  c.logger.info('sandbox changed while it was starting; start abandoned', { sandboxId: sandbox.id, status: current?.status ?? null });
  return { outcome: 'superseded', status: current?.status ?? null };
}

/** → failed with `reason`; GPUs freed. */
async function fail(c: ComputeContext, sandbox: SandboxEntity, reason: string, patch: { containerId?: null }): Promise<StartResult> {
  // bootSnapshotId is cleared: a plain start afterwards restarts the kept container, if any.
  await c.sandboxes.transition(sandbox.id, { from: ALLOWED_FROM.workerFailed, to: 'failed', reason, actor: PLATFORM_ACTOR, patch: { ...patch, bootSnapshotId: null } });
  await releaseGpus(c, sandbox.id);
  c.logger.warn('sandbox failed to start', { sandboxId: sandbox.id, reason });
  return { outcome: 'failed', reason };
}

async function readySnapshot(c: ComputeContext, sandbox: SandboxEntity): Promise<SnapshotEntity> {
  const snapshot = await c.snapshots.findById(sandbox.bootSnapshotId!);
  if (!snapshot || snapshot.workspaceId !== sandbox.workspaceId) throw new PermanentError(`snapshot ${sandbox.bootSnapshotId} not found`);
  if (snapshot.status !== 'ready') throw new PermanentError(`snapshot ${snapshot.id} is ${snapshot.status}, not ready`);
  return snapshot;
}

/** sandbox.env plus the decrypted secretRefs (values go to the engine only, never to logs or rows). */
async function environment(c: ComputeContext, job: Job, sandbox: SandboxEntity): Promise<Record<string, string>> {
  const env = { ...sandbox.env };
  if (!sandbox.secretRefs?.length) return env;
  const secrets = await c.secrets();
  const keys = [...new Set(sandbox.secretRefs.map((ref) => ref.secretKey))];
  // principal null: the platform itself, acting on a job the compute subgraph authorised.
  const { values } = await secrets.resolveValues({ principal: null, requestId: `job:${job.id}`, clientIp: 'worker' }, { workspaceId: sandbox.workspaceId, keys });
  for (const ref of sandbox.secretRefs) env[ref.envVar] = values[ref.secretKey]!;
  return env;
}

/** Engine volume of a workspace volume: shared by every sandbox of the workspace that mounts it. */
export function volumeName(workspaceId: string, volume: string): string {
  return `plat-vol-${workspaceId}-${volume}`;
}

async function volumesOf(c: ComputeContext, sandbox: SandboxEntity): Promise<ContainerSpec['volumes']> {
  const mounts = sandbox.volumeMounts ?? [];
  if (!mounts.length) return undefined;
  const labels = { [LABEL.workspace]: sandbox.workspaceId, [LABEL.deployment]: c.config.deploymentId, [LABEL.kind]: 'volume' };
  const names = [...new Set(mounts.map((m) => volumeName(sandbox.workspaceId, m.volume)))];
  await Promise.all(names.map((name) => c.engine.ensureVolume(name, labels)));
  return mounts.map((m) => ({ volumeName: volumeName(sandbox.workspaceId, m.volume), mountPath: m.mountPath, readOnly: m.readOnly }));
}

/** createAndStart; a name taken by a crashed attempt's container (same op) is cleared once and tried again. */
async function createContainer(c: ComputeContext, sandbox: SandboxEntity, spec: ContainerSpec): Promise<string> {
  try {
    return (await c.engine.createAndStart(spec)).containerId;
  } catch (err) {
    if (engineStatus(err) !== 409 || !/already in use/i.test(describeError(err))) throw err;
    await removeSandboxContainers(c, sandbox.id);
    return (await c.engine.createAndStart(spec)).containerId;
  }
}

/** Removes every container labelled with the sandbox id (except `keep`); returns how many. */
export async function removeSandboxContainers(c: ComputeContext, sandboxId: string, keep?: string | null): Promise<number> {
  const found = (await c.engine.listByLabels({ [LABEL.id]: sandboxId })).filter((container) => container.id !== keep);
  await Promise.all(found.map((container) => c.engine.remove(container.id)));
  return found.length;
}

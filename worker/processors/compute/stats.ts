import { IsNull, Not } from 'typeorm';
import type { SandboxEntity } from '../../../subgraphs/compute/sandboxes/sandbox.entity';
import type { UsageKind } from '../../../subgraphs/compute/metering/usage-event.entity';
import { ContainerNotFoundError } from '../../runtime/errors';
import type { StatsSample } from '../../runtime/types';
import type { JobProcessor } from '../types';
import { PLATFORM_ACTOR, deploymentSelector, mapBounded } from './common';
import { computeContext, type ComputeContext } from './context';
import { releaseGpus } from './gpu';

/** Running sandboxes one sample run looks at, at most (oldest ids first). */
export const MAX_SAMPLED_PER_RUN = 500;
/** Engine stats calls in flight at once. */
export const SAMPLE_PARALLELISM = 8;

export interface PreviousSample {
  at: Date;
  cpuNanos: number;
}

/** compute.sample-stats (scheduled): one stats row and the usage events of every running sandbox. */
export const sampleStatsProcessor: JobProcessor<unknown, { sampled: number; failed: number }> = async (_job, ctx) => {
  const c = await computeContext(ctx);
  const running = await c.sandboxes.rows.find({ where: { status: 'running', containerId: Not(IsNull()) }, order: { id: 'ASC' }, take: MAX_SAMPLED_PER_RUN });
  if (!running.length) return { sampled: 0, failed: 0 };
  const [containers, previous] = await Promise.all([c.engine.listByLabels(deploymentSelector(c)), previousSamples(c, running.map((s) => s.id))]);
  const states = new Map(containers.map((container) => [container.id, container.state]));
  let sampled = 0;
  let failed = 0;
  await mapBounded(running, SAMPLE_PARALLELISM, async (sandbox) => {
    try {
      const state = states.get(sandbox.containerId!);
      if (state !== 'running' && state !== 'paused') {
        if (await failIfContainerDead(c, sandbox)) failed += 1;
        return;
      }
      const sample = await c.engine.stats(sandbox.containerId!);
      await recordSample(c, sandbox, sample, previous.get(sandbox.id) ?? null);
      sampled += 1;
    } catch (err) {
      if (err instanceof ContainerNotFoundError) {
        if (await failIfContainerDead(c, sandbox)) failed += 1;
        return;
      }
      c.logger.warn('could not sample a sandbox', { sandboxId: sandbox.id, err });
    }
  });
  return { sampled, failed };
};

/** compute.purge-stats (scheduled): drops samples older than statsRetentionHours. */
export const purgeStatsProcessor: JobProcessor<unknown, { purged: number }> = async (_job, ctx) => {
  const c = await computeContext(ctx);
  const [, purged]: [unknown, number] = await c.dataSource.query(`DELETE FROM compute.sandbox_stats WHERE at < now() - make_interval(hours => $1)`, [c.config.statsRetentionHours]);
  return { purged };
};

/** The newest sample of each sandbox (the base of the next deltas). */
export async function previousSamples(c: ComputeContext, sandboxIds: string[]): Promise<Map<string, PreviousSample>> {
  const rows: Array<{ sandbox_id: string; at: Date; cpu_nanos: string }> = await c.dataSource.query(
    `SELECT DISTINCT ON (sandbox_id) sandbox_id, at, cpu_nanos FROM compute.sandbox_stats WHERE sandbox_id = ANY($1::text[]) ORDER BY sandbox_id, at DESC`,
    [sandboxIds],
  );
  return new Map(rows.map((r) => [r.sandbox_id, { at: new Date(r.at), cpuNanos: Number(r.cpu_nanos) }]));
}

/**
 * Stores one sample and meters the period since the previous one of the same run (or since the
 * container started, for a run's first sample). Usage event keys are
 * `<sandboxId>:<kind>:<sample time ms>`, so recording the same sample again adds nothing.
 * Returns the usage events inserted.
 */
export async function recordSample(c: ComputeContext, sandbox: SandboxEntity, sample: StatsSample, previous: PreviousSample | null): Promise<number> {
  const runStart = sandbox.startedAt ? sandbox.startedAt.getTime() : null;
  const at = sample.at.getTime();
  // The previous sample belongs to this run unless the container started (again) after it.
  const sameRun = previous !== null && (runStart === null || previous.at.getTime() >= runStart);
  // Counters restart with the container: a lower value is a new run, all of it new usage.
  const cpuDelta = sameRun && sample.cpuNanos >= previous!.cpuNanos ? sample.cpuNanos - previous!.cpuNanos : sample.cpuNanos;
  const periodStart = Math.min(at, sameRun ? previous!.at.getTime() : (runStart ?? at));
  const seconds = (at - periodStart) / 1000;
  const cpuCores = sameRun && at > previous!.at.getTime() ? cpuDelta / ((at - previous!.at.getTime()) * 1e6) : 0;

  const usage: Array<[UsageKind, number]> = [
    ['cpu_seconds', cpuDelta / 1e9],
    ['memory_gb_seconds', (sample.memoryBytes / 1e9) * seconds],
  ];
  if (sandbox.gpuCount > 0) usage.push(['gpu_seconds', sandbox.gpuCount * seconds]);
  const events = usage.filter(([, quantity]) => quantity > 0);

  return c.dataSource.transaction(async (manager) => {
    await manager.query(
      `INSERT INTO compute.sandbox_stats (sandbox_id, at, workspace_id, cpu_cores, cpu_nanos, memory_bytes, memory_limit_bytes, network_rx_bytes, network_tx_bytes)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (sandbox_id, at) DO NOTHING`,
      [sandbox.id, sample.at, sandbox.workspaceId, cpuCores, Math.round(sample.cpuNanos), Math.round(sample.memoryBytes), Math.round(sample.memoryLimitBytes), Math.round(sample.networkRxBytes), Math.round(sample.networkTxBytes)],
    );
    if (!events.length) return 0;
    const params: unknown[] = [];
    const values = events.map(([kind, quantity]) => {
      params.push(`${sandbox.id}:${kind}:${at}`, sandbox.workspaceId, sandbox.id, kind, quantity, new Date(periodStart), sample.at);
      const n = params.length;
      return `($${n - 6}, $${n - 5}, $${n - 4}, $${n - 3}, $${n - 2}, $${n - 1}, $${n}, now())`;
    });
    const inserted: unknown[] = await manager.query(
      `INSERT INTO compute.usage_events (idempotency_key, workspace_id, sandbox_id, kind, quantity, period_start, period_end, created_at)
       VALUES ${values.join(', ')} ON CONFLICT (idempotency_key) DO NOTHING RETURNING id`,
      params,
    );
    return inserted.length;
  });
}

/** Samples one sandbox now (the final sample before a stop); failures are logged, never thrown. */
export async function sampleNow(c: ComputeContext, sandbox: SandboxEntity): Promise<void> {
  if (!sandbox.containerId) return;
  try {
    const [sample, previous] = await Promise.all([c.engine.stats(sandbox.containerId), previousSamples(c, [sandbox.id])]);
    await recordSample(c, sandbox, sample, previous.get(sandbox.id) ?? null);
  } catch (err) {
    c.logger.debug('no final sample', { sandboxId: sandbox.id, err });
  }
}

/**
 * A sandbox the database says is running, whose container is gone or exited on its own, fails.
 * Read again and inspected right before, so a sandbox that moved on meanwhile is left alone.
 * Returns whether it was failed.
 */
export async function failIfContainerDead(c: ComputeContext, sandbox: SandboxEntity): Promise<boolean> {
  const current = await c.sandboxes.findById(sandbox.id);
  if (!current || current.status !== 'running' || !current.containerId) return false;
  const state = await c.engine.inspect(current.containerId);
  if (state?.running) return false;
  const reason = !state
    ? 'container disappeared'
    : `container exited with code ${state.exitCode ?? 'unknown'}${state.oomKilled ? ' (out of memory)' : ''}${await lastLogLine(c, current.containerId)}`;
  const result = await c.sandboxes.transition(current.id, { from: ['running'], to: 'failed', reason, actor: PLATFORM_ACTOR, ...(state ? {} : { patch: { containerId: null } }) });
  if (!result.applied) return false;
  await releaseGpus(c, current.id);
  c.logger.warn('running sandbox failed', { sandboxId: current.id, containerId: current.containerId, reason });
  return true;
}

/** `: <the container's last output line>` (it often says why it exited), or nothing. */
async function lastLogLine(c: ComputeContext, containerId: string): Promise<string> {
  try {
    const lines = await c.engine.logs(containerId, { tail: 1, maxBytes: 300 });
    const line = lines.at(-1)?.line.trim();
    return line ? `: ${line.slice(0, 200)}` : '';
  } catch {
    return '';
  }
}

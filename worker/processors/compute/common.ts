import type { Job } from 'bullmq';
import { DomainError } from '../../../core/errors';
import { ImageNotFoundError, RuntimeUnavailableError } from '../../runtime/errors';
import type { SandboxEntity } from '../../../subgraphs/compute/sandboxes/sandbox.entity';
import type { ComputeContext } from './context';

/** Actor of every transition the worker applies. */
export const PLATFORM_ACTOR = 'platform';

/** Labels every sandbox container carries; the reconciler finds this deployment's containers by them. */
export const LABEL = {
  id: 'platform.id',
  workspace: 'platform.workspace',
  kind: 'platform.kind',
  deployment: 'platform.deployment',
  op: 'platform.op',
} as const;

export function containerLabels(c: ComputeContext, sandbox: SandboxEntity): Record<string, string> {
  return {
    [LABEL.id]: sandbox.id,
    [LABEL.workspace]: sandbox.workspaceId,
    [LABEL.kind]: 'sandbox',
    [LABEL.deployment]: c.config.deploymentId,
    [LABEL.op]: String(sandbox.opSeq),
  };
}

/** Labels selecting every sandbox container of this deployment. */
export function deploymentSelector(c: ComputeContext): Record<string, string> {
  return { [LABEL.kind]: 'sandbox', [LABEL.deployment]: c.config.deploymentId };
}

/** A failure that retrying cannot fix (bad image, missing secret, no such GPU type): the sandbox fails at once. */
export class PermanentError extends Error {
  override name = 'PermanentError';
}

/** True on the job's last attempt (attempts counts the first try). */
export function isLastAttempt(job: Job): boolean {
  return job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
}

/**
 * Whether a retry may help: the engine or the database being unreachable, or anything
 * unexpected. Engine 4xx answers, missing images and PermanentErrors will not change.
 */
export function isRetryable(err: unknown): boolean {
  if (err instanceof PermanentError || err instanceof ImageNotFoundError) return false;
  if (err instanceof DomainError) return false; // a missing secret key
  if (err instanceof RuntimeUnavailableError) return true;
  const status = (err as { statusCode?: number } | null)?.statusCode;
  return !(typeof status === 'number' && status >= 400 && status < 500);
}

/** A short, user-facing reason for a failure (the engine's own words where it has some). */
export function describeError(err: unknown): string {
  if (err instanceof ImageNotFoundError) return `image ${err.ref} not found`;
  const e = err as { json?: { message?: string } | null; message?: string } | null;
  const message = e?.json?.message ?? e?.message ?? String(err);
  return message.replace(/^\(HTTP code \d+\)\s*[a-z ]*-\s*/i, '').trim().slice(0, 500);
}

export function engineStatus(err: unknown): number | undefined {
  return (err as { statusCode?: number } | null)?.statusCode;
}

/** Runs `fn` over `items` with at most `limit` at a time. */
export async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  });
  await Promise.all(lanes);
  return results;
}

/**
 * The sandbox state machine, the one place that says which operation each state allows.
 *
 *   pending ──▶ starting ──▶ running ──▶ stopping ──▶ stopped
 *                  │            │  ▲         │           │
 *                  │            ▼  │         ▼           │
 *                  │        snapshotting ◀───┘ (stop-with-snapshot)
 *                  ▼
 *               failed          any of pending, running, stopped, failed ──▶ deleting ──▶ deleted
 *
 * - pending: accepted, waiting for a worker (a GPU sandbox waits here for free GPUs).
 * - starting: a worker is creating or starting the container (start, start-from-* go here directly).
 * - running: the container runs; exec, files, ports, snapshots.
 * - stopping / stopped: the container is stopped but kept, so its files stay for the next start.
 * - snapshotting: the engine commits the filesystem; afterwards back to running or on to stopped.
 * - failed: the container could not start or exited on its own; start or delete it.
 * - deleting / deleted: the container and its ports are gone; the record stays for history.
 *
 * Every transition is a conditional UPDATE (`WHERE status IN (...)`) plus a lifecycle event in
 * the same transaction, so two racing operations cannot both apply and nothing half-applies.
 */
export const SANDBOX_STATUSES = ['pending', 'starting', 'running', 'stopping', 'stopped', 'snapshotting', 'failed', 'deleting', 'deleted'] as const;
export type SandboxStatus = (typeof SANDBOX_STATUSES)[number];

/** States a worker is in the middle of; the reconciler heals one that outlives its job. */
export const TRANSITIONAL_STATUSES: readonly SandboxStatus[] = ['pending', 'starting', 'stopping', 'snapshotting', 'deleting'];

/** States in which the sandbox counts against the workspace's concurrent-sandbox limit. */
export const ACTIVE_STATUSES: readonly SandboxStatus[] = ['pending', 'starting', 'running', 'stopping', 'snapshotting'];

/** Which states each operation accepts. */
export const ALLOWED_FROM = {
  update: ['pending', 'starting', 'running', 'stopping', 'stopped', 'snapshotting', 'failed'],
  start: ['stopped', 'failed'],
  startFromSnapshot: ['stopped', 'failed'],
  stop: ['running'],
  stopWithSnapshot: ['running'],
  snapshot: ['running', 'stopped'],
  delete: ['pending', 'running', 'stopped', 'failed'],
  extendTtl: ['pending', 'starting', 'running', 'stopping', 'stopped', 'snapshotting', 'failed'],
  exec: ['running'],
  files: ['running'],
  ports: ['running'],
  logs: ['starting', 'running', 'stopping', 'stopped', 'snapshotting', 'failed'],
  /** Worker-side transitions. */
  workerStart: ['pending', 'starting'],
  workerRunning: ['starting'],
  workerStopped: ['stopping', 'snapshotting'],
  workerSnapshotting: ['stopping', 'running', 'stopped', 'snapshotting'],
  workerSnapshotDone: ['snapshotting'],
  workerDeleted: ['deleting', 'pending'],
  workerFailed: ['pending', 'starting', 'running', 'stopping', 'snapshotting'],
} as const satisfies Record<string, readonly SandboxStatus[]>;

export type SandboxOperation = keyof typeof ALLOWED_FROM;

export function allows(operation: SandboxOperation, status: SandboxStatus): boolean {
  return (ALLOWED_FROM[operation] as readonly SandboxStatus[]).includes(status);
}

/** What happens when a sandbox's lifetime ends (`onTtlExpire.action`). */
export const TTL_ACTIONS = ['delete', 'stop', 'snapshot-then-stop'] as const;
export type TtlAction = (typeof TTL_ACTIONS)[number];

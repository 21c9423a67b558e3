import type { SandboxEntity, SandboxEventEntity, SandboxPortEntity, SandboxStatsEntity } from './sandboxes/sandbox.entity';
import type { Sandbox, SandboxLifecycleEvent, SandboxPort, StatsSample } from './sandboxes/sandbox.types';
import type { SnapshotEntity } from './snapshots/snapshot.entity';
import type { Snapshot } from './snapshots/snapshot.types';

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

/** The one place compute rows become API shapes. */
export function toSandbox(row: SandboxEntity): Sandbox {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    name: row.name,
    status: row.status,
    statusReason: row.statusReason,
    image: row.image,
    snapshotId: row.sourceSnapshotId,
    cpuMillis: row.cpuMillis,
    memoryMb: row.memoryMb,
    gpuCount: row.gpuCount,
    gpuType: row.gpuType,
    env: row.env,
    args: row.args,
    secretRefs: row.secretRefs,
    volumeMounts: row.volumeMounts,
    labels: row.labels,
    maxLifetimeSeconds: row.maxLifetimeSeconds,
    onTtlExpire: row.onTtlExpire,
    expiresAt: iso(row.expiresAt),
    createdByUserId: row.createdByUserId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    startedAt: iso(row.startedAt),
    stoppedAt: iso(row.stoppedAt),
    deletedAt: iso(row.deletedAt),
  };
}

export function toSnapshot(row: SnapshotEntity): Snapshot {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    name: row.name,
    description: row.description,
    labels: row.labels,
    status: row.status,
    statusReason: row.statusReason,
    sandboxId: row.sourceSandboxId,
    sourceImage: row.sourceImage,
    sizeBytes: row.sizeBytes === null ? null : Number(row.sizeBytes),
    createdByUserId: row.createdByUserId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    readyAt: iso(row.readyAt),
  };
}

export function toLifecycleEvent(row: SandboxEventEntity): SandboxLifecycleEvent {
  return { fromStatus: row.fromStatus, toStatus: row.toStatus, reason: row.reason, actor: row.actor, at: row.at.toISOString() };
}

export function toStatsSample(row: SandboxStatsEntity): StatsSample {
  return {
    at: row.at.toISOString(),
    cpuCores: row.cpuCores,
    memoryBytes: Number(row.memoryBytes),
    memoryLimitBytes: Number(row.memoryLimitBytes),
    networkRxBytes: Number(row.networkRxBytes),
    networkTxBytes: Number(row.networkTxBytes),
  };
}

/** The edge path of a port; the URL too when the platform knows its public address. */
export function toSandboxPort(row: SandboxPortEntity, publicUrl: string | undefined): SandboxPort {
  const path = `/v1/sandboxes/${row.sandboxId}/ports/${row.port}/proxy/`;
  return {
    sandboxId: row.sandboxId,
    port: row.port,
    protocol: row.protocol,
    public: row.public,
    path,
    url: publicUrl ? `${publicUrl.replace(/\/$/, '')}${path}` : null,
    createdAt: row.createdAt.toISOString(),
  };
}

export function octalMode(mode: number): string {
  return `0${(mode & 0o7777).toString(8).padStart(3, '0')}`;
}

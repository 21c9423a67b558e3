import { GpuAllocationEntity } from './gpu/gpu-allocation.entity';
import { UsageEventEntity } from './metering/usage-event.entity';
import { CreateCompute1768003200000 } from './migrations/1768003200000-create-compute';
import { SandboxEntity, SandboxEventEntity, SandboxPortEntity, SandboxStatsEntity } from './sandboxes/sandbox.entity';
import { SnapshotEntity } from './snapshots/snapshot.entity';

/** Tables of the compute schema, shared by the subgraph and the worker tier. */
export const COMPUTE_ENTITIES = [SandboxEntity, SandboxEventEntity, SandboxPortEntity, SandboxStatsEntity, SnapshotEntity, UsageEventEntity, GpuAllocationEntity];
export const COMPUTE_MIGRATIONS = [CreateCompute1768003200000];

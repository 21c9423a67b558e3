import type { DataSource } from 'typeorm';
import type { ComputeConfig } from '../../../../core/config';
import { openSubgraphDatabase } from '../../../../core/database';
import { ID_PREFIX, newId } from '../../../../core/ids';
import { computeSubgraph } from '../../../../subgraphs/compute';
import { ComputeJobs } from '../../../../subgraphs/compute/compute-jobs';
import type { SandboxEntity } from '../../../../subgraphs/compute/sandboxes/sandbox.entity';
import { SandboxRepository } from '../../../../subgraphs/compute/sandboxes/sandbox.repository';
import type { SandboxStatus } from '../../../../subgraphs/compute/sandboxes/sandbox.states';
import type { SnapshotEntity } from '../../../../subgraphs/compute/snapshots/snapshot.entity';
import { SnapshotRepository, snapshotImageRef } from '../../../../subgraphs/compute/snapshots/snapshot.repository';
import { createTestDatabase, type TestDatabase } from '../../../../test/services';
import { DockerRuntime } from '../../../runtime/docker';
import { createSubgraphDatabases } from '../../../subgraph-databases';
import { createWorkerTestRuntime, eventually, type WorkerTestRuntime } from '../../../test-support';
import type { ProcessorContext } from '../../types';

/** Compute settings of the worker tests: short locks, intervals and stuck threshold. */
export const TEST_COMPUTE: Partial<ComputeConfig> = {
  defaultImage: 'platform/busybox:latest',
  jobLockMs: 2000,
  stuckAfterSeconds: 2,
  reconcileIntervalSeconds: 1,
  statsIntervalSeconds: 1,
  workerConcurrency: 8,
  gpuInventory: { t4: ['0'] },
  gpuDeviceRequests: false,
};

export const BUSYBOX = 'platform/busybox:latest';
export const ACTOR = 'usr_compute_test';

/**
 * What a compute worker test needs besides the worker: its own database and Redis prefix
 * (the prefix is also the deployment id its containers carry), the producer side exactly as the
 * compute subgraph has it, and an engine client to look at containers.
 */
export interface ComputeTestEnv {
  database: TestDatabase;
  env: WorkerTestRuntime;
  prefix: string;
  dataSource: DataSource;
  sandboxes: SandboxRepository;
  snapshots: SnapshotRepository;
  jobs: ComputeJobs;
  engine: DockerRuntime;
  /** A ProcessorContext of its own, to call processors and helpers directly. */
  processorContext(): ProcessorContext;
  /** Removes this test's containers and volumes (label platform.deployment = prefix) and snapshot images, closes everything. */
  cleanup(): Promise<void>;
}

export async function createComputeTestEnv(compute: Partial<ComputeConfig> = {}): Promise<ComputeTestEnv> {
  const database = await createTestDatabase('compute');
  const env = createWorkerTestRuntime({ databaseUrl: database.url });
  const config = env.runtime.config;
  config.compute = { ...config.compute, ...TEST_COMPUTE, ...compute, deploymentId: env.prefix };
  const dataSource = await openSubgraphDatabase({ url: database.url, schema: 'compute', entities: computeSubgraph.entities, migrations: computeSubgraph.migrations });
  const engine = new DockerRuntime({});
  const stopHooks: Array<() => Promise<unknown>> = [];
  let processorContext: ProcessorContext | undefined;
  const snapshotRefs = new Set<string>();
  const snapshots = new SnapshotRepository(dataSource);
  const originalInsert = snapshots.insert.bind(snapshots);
  snapshots.insert = (row: SnapshotEntity) => {
    snapshotRefs.add(row.imageRef);
    return originalInsert(row);
  };
  return {
    database,
    env,
    prefix: env.prefix,
    dataSource,
    sandboxes: new SandboxRepository(dataSource),
    snapshots,
    jobs: new ComputeJobs({ compute: env.queue('compute'), gpu: env.queue('gpu') }),
    engine,
    processorContext() {
      processorContext ??= {
        runtime: env.runtime,
        config,
        logger: env.runtime.logger,
        pubsub: env.runtime.pubsub,
        databases: createSubgraphDatabases(env.runtime),
        onStop: (close) => void stopHooks.push(close),
      };
      return processorContext;
    },
    async cleanup() {
      const containers = await engine.listByLabels({ 'platform.deployment': env.prefix }).catch(() => []);
      await Promise.allSettled(containers.map((c) => engine.remove(c.id)));
      const taken = (await dataSource.query(`SELECT image_ref FROM compute.snapshots`).catch(() => [])) as Array<{ image_ref: string }>;
      for (const ref of [...snapshotRefs, ...taken.map((r) => r.image_ref)]) await engine.removeImage(ref).catch(() => undefined);
      const { Volumes: volumes } = await engine.docker.listVolumes({ filters: { label: [`platform.deployment=${env.prefix}`] } }).catch(() => ({ Volumes: [] }));
      await Promise.allSettled((volumes ?? []).map((v) => engine.docker.getVolume(v.Name).remove()));
      await Promise.allSettled(stopHooks.map((close) => close()));
      await processorContext?.databases.close();
      await env.cleanup();
      await dataSource.destroy();
      await database.drop();
    },
  };
}

/** A sandbox row as the compute subgraph inserts one (pending, opSeq 0, busybox sleeping). */
export function newSandbox(overrides: Partial<SandboxEntity> = {}): SandboxEntity {
  const now = new Date();
  return {
    id: newId(ID_PREFIX.sandbox),
    workspaceId: 'ws_computetest',
    name: 'test sandbox',
    status: 'pending',
    statusReason: 'created',
    image: BUSYBOX,
    sourceSnapshotId: null,
    bootSnapshotId: null,
    cpuMillis: null,
    memoryMb: null,
    gpuCount: 0,
    gpuType: null,
    env: {},
    args: ['sleep', '3600'],
    secretRefs: [],
    volumeMounts: [],
    labels: {},
    maxLifetimeSeconds: null,
    onTtlExpire: null,
    expiresAt: null,
    containerId: null,
    opSeq: 0,
    createdByUserId: ACTOR,
    createdAt: now,
    updatedAt: now,
    statusChangedAt: now,
    startedAt: null,
    stoppedAt: null,
    deletedAt: null,
    ...overrides,
  };
}

/** The compute subgraph's side of each operation: the transition, then the job. */
export function api(t: ComputeTestEnv) {
  const must = async (id: string, request: Parameters<SandboxRepository['transition']>[1]) => {
    const result = await t.sandboxes.transition(id, request);
    if (!result.applied) throw new Error(`transition to ${request.to} refused: the sandbox is ${result.current?.status}`);
    return result.sandbox;
  };
  return {
    async create(overrides: Partial<SandboxEntity> = {}): Promise<SandboxEntity> {
      const sandbox = await t.sandboxes.insert(newSandbox(overrides), 'created', ACTOR);
      await t.jobs.start(sandbox);
      if (sandbox.expiresAt) await t.jobs.ttlExpire(sandbox, sandbox.expiresAt);
      return sandbox;
    },
    async start(id: string, bootSnapshotId?: string) {
      const s = await must(id, { from: ['stopped', 'failed'], to: 'starting', reason: 'start', actor: ACTOR, bumpOp: true, patch: bootSnapshotId ? { bootSnapshotId } : {} });
      await t.jobs.start(s);
      return s;
    },
    async stop(id: string, withSnapshot = false) {
      const s = await t.sandboxes.findById(id);
      const snapshotId = withSnapshot ? await insertSnapshot(t, s!) : undefined;
      const stopped = await must(id, { from: ['running'], to: 'stopping', reason: 'stop', actor: ACTOR, bumpOp: true });
      await t.jobs.stop(stopped, snapshotId);
      return { sandbox: stopped, snapshotId };
    },
    async snapshot(id: string) {
      const s = (await t.sandboxes.findById(id))!;
      const resume = s.status as 'running' | 'stopped';
      const snapshotId = await insertSnapshot(t, s);
      const snapping = await must(id, { from: ['running', 'stopped'], to: 'snapshotting', reason: 'snapshot', actor: ACTOR, bumpOp: true });
      await t.jobs.snapshot(snapping, snapshotId, resume);
      return { snapshotId, resume };
    },
    async delete(id: string) {
      const s = await must(id, { from: ['pending', 'running', 'stopped', 'failed'], to: 'deleting', reason: 'delete', actor: ACTOR, bumpOp: true });
      await t.jobs.delete(s);
      return s;
    },
  };
}

export async function insertSnapshot(t: ComputeTestEnv, sandbox: SandboxEntity): Promise<string> {
  const id = newId(ID_PREFIX.snapshot);
  const now = new Date();
  await t.snapshots.insert({
    id,
    workspaceId: sandbox.workspaceId,
    name: `snapshot of ${sandbox.name}`,
    description: null,
    labels: {},
    status: 'creating',
    statusReason: null,
    sourceSandboxId: sandbox.id,
    sourceImage: sandbox.image,
    imageRef: snapshotImageRef(sandbox.workspaceId, id).ref,
    sizeBytes: null,
    createdByUserId: ACTOR,
    createdAt: now,
    updatedAt: now,
    readyAt: null,
  });
  return id;
}

/** Waits until the sandbox is in `status` (fails early when it lands in `failed` unexpectedly). */
export async function waitForStatus(t: ComputeTestEnv, id: string, status: SandboxStatus, timeoutMs = 15_000): Promise<SandboxEntity> {
  return eventually(
    async () => {
      const s = await t.sandboxes.findById(id);
      if (s && s.status === 'failed' && status !== 'failed') throw new Error(`sandbox ${id} failed: ${s.statusReason}`);
      return s?.status === status ? s : undefined;
    },
    timeoutMs,
    `sandbox ${id} to be ${status}`,
  );
}

/** stdout of a command run in the container. */
export async function sh(t: ComputeTestEnv, containerId: string, script: string): Promise<string> {
  const result = await t.engine.exec(containerId, { argv: ['sh', '-c', script], timeoutMs: 10_000, maxOutputBytes: 1 << 20 });
  if (result.exitCode !== 0) throw new Error(`exit ${result.exitCode}: ${result.stderr.toString()}`);
  return result.stdout.toString();
}

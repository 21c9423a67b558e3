import { randomBytes } from 'node:crypto';
import type { Job } from 'bullmq';
import type { DataSource } from 'typeorm';
import { openSubgraphDatabase } from '../../../core/database';
import type { Principal } from '../../../core/principal';
import { COMPUTE_JOBS } from '../../../core/queues';
import { sandboxJobId } from '../../../subgraphs/compute/compute-jobs';
import { billingSubgraph } from '../../../subgraphs/billing';
import { SecretRepository } from '../../../subgraphs/billing/secrets/secret.repository';
import { SecretService } from '../../../subgraphs/billing/secrets/secret.service';
import { startWorker, type RunningWorker } from '../../index';
import { eventually } from '../../test-support';
import { PROCESSORS, QUEUE_WORKER_OPTIONS, SCHEDULES } from '../index';
import { computeContext } from './context';
import { reconcileProcessor } from './reconcile';
import { previousSamples, recordSample } from './stats';
import { BUSYBOX, api, createComputeTestEnv, newSandbox, sh, waitForStatus, type ComputeTestEnv } from './testing/harness';

describe('compute worker', () => {
  let t: ComputeTestEnv;
  let worker: RunningWorker;
  let ops: ReturnType<typeof api>;

  beforeAll(async () => {
    t = await createComputeTestEnv();
    ops = api(t);
    worker = await startWorker(t.env.runtime, { shutdownTimeoutMs: 5000 });
  });

  afterAll(async () => {
    await worker?.stop();
    await t?.cleanup();
  });

  it('registers the compute and gpu queues with their schedules and worker options', () => {
    expect(worker.queues).toEqual(['compute', 'gpu', 'workflows', 'maintenance']);
    expect(worker.schedulers).toEqual(expect.arrayContaining(['compute-reconcile', 'compute-sample-stats', 'compute-purge-stats']));
    expect(Object.keys(PROCESSORS.gpu!)).toEqual([COMPUTE_JOBS.start]);
    const reconcile = SCHEDULES.find((s) => s.id === 'compute-reconcile')!;
    expect(reconcile.repeat(t.env.runtime.config)).toEqual({ every: 1000 });
    expect(QUEUE_WORKER_OPTIONS.compute!(t.env.runtime.config)).toEqual({ concurrency: 8, lockDuration: 2000, stalledInterval: 1000 });
  });

  it('creates a running container with the platform labels and the limits', async () => {
    const created = await ops.create({ cpuMillis: 500, memoryMb: 64, env: { GREETING: 'hello' } });
    const running = await waitForStatus(t, created.id, 'running');

    expect(running.containerId).toBeTruthy();
    expect(running.startedAt).toBeInstanceOf(Date);
    const info = await t.engine.docker.getContainer(running.containerId!).inspect();
    expect(info.Name).toBe(`/plat-${created.id}-0`);
    expect(info.Config.Labels).toEqual(
      expect.objectContaining({ 'platform.id': created.id, 'platform.workspace': created.workspaceId, 'platform.kind': 'sandbox', 'platform.deployment': t.prefix, 'platform.op': '0' }),
    );
    expect(info.HostConfig.NanoCpus).toBe(500_000_000);
    expect(info.HostConfig.Memory).toBe(64 * 1024 * 1024);
    expect(await sh(t, running.containerId!, 'echo $GREETING')).toBe('hello\n');
    const [events] = await t.sandboxes.events(created.id, { page: 1, offset: 0, limit: 10 });
    expect(events.map((e) => `${e.fromStatus}→${e.toStatus}`)).toEqual(['null→pending', 'pending→starting', 'starting→running']);
  });

  it('mounts workspace volumes, shared by the sandboxes that name them', async () => {
    const writer = await ops.create({ volumeMounts: [{ volume: 'shared', mountPath: '/mnt/shared', readOnly: false }] });
    const reader = await ops.create({ volumeMounts: [{ volume: 'shared', mountPath: '/data', readOnly: true }] });
    const [w, r] = await Promise.all([waitForStatus(t, writer.id, 'running'), waitForStatus(t, reader.id, 'running')]);
    await sh(t, w.containerId!, 'echo shared > /mnt/shared/note.txt');
    expect(await sh(t, r.containerId!, 'cat /data/note.txt')).toBe('shared\n');
    await expect(sh(t, r.containerId!, 'echo nope > /data/other.txt')).rejects.toThrow(/read-only/i);
    const volume = await t.engine.docker.getVolume(`plat-vol-${writer.workspaceId}-shared`).inspect();
    expect(volume.Labels).toEqual({ 'platform.workspace': writer.workspaceId, 'platform.deployment': t.prefix, 'platform.kind': 'volume' });
  });

  it('keeps the files of a stopped sandbox for its next start', async () => {
    const created = await ops.create();
    const first = await waitForStatus(t, created.id, 'running');
    await sh(t, first.containerId!, 'echo kept > /tmp/kept.txt');

    await ops.stop(created.id);
    const stopped = await waitForStatus(t, created.id, 'stopped');
    expect(stopped.containerId).toBe(first.containerId);
    expect(stopped.stoppedAt).toBeInstanceOf(Date);
    expect((await t.engine.inspect(first.containerId!))?.running).toBe(false);

    await ops.start(created.id);
    const again = await waitForStatus(t, created.id, 'running');
    expect(again.containerId).toBe(first.containerId);
    expect(await sh(t, again.containerId!, 'cat /tmp/kept.txt')).toBe('kept\n');
  });

  it('stops with a snapshot and boots a sandbox from it with a binary file intact', async () => {
    const created = await ops.create();
    const first = await waitForStatus(t, created.id, 'running');
    const bytes = randomBytes(64 * 1024);
    await t.engine.writeFiles(first.containerId!, [{ path: '/data/blob.bin', content: bytes, mode: 0o600 }]);

    const { snapshotId } = await ops.stop(created.id, true);
    const stopped = await waitForStatus(t, created.id, 'stopped');
    expect(stopped.statusReason).toBe(`stopped; snapshot ${snapshotId} ready`);
    const snapshot = (await t.snapshots.findById(snapshotId!))!;
    expect(snapshot.status).toBe('ready');
    expect(Number(snapshot.sizeBytes)).toBeGreaterThan(0);
    const [events] = await t.sandboxes.events(created.id, { page: 1, offset: 0, limit: 20 });
    expect(events.slice(-3).map((e) => e.toStatus)).toEqual(['stopping', 'snapshotting', 'stopped']);

    await ops.start(created.id, snapshotId);
    const booted = await waitForStatus(t, created.id, 'running');
    expect(booted.containerId).not.toBe(first.containerId);
    expect(booted.image).toBe(snapshot.imageRef);
    expect(booted.bootSnapshotId).toBeNull();
    expect(booted.statusReason).toBe(`container started from snapshot ${snapshotId}`);
    const back = await t.engine.readFile(booted.containerId!, '/data/blob.bin', 1 << 20);
    expect(back.content.equals(bytes)).toBe(true);
    // The container the snapshot replaced is gone.
    const containers = await t.engine.listByLabels({ 'platform.id': created.id });
    expect(containers.map((c) => c.id)).toEqual([booted.containerId]);
  });

  it('snapshots a running sandbox and returns it to running', async () => {
    const created = await ops.create();
    const running = await waitForStatus(t, created.id, 'running');
    await sh(t, running.containerId!, 'echo snap > /tmp/snap.txt');

    const { snapshotId } = await ops.snapshot(created.id);
    await eventually(async () => (await t.snapshots.findById(snapshotId))?.status === 'ready', 15_000, 'the snapshot to be ready');
    const back = await waitForStatus(t, created.id, 'running');
    expect(back.statusReason).toBe(`snapshot ${snapshotId} ready`);
    expect(back.containerId).toBe(running.containerId);
    expect((await t.engine.inspect(running.containerId!))?.running).toBe(true);
  });

  it('deletes a sandbox and its container, idempotently', async () => {
    const created = await ops.create();
    await waitForStatus(t, created.id, 'running');
    await t.sandboxes.upsertPort({ sandboxId: created.id, port: 8080, workspaceId: created.workspaceId, protocol: 'http', public: false, createdAt: new Date() });

    const deleting = await ops.delete(created.id);
    const deleted = await waitForStatus(t, created.id, 'deleted');
    expect(deleted.deletedAt).toBeInstanceOf(Date);
    expect(deleted.containerId).toBeNull();
    expect(await t.engine.listByLabels({ 'platform.id': created.id })).toEqual([]);
    expect(await t.sandboxes.ports(created.id)).toEqual([]);

    // The same job again does nothing.
    const again = await t.env.queue('compute').add(COMPUTE_JOBS.delete, { sandboxId: created.id, opSeq: deleting.opSeq }, { jobId: `${created.id}-again` });
    await eventually(() => again.isCompleted(), 10_000, 'the second delete');
    expect((await t.env.queue('compute').getJob(again.id!))?.returnvalue).toEqual({ outcome: 'stale', status: 'deleted' });
  });

  it('decrypts secretRefs into the environment', async () => {
    const billing: DataSource = await openSubgraphDatabase({ url: t.database.url, schema: 'billing', entities: billingSubgraph.entities, migrations: billingSubgraph.migrations });
    try {
      const secrets = new SecretService({ repository: new SecretRepository(billing), encryptionKey: t.env.runtime.config.secretsEncryptionKey, logger: t.env.runtime.logger });
      const workspaceId = 'ws_secrets';
      const principal: Principal = { userId: 'usr_owner', username: 'owner', isAdmin: false, via: 'jwt', defaultWorkspaceId: workspaceId, memberships: { [workspaceId]: 'owner' } };
      await secrets.create({ principal, requestId: 'test', clientIp: '127.0.0.1' }, { workspaceId, key: 'DB_PASSWORD', value: 's3cr3t value' });

      const created = await ops.create({ workspaceId, env: { PLAIN: 'yes' }, secretRefs: [{ secretKey: 'DB_PASSWORD', envVar: 'DATABASE_PASSWORD' }] });
      const running = await waitForStatus(t, created.id, 'running');
      const printed = await sh(t, running.containerId!, 'echo "$DATABASE_PASSWORD"; echo "$PLAIN"');
      expect(printed).toBe('s3cr3t value\nyes\n');
      // Stored nowhere: not in the row, not in the lifecycle log.
      const raw = JSON.stringify(await t.dataSource.query(`SELECT s.*, e.reason FROM compute.sandboxes s JOIN compute.sandbox_events e ON e.sandbox_id = s.id WHERE s.id = $1`, [created.id]));
      expect(raw).not.toContain('s3cr3t');

      const missing = await ops.create({ workspaceId, secretRefs: [{ secretKey: 'NOPE', envVar: 'X' }] });
      const failed = await waitForStatus(t, missing.id, 'failed');
      expect(failed.statusReason).toMatch(/NOPE not found/);
    } finally {
      await billing.destroy();
    }
  });

  it('fails a sandbox whose image does not exist, with the reason', async () => {
    const created = await ops.create({ image: 'platform/does-not-exist:1' });
    const failed = await waitForStatus(t, created.id, 'failed');
    expect(failed.statusReason).toBe('image platform/does-not-exist:1 not found');
    expect(failed.containerId).toBeNull();
    expect(await t.engine.listByLabels({ 'platform.id': created.id })).toEqual([]);

    // A command that cannot run: the container starts (tini), exits 127, and the sampler fails the sandbox.
    const badCommand = await ops.create({ args: ['/no/such/binary'] });
    const exited = await waitForStatus(t, badCommand.id, 'failed');
    expect(exited.statusReason).toMatch(/^container exited with code 127: .*no such file or directory/i);
  });

  it('ignores a job whose opSeq is no longer the sandbox', async () => {
    const created = await ops.create();
    await waitForStatus(t, created.id, 'running');
    const stale = await t.env.queue('compute').add(COMPUTE_JOBS.stop, { sandboxId: created.id, opSeq: 7 }, { jobId: sandboxJobId(created.id, 7) });
    await eventually(() => stale.isCompleted(), 10_000, 'the stale job');
    expect((await t.env.queue('compute').getJob(stale.id!))?.returnvalue).toEqual({ outcome: 'stale', status: 'running' });
    expect((await t.sandboxes.findById(created.id))?.status).toBe('running');
  });

  it('keeps a GPU sandbox pending until a device is free', async () => {
    const first = await ops.create({ gpuCount: 1, gpuType: 't4' });
    const running = await waitForStatus(t, first.id, 'running');
    expect(await sh(t, running.containerId!, 'echo $NVIDIA_VISIBLE_DEVICES')).toBe('0\n');

    const second = await ops.create({ gpuCount: 1, gpuType: 't4' });
    await eventually(async () => (await t.env.queue('gpu').getJob(sandboxJobId(second.id, 0)))?.isDelayed(), 10_000, 'the second start to wait');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await t.sandboxes.findById(second.id))?.status).toBe('pending');

    await ops.delete(first.id);
    const now = await waitForStatus(t, second.id, 'running', 15_000);
    expect(await sh(t, now.containerId!, 'echo $NVIDIA_VISIBLE_DEVICES')).toBe('0\n');
    expect(await t.dataSource.query(`SELECT device_id, sandbox_id FROM compute.gpu_allocations`)).toEqual([{ device_id: '0', sandbox_id: second.id }]);
    await ops.delete(second.id);
    await waitForStatus(t, second.id, 'deleted');
    expect(await t.dataSource.query(`SELECT device_id FROM compute.gpu_allocations`)).toEqual([]);
  });

  it('deletes a sandbox when its lifetime ends', async () => {
    const created = await ops.create({ maxLifetimeSeconds: 2, expiresAt: new Date(Date.now() + 2000), onTtlExpire: { action: 'delete' } });
    await waitForStatus(t, created.id, 'running');
    const deleted = await waitForStatus(t, created.id, 'deleted', 15_000);
    const [events] = await t.sandboxes.events(created.id, { page: 1, offset: 0, limit: 20 });
    expect(events.find((e) => e.toStatus === 'deleting')?.reason).toBe('lifetime ended');
    expect(deleted.containerId).toBeNull();
  });

  it('snapshots then stops a sandbox when its lifetime ends', async () => {
    const created = await ops.create({ name: 'short-lived', maxLifetimeSeconds: 2, expiresAt: new Date(Date.now() + 2000), onTtlExpire: { action: 'snapshot-then-stop' } });
    await waitForStatus(t, created.id, 'running');
    const stopped = await waitForStatus(t, created.id, 'stopped', 20_000);
    const [snapshots] = await t.snapshots.listByWorkspace(created.workspaceId, { page: 1, offset: 0, limit: 100 }, { sandboxId: created.id });
    expect(snapshots).toEqual([expect.objectContaining({ name: 'short-lived at ttl expiry', status: 'ready', sourceImage: BUSYBOX })]);
    expect(stopped.statusReason).toBe(`stopped; snapshot ${snapshots[0].id} ready`);
  });

  it('samples running sandboxes into stats rows and usage events, once per sample', async () => {
    const created = await ops.create({ gpuCount: 0 });
    await waitForStatus(t, created.id, 'running');
    await eventually(
      async () => Number((await t.dataSource.query(`SELECT count(*) AS n FROM compute.sandbox_stats WHERE sandbox_id = $1`, [created.id]))[0].n) >= 2,
      10_000,
      'two samples',
    );
    const kinds = await t.dataSource.query(`SELECT DISTINCT kind FROM compute.usage_events WHERE sandbox_id = $1 ORDER BY kind`, [created.id]);
    expect(kinds.map((k: { kind: string }) => k.kind)).toContain('memory_gb_seconds');
    const keys: Array<{ idempotency_key: string }> = await t.dataSource.query(`SELECT idempotency_key FROM compute.usage_events WHERE sandbox_id = $1`, [created.id]);
    for (const { idempotency_key } of keys) expect(idempotency_key).toMatch(new RegExp(`^${created.id}:(cpu_seconds|memory_gb_seconds):\\d+$`));

    // The same sample recorded twice meters once.
    const c = await computeContext(t.processorContext());
    const sandbox = (await t.sandboxes.findById(created.id))!;
    // A sample newer than the sampler's last one (the engine may answer a cached one within the same second).
    const sample = { ...(await c.engine.stats(sandbox.containerId!)), at: new Date() };
    const previous = (await previousSamples(c, [sandbox.id])).get(sandbox.id) ?? null;
    // This sample's rows only: the worker's own sampler keeps metering the sandbox meanwhile.
    const count = async () => Number((await t.dataSource.query(`SELECT count(*) AS n FROM compute.usage_events WHERE sandbox_id = $1 AND period_end = $2`, [created.id, sample.at]))[0].n);
    const first = await recordSample(c, sandbox, sample, previous);
    expect(first).toBeGreaterThan(0);
    expect(await count()).toBe(first);
    expect(await recordSample(c, sandbox, sample, previous)).toBe(0);
    expect(await count()).toBe(first);
  });

  it('reconciles: removes orphans of this deployment, leaves other deployments alone, fails a sandbox whose container vanished', async () => {
    const orphan = await t.engine.createAndStart({
      name: `plat-orphan-${t.prefix}`,
      image: BUSYBOX,
      env: {},
      args: ['sleep', '3600'],
      labels: { 'platform.id': 'sbx_nosuchsandbox', 'platform.kind': 'sandbox', 'platform.deployment': t.prefix, 'platform.workspace': 'ws_x' },
    });
    const otherDeployment = `${t.prefix}-other`;
    const foreign = await t.engine.createAndStart({
      name: `plat-foreign-${t.prefix}`,
      image: BUSYBOX,
      env: {},
      args: ['sleep', '3600'],
      labels: { 'platform.id': 'sbx_nosuchsandbox2', 'platform.kind': 'sandbox', 'platform.deployment': otherDeployment, 'platform.workspace': 'ws_x' },
    });
    try {
      const created = await ops.create();
      const running = await waitForStatus(t, created.id, 'running');
      await t.engine.remove(running.containerId!);

      await eventually(async () => (await t.engine.inspect(orphan.containerId)) === null, 10_000, 'the orphan to be removed');
      const failed = await waitForStatus(t, created.id, 'failed', 10_000);
      // Removed while running: the sampler may see it exit (137) before the reconciler sees it gone.
      expect(failed.statusReason).toMatch(/^container (disappeared|exited with code 137)/);
      const report = await reconcileProcessor({ data: {} } as Job, t.processorContext());
      expect(report.containersRemoved).toBe(0);
      expect((await t.engine.inspect(foreign.containerId))?.running).toBe(true);
    } finally {
      await t.engine.remove(foreign.containerId);
    }
  });

  it('reconciles: queues the job of a sandbox stuck with none again', async () => {
    const longAgo = new Date(Date.now() - 60_000);
    const stuckStart = await t.sandboxes.insert(newSandbox({ status: 'starting', statusChangedAt: longAgo }), 'created', 'test');
    const stuckDelete = await t.sandboxes.insert(newSandbox({ status: 'deleting', statusChangedAt: longAgo }), 'created', 'test');
    await waitForStatus(t, stuckStart.id, 'running', 15_000);
    await waitForStatus(t, stuckDelete.id, 'deleted', 15_000);
    const [events] = await t.sandboxes.events(stuckStart.id, { page: 1, offset: 0, limit: 10 });
    expect(events.map((e) => e.reason)).toContain('start queued again by the reconciler');
  });
});

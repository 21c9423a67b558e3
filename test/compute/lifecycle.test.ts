import { startTestPlatform, type TestPlatform } from '../harness';
import { createUserAndLogin, eventually, loginAdmin, rest } from '../helpers';
import { COMPUTE_TEST_ENV, TEST_IMAGE, createRunning, deploymentContainers, execIn, json, removeDeploymentContainers, waitForStatus, type Caller } from './support';

jest.setTimeout(60_000);

let platform: TestPlatform;
let alice: Caller;
let mallory: Caller;

beforeAll(async () => {
  platform = await startTestPlatform({ env: COMPUTE_TEST_ENV });
  const admin = await loginAdmin(platform);
  const a = await createUserAndLogin(platform, admin.auth, 'alice-compute');
  const m = await createUserAndLogin(platform, admin.auth, 'mallory-compute');
  alice = { auth: a.auth, workspaceId: a.defaultWorkspaceId };
  mallory = { auth: m.auth, workspaceId: m.defaultWorkspaceId };
});

afterAll(async () => {
  await removeDeploymentContainers(platform);
  await platform?.stop();
});

const create = (who: Caller, body: Record<string, unknown>) => rest(platform, 'POST', '/sandboxes', { name: 'x', workspaceId: who.workspaceId, ...body }, who.auth);

describe('POST /sandboxes', () => {
  it('accepts a sandbox as pending and a worker runs it, with limits, env, args and platform labels', async () => {
    const response = await create(alice, { image: TEST_IMAGE, args: ['sleep', '3600'], cpuMillis: 500, memoryMb: 64, env: { GREETING: 'hi there' }, labels: { team: 'a' } });
    expect(response.status).toBe(201);
    const created = await json(response);
    expect(created).toMatchObject({ id: expect.stringMatching(/^sbx_/), status: 'pending', workspaceId: alice.workspaceId, image: TEST_IMAGE, cpuMillis: 500, memoryMb: 64, env: { GREETING: 'hi there' }, labels: { team: 'a' }, gpuCount: 0 });
    const running = await waitForStatus(platform, alice, created.id, 'running');
    expect(running.startedAt).toEqual(expect.any(String));

    const env = await execIn(platform, alice, created.id, { command: 'echo "$GREETING"' });
    expect(env.body).toMatchObject({ exitCode: 0, stdout: 'hi there\n' });
    const containers = await deploymentContainers(platform, `platform.id=${created.id}`);
    expect(containers).toHaveLength(1);

    const lifecycle = await json(await rest(platform, 'GET', `/sandboxes/${created.id}/logs/lifecycle`, undefined, alice.auth));
    expect(lifecycle.data.map((e: any) => [e.fromStatus, e.toStatus])).toEqual([
      [null, 'pending'],
      ['pending', 'starting'],
      ['starting', 'running'],
    ]);
    for (const event of lifecycle.data) {
      expect(event.reason).toEqual(expect.any(String));
      expect(new Date(event.at).toISOString()).toBe(event.at);
    }
  });

  it.each([
    ['no name', { name: undefined, image: TEST_IMAGE }, 'name'],
    ['neither image nor snapshotId', {}, 'image'],
    ['both image and snapshotId', { image: TEST_IMAGE, snapshotId: 'snp_x' }, 'snapshotId'],
    ['an image the engine lacks', { image: 'platform/does-not-exist:1' }, 'image'],
    ['a malformed image', { image: 'Bad Image!' }, 'image'],
    ['cpuMillis too small', { image: TEST_IMAGE, cpuMillis: 1 }, 'cpuMillis'],
    ['memoryMb not an integer', { image: TEST_IMAGE, memoryMb: 1.5 }, 'memoryMb'],
    ['an env name with a space', { image: TEST_IMAGE, env: { 'BAD NAME': 'x' } }, 'env.BAD NAME'],
    ['an env value that is a number', { image: TEST_IMAGE, env: { N: 1 } }, 'env.N'],
    ['more GPUs than the inventory has', { image: TEST_IMAGE, gpuCount: 2, gpuType: 't4' }, 'gpuCount'],
    ['a GPU type not in the inventory', { image: TEST_IMAGE, gpuCount: 1, gpuType: 'h100' }, 'gpuType'],
    ['onTtlExpire without a lifetime', { image: TEST_IMAGE, onTtlExpire: { action: 'delete' } }, 'onTtlExpire'],
    ['an unknown onTtlExpire action', { image: TEST_IMAGE, maxLifetimeSeconds: 60, onTtlExpire: { action: 'explode' } }, 'onTtlExpire.action'],
    ['a relative mount path', { image: TEST_IMAGE, volumeMounts: [{ volume: 'data', mountPath: 'data' }] }, 'volumeMounts.0.mountPath'],
    ['a bad volume name', { image: TEST_IMAGE, volumeMounts: [{ volume: '../etc', mountPath: '/data' }] }, 'volumeMounts.0.volume'],
    ['a bad secret env name', { image: TEST_IMAGE, secretRefs: [{ secretKey: 'K', envVar: '1X' }] }, 'secretRefs.0.envVar'],
  ])('refuses %s with 400 naming the field, and stores nothing', async (_what, body, field) => {
    const before = await json(await rest(platform, 'GET', '/sandboxes?limit=100&workspaceId=' + alice.workspaceId, undefined, alice.auth));
    const response = await create(alice, body);
    const error = await json(response);
    expect(response.status).toBe(400);
    expect(error.error.code).toBe('VALIDATION_FAILED');
    expect(error.error.details?.field ?? error.error.details?.fields?.[0]).toBe(field);
    const after = await json(await rest(platform, 'GET', '/sandboxes?limit=100&workspaceId=' + alice.workspaceId, undefined, alice.auth));
    expect(after.total).toBe(before.total);
  });

  it('refuses a body that is not JSON, and a workspace the caller is not in (404)', async () => {
    const bad = await rest(platform, 'POST', '/sandboxes', '{"name": ', alice.auth);
    expect(bad.status).toBe(400);
    const foreign = await rest(platform, 'POST', '/sandboxes', { name: 'x', workspaceId: alice.workspaceId, image: TEST_IMAGE }, mallory.auth);
    expect(foreign.status).toBe(404);
    expect((await json(foreign)).error.code).toBe('NOT_FOUND');
    const anonymous = await rest(platform, 'POST', '/sandboxes', { name: 'x', workspaceId: alice.workspaceId, image: TEST_IMAGE });
    expect(anonymous.status).toBe(401);
  });

  it('records a failed start with the reason when the command cannot run', async () => {
    const created = await json(await create(alice, { image: TEST_IMAGE, args: ['/no/such/binary'] }));
    const failed = await waitForStatus(platform, alice, created.id, 'failed');
    expect(failed.statusReason).toMatch(/exited with code 127: .*(no such file|not found)/i);
    // The exited container stays, so its output can still be read; deleting removes it.
    const logs = await json(await rest(platform, 'GET', `/sandboxes/${created.id}/logs`, undefined, alice.auth));
    expect(logs.lines.map((l: any) => l.line).join('\n')).toMatch(/no such file|not found/i);
    await rest(platform, 'DELETE', `/sandboxes/${created.id}`, undefined, alice.auth);
    await waitForStatus(platform, alice, created.id, 'deleted');
    expect(await deploymentContainers(platform, `platform.id=${created.id}`)).toEqual([]);
  });
});

describe('the state machine', () => {
  it('stops and starts a sandbox keeping its files, and answers 409 INVALID_STATE naming the state otherwise', async () => {
    const sandbox = await createRunning(platform, alice);
    expect((await execIn(platform, alice, sandbox.id, { command: 'echo kept > /root/note' })).body.exitCode).toBe(0);

    const again = await rest(platform, 'POST', `/sandboxes/${sandbox.id}/start`, undefined, alice.auth);
    expect(again.status).toBe(409);
    expect((await json(again)).error).toMatchObject({ code: 'INVALID_STATE', message: expect.stringContaining('running') });

    const stop = await rest(platform, 'POST', `/sandboxes/${sandbox.id}/stop`, undefined, alice.auth);
    expect(stop.status).toBe(202);
    expect((await json(stop)).status).toBe('stopping');
    await waitForStatus(platform, alice, sandbox.id, 'stopped');

    const exec = await execIn(platform, alice, sandbox.id, { command: 'true' });
    expect(exec.status).toBe(409);
    expect(exec.body.error.code).toBe('INVALID_STATE');
    expect(exec.body.error.message).toContain('stopped');
    expect((await rest(platform, 'POST', `/sandboxes/${sandbox.id}/stop`, undefined, alice.auth)).status).toBe(409);

    expect((await rest(platform, 'POST', `/sandboxes/${sandbox.id}/start`, undefined, alice.auth)).status).toBe(202);
    await waitForStatus(platform, alice, sandbox.id, 'running');
    expect((await execIn(platform, alice, sandbox.id, { command: 'cat /root/note' })).body.stdout).toBe('kept\n');
    const lifecycle = await json(await rest(platform, 'GET', `/sandboxes/${sandbox.id}/logs/lifecycle`, undefined, alice.auth));
    expect(lifecycle.data.map((e: any) => e.toStatus)).toEqual(['pending', 'starting', 'running', 'stopping', 'stopped', 'starting', 'running']);
  });

  it('applies only one of two racing stops', async () => {
    const sandbox = await createRunning(platform, alice);
    const answers = await Promise.all([1, 2, 3].map(() => rest(platform, 'POST', `/sandboxes/${sandbox.id}/stop`, undefined, alice.auth)));
    expect(answers.map((r) => r.status).sort()).toEqual([202, 409, 409]);
    await waitForStatus(platform, alice, sandbox.id, 'stopped');
  });

  it('deletes a sandbox: the container goes, the record stays as deleted, later operations are 409', async () => {
    const sandbox = await createRunning(platform, alice);
    const deleted = await rest(platform, 'DELETE', `/sandboxes/${sandbox.id}`, undefined, alice.auth);
    expect(deleted.status).toBe(202);
    await waitForStatus(platform, alice, sandbox.id, 'deleted');
    expect(await deploymentContainers(platform, `platform.id=${sandbox.id}`)).toEqual([]);
    expect((await rest(platform, 'POST', `/sandboxes/${sandbox.id}/start`, undefined, alice.auth)).status).toBe(409);
    expect((await rest(platform, 'DELETE', `/sandboxes/${sandbox.id}`, undefined, alice.auth)).status).toBe(409);
    const list = await json(await rest(platform, 'GET', `/sandboxes?workspaceId=${alice.workspaceId}&limit=100`, undefined, alice.auth));
    expect(list.data.map((s: any) => s.id)).not.toContain(sandbox.id);
    const deletedList = await json(await rest(platform, 'GET', `/sandboxes?workspaceId=${alice.workspaceId}&status=deleted&limit=100`, undefined, alice.auth));
    expect(deletedList.data.map((s: any) => s.id)).toContain(sandbox.id);
  });

  it('updates name and labels, and refuses an empty update', async () => {
    const created = await json(await create(alice, { image: TEST_IMAGE, args: ['sleep', '3600'] }));
    const updated = await json(await rest(platform, 'PUT', `/sandboxes/${created.id}`, { name: 'renamed', labels: { env: 'dev' } }, alice.auth));
    expect(updated).toMatchObject({ name: 'renamed', labels: { env: 'dev' } });
    expect((await rest(platform, 'PUT', `/sandboxes/${created.id}`, {}, alice.auth)).status).toBe(400);
    expect((await rest(platform, 'PUT', `/sandboxes/${created.id}`, { labels: { n: 1 } }, alice.auth)).status).toBe(400);
    expect((await json(await rest(platform, 'GET', `/sandboxes/${created.id}`, undefined, alice.auth))).name).toBe('renamed');
  });
});

describe('lifetime', () => {
  it('deletes a sandbox when its lifetime ends, and extend-ttl moves the deadline', async () => {
    const short = await json(await create(alice, { image: TEST_IMAGE, args: ['sleep', '3600'], maxLifetimeSeconds: 2 }));
    expect(short.onTtlExpire).toEqual({ action: 'delete' });
    const extended = await json(await rest(platform, 'POST', `/sandboxes/${short.id}/extend-ttl`, { seconds: 3 }, alice.auth));
    expect(new Date(extended.expiresAt).getTime()).toBeGreaterThanOrEqual(new Date(short.expiresAt).getTime() + 3000);
    await waitForStatus(platform, alice, short.id, 'running');
    // Past the first deadline it still runs: the old TTL job found itself stale.
    await new Promise((r) => setTimeout(r, Math.max(0, new Date(short.expiresAt).getTime() + 800 - Date.now())));
    expect((await json(await rest(platform, 'GET', `/sandboxes/${short.id}`, undefined, alice.auth))).status).toBe('running');
    await waitForStatus(platform, alice, short.id, 'deleted', 20_000);
    const lifecycle = await json(await rest(platform, 'GET', `/sandboxes/${short.id}/logs/lifecycle`, undefined, alice.auth));
    expect(lifecycle.data.map((e: any) => e.reason)).toContain('lifetime ended');
  });

  it('stops instead when onTtlExpire says stop; extend-ttl refuses a sandbox without a lifetime and a bad amount', async () => {
    const created = await json(await create(alice, { image: TEST_IMAGE, args: ['sleep', '3600'], maxLifetimeSeconds: 2, onTtlExpire: { action: 'stop' } }));
    await waitForStatus(platform, alice, created.id, 'stopped', 20_000);
    const plain = await createRunning(platform, alice);
    const noTtl = await rest(platform, 'POST', `/sandboxes/${plain.id}/extend-ttl`, { seconds: 60 }, alice.auth);
    expect(noTtl.status).toBe(409);
    const bad = await rest(platform, 'POST', `/sandboxes/${created.id}/extend-ttl`, { seconds: -5 }, alice.auth);
    expect(bad.status).toBe(400);
    const huge = await rest(platform, 'POST', `/sandboxes/${created.id}/extend-ttl`, { seconds: 10 ** 9 }, alice.auth);
    expect(huge.status).toBe(400);
  });
});

describe('GPUs', () => {
  it('gives whole GPUs from the inventory; a second request waits pending until one is free', async () => {
    const first = await createRunning(platform, alice, { gpuCount: 1, gpuType: 't4' });
    expect((await execIn(platform, alice, first.id, { command: 'echo $NVIDIA_VISIBLE_DEVICES' })).body.stdout).toBe('gpu-0\n');
    const second = await json(await create(alice, { image: TEST_IMAGE, args: ['sleep', '3600'], gpuCount: 1 }));
    await new Promise((r) => setTimeout(r, 2500));
    expect((await json(await rest(platform, 'GET', `/sandboxes/${second.id}`, undefined, alice.auth))).status).toBe('pending');
    await rest(platform, 'DELETE', `/sandboxes/${first.id}`, undefined, alice.auth);
    await waitForStatus(platform, alice, second.id, 'running', 20_000);
    await rest(platform, 'DELETE', `/sandboxes/${second.id}`, undefined, alice.auth);
    await waitForStatus(platform, alice, second.id, 'deleted');
  });
});

describe('another workspace', () => {
  it('sees none of the sandbox and cannot touch it (404 everywhere)', async () => {
    const sandbox = await createRunning(platform, alice);
    const paths: Array<[string, string, unknown?]> = [
      ['GET', `/sandboxes/${sandbox.id}`],
      ['PUT', `/sandboxes/${sandbox.id}`, { name: 'pwned' }],
      ['DELETE', `/sandboxes/${sandbox.id}`],
      ['POST', `/sandboxes/${sandbox.id}/stop`],
      ['POST', `/sandboxes/${sandbox.id}/exec`, { command: 'id' }],
      ['GET', `/sandboxes/${sandbox.id}/files?path=/`],
      ['GET', `/sandboxes/${sandbox.id}/logs`],
      ['GET', `/sandboxes/${sandbox.id}/logs/lifecycle`],
      ['GET', `/sandboxes/${sandbox.id}/stats/history`],
      ['GET', `/sandboxes/${sandbox.id}/ports`],
      ['POST', `/sandboxes/${sandbox.id}/ports`, { port: 80 }],
      ['POST', `/sandboxes/${sandbox.id}/snapshots`, {}],
      ['POST', `/sandboxes/${sandbox.id}/extend-ttl`, { seconds: 10 }],
    ];
    for (const [method, path, body] of paths) {
      const response = await rest(platform, method, path, body, mallory.auth);
      expect({ path, method, status: response.status }).toEqual({ path, method, status: 404 });
    }
    const list = await json(await rest(platform, 'GET', '/sandboxes', undefined, mallory.auth));
    expect(list.data.map((s: any) => s.id)).not.toContain(sandbox.id);
    expect((await json(await rest(platform, 'GET', `/sandboxes/${sandbox.id}`, undefined, alice.auth))).name).toBe('test');
  });
});

describe('usage', () => {
  it('samples running sandboxes into stats history and metering events with idempotency keys', async () => {
    const sandbox = await createRunning(platform, alice, { args: ['sh', '-c', 'while true; do :; done'] });
    const history = await eventually(async () => {
      const h = await json(await rest(platform, 'GET', `/sandboxes/${sandbox.id}/stats/history`, undefined, alice.auth));
      return h.samples.length >= 3 ? h : undefined;
    }, 20_000, 'three stats samples');
    expect(history).toMatchObject({ sandboxId: sandbox.id, intervalSeconds: 1, retentionHours: 24 });
    expect(Math.max(...history.samples.map((s: any) => s.cpuCores))).toBeGreaterThan(0.2);
    expect(history.samples[0].memoryBytes).toBeGreaterThan(0);
    const { Client } = await import('pg');
    const client = new Client({ connectionString: platform.databaseUrl });
    await client.connect();
    try {
      const rows = await client.query(`SELECT kind, sum(quantity) AS q, count(*) AS n, count(DISTINCT idempotency_key) AS keys FROM compute.usage_events WHERE sandbox_id = $1 GROUP BY kind ORDER BY kind`, [sandbox.id]);
      const byKind = Object.fromEntries(rows.rows.map((r) => [r.kind, r]));
      expect(Number(byKind.cpu_seconds.q)).toBeGreaterThan(0.2);
      expect(Number(byKind.memory_gb_seconds.q)).toBeGreaterThan(0);
      expect(byKind.cpu_seconds.n).toBe(byKind.cpu_seconds.keys);
    } finally {
      await client.end();
    }
    await rest(platform, 'DELETE', `/sandboxes/${sandbox.id}`, undefined, alice.auth);
  });
});

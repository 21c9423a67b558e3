import { randomBytes } from 'node:crypto';
import { startTestPlatform, type TestPlatform } from '../harness';
import { createUserAndLogin, loginAdmin, rest } from '../helpers';
import { COMPUTE_TEST_ENV, TEST_IMAGE, createRunning, execIn, json, removeDeploymentContainers, removeSnapshotImages, waitForSnapshot, waitForStatus, type Caller } from './support';

jest.setTimeout(90_000);

let platform: TestPlatform;
let alice: Caller;
let mallory: Caller;
const payload = randomBytes(48 * 1024);

beforeAll(async () => {
  platform = await startTestPlatform({ env: COMPUTE_TEST_ENV });
  const admin = await loginAdmin(platform);
  const a = await createUserAndLogin(platform, admin.auth, 'alice-snap');
  const m = await createUserAndLogin(platform, admin.auth, 'mallory-snap');
  alice = { auth: a.auth, workspaceId: a.defaultWorkspaceId };
  mallory = { auth: m.auth, workspaceId: m.defaultWorkspaceId };
});

afterAll(async () => {
  await removeDeploymentContainers(platform);
  await removeSnapshotImages([alice.workspaceId, mallory.workspaceId]);
  await platform?.stop();
});

async function writePayload(id: string) {
  const write = await rest(platform, 'POST', `/sandboxes/${id}/files`, { files: [{ path: '/keep/payload.bin', content: payload.toString('base64'), encoding: 'base64', mode: '0640' }] }, alice.auth);
  expect(write.status).toBe(200);
}

async function readPayload(id: string): Promise<Buffer> {
  const response = await rest(platform, 'GET', `/sandboxes/${id}/file-content?path=/keep/payload.bin`, undefined, alice.auth);
  expect(response.status).toBe(200);
  expect(response.headers.get('x-file-mode')).toMatch(/640$/);
  return Buffer.from(await response.arrayBuffer());
}

describe('snapshots keep files byte for byte', () => {
  let sandbox: any;
  let snapshot: any;

  it('stop-with-snapshot stops the sandbox and makes a ready snapshot', async () => {
    sandbox = await createRunning(platform, alice);
    await writePayload(sandbox.id);
    const response = await rest(platform, 'POST', `/sandboxes/${sandbox.id}/stop-with-snapshot`, { name: 'before stop' }, alice.auth);
    expect(response.status).toBe(202);
    const body = await json(response);
    expect(body.sandbox.status).toBe('stopping');
    expect(body.snapshot).toMatchObject({ status: 'creating', sandboxId: sandbox.id, name: 'before stop', workspaceId: alice.workspaceId });
    await waitForStatus(platform, alice, sandbox.id, 'stopped');
    snapshot = await waitForSnapshot(platform, alice, body.snapshot.id);
    expect(snapshot.sizeBytes).toBeGreaterThan(0);
    const lifecycle = await json(await rest(platform, 'GET', `/sandboxes/${sandbox.id}/logs/lifecycle`, undefined, alice.auth));
    expect(lifecycle.data.map((e: any) => e.toStatus).slice(-3)).toEqual(['stopping', 'snapshotting', 'stopped']);
  });

  it('start-from-latest boots the snapshot with the file intact', async () => {
    // Remove the file from the old container's view: only the snapshot may bring it back.
    const started = await rest(platform, 'POST', `/sandboxes/${sandbox.id}/start-from-latest`, undefined, alice.auth);
    expect(started.status).toBe(202);
    await waitForStatus(platform, alice, sandbox.id, 'running');
    expect((await readPayload(sandbox.id)).equals(payload)).toBe(true);
  });

  it('a snapshot of a running sandbox returns it to running; start-from-snapshot goes back to an older one', async () => {
    await execIn(platform, alice, sandbox.id, { command: 'echo second > /keep/second.txt' });
    const taken = await json(await rest(platform, 'POST', `/sandboxes/${sandbox.id}/snapshots`, { name: 'with second' }, alice.auth));
    expect(taken.sandbox.status).toBe('snapshotting');
    const second = await waitForSnapshot(platform, alice, taken.snapshot.id);
    await waitForStatus(platform, alice, sandbox.id, 'running');
    expect((await execIn(platform, alice, sandbox.id, { command: 'cat /keep/second.txt' })).body.stdout).toBe('second\n');

    const notStopped = await rest(platform, 'POST', `/sandboxes/${sandbox.id}/start-from-snapshot`, { snapshotId: snapshot.id }, alice.auth);
    expect(notStopped.status).toBe(409);
    await rest(platform, 'POST', `/sandboxes/${sandbox.id}/stop`, undefined, alice.auth);
    await waitForStatus(platform, alice, sandbox.id, 'stopped');
    expect((await rest(platform, 'POST', `/sandboxes/${sandbox.id}/start-from-snapshot`, { snapshotId: 'snp_doesnotexist0000000' }, alice.auth)).status).toBe(404);
    expect((await rest(platform, 'POST', `/sandboxes/${sandbox.id}/start-from-snapshot`, { snapshotId: snapshot.id }, alice.auth)).status).toBe(202);
    await waitForStatus(platform, alice, sandbox.id, 'running');
    expect((await readPayload(sandbox.id)).equals(payload)).toBe(true);
    expect((await execIn(platform, alice, sandbox.id, { command: 'test -e /keep/second.txt; echo $?' })).body.stdout).toBe('1\n');

    const list = await json(await rest(platform, 'GET', `/snapshots?sandboxId=${sandbox.id}`, undefined, alice.auth));
    expect(list.data.map((s: any) => s.id)).toEqual([second.id, snapshot.id]);
  });

  it('POST /sandboxes with snapshotId and restore into a new sandbox both boot the files', async () => {
    const fromSnapshot = await createRunning(platform, alice, { image: undefined, snapshotId: snapshot.id });
    expect(fromSnapshot.snapshotId).toBe(snapshot.id);
    expect((await readPayload(fromSnapshot.id)).equals(payload)).toBe(true);
    const restored = await rest(platform, 'POST', `/snapshots/${snapshot.id}/restore`, { name: 'restored copy' }, alice.auth);
    expect(restored.status).toBe(202);
    const copy = await waitForStatus(platform, alice, (await json(restored)).id, 'running');
    expect((await readPayload(copy.id)).equals(payload)).toBe(true);
  });

  it('restores a stopped sandbox in place; refuses a running one', async () => {
    expect((await rest(platform, 'POST', `/snapshots/${snapshot.id}/restore`, {}, alice.auth)).status).toBe(409);
    await rest(platform, 'POST', `/sandboxes/${sandbox.id}/stop`, undefined, alice.auth);
    await waitForStatus(platform, alice, sandbox.id, 'stopped');
    const restored = await rest(platform, 'POST', `/snapshots/${snapshot.id}/restore`, {}, alice.auth);
    expect(restored.status).toBe(202);
    expect((await json(restored)).id).toBe(sandbox.id);
    await waitForStatus(platform, alice, sandbox.id, 'running');
  });
});

describe('snapshot records', () => {
  it('creates from an image, lists, gets, updates metadata and deletes', async () => {
    const created = await rest(platform, 'POST', '/snapshots', { workspaceId: alice.workspaceId, image: TEST_IMAGE, name: 'base', labels: { tier: 'gold' } }, alice.auth);
    expect(created.status).toBe(202);
    const snap = await waitForSnapshot(platform, alice, (await json(created)).id);
    expect(snap).toMatchObject({ name: 'base', sourceImage: TEST_IMAGE, sandboxId: null, labels: { tier: 'gold' } });
    const updated = await json(await rest(platform, 'PUT', `/snapshots/${snap.id}`, { name: 'renamed', description: 'the base image', labels: { tier: 'silver' } }, alice.auth));
    expect(updated).toMatchObject({ name: 'renamed', description: 'the base image', labels: { tier: 'silver' } });
    expect((await rest(platform, 'PUT', `/snapshots/${snap.id}`, {}, alice.auth)).status).toBe(400);
    const all = await json(await rest(platform, 'GET', '/snapshots', undefined, alice.auth));
    expect(all.data.map((s: any) => s.id)).toContain(snap.id);
    const deleted = await rest(platform, 'DELETE', `/snapshots/${snap.id}`, undefined, alice.auth);
    expect(await json(deleted)).toEqual({ id: snap.id, deleted: true });
    expect((await rest(platform, 'GET', `/snapshots/${snap.id}`, undefined, alice.auth)).status).toBe(404);
    expect((await rest(platform, 'POST', '/sandboxes', { name: 'x', workspaceId: alice.workspaceId, snapshotId: snap.id }, alice.auth)).status).toBe(404);
  });

  it('refuses bad creates: both or neither of sandboxId and image, an unknown image', async () => {
    expect((await rest(platform, 'POST', '/snapshots', { workspaceId: alice.workspaceId }, alice.auth)).status).toBe(400);
    expect((await rest(platform, 'POST', '/snapshots', { image: TEST_IMAGE, sandboxId: 'sbx_x' }, alice.auth)).status).toBe(400);
    expect((await rest(platform, 'POST', '/snapshots', { image: 'platform/nope:0' }, alice.auth)).status).toBe(400);
    expect((await rest(platform, 'POST', '/snapshots/snp_unknown00000000000/restore', {}, alice.auth)).status).toBe(404);
  });

  it('refuses to delete a snapshot while a sandbox boots from it (409)', async () => {
    const snap = await waitForSnapshot(platform, alice, (await json(await rest(platform, 'POST', '/snapshots', { image: TEST_IMAGE, name: 'gpu base' }, alice.auth))).id);
    // The only GPU is taken, so a GPU sandbox booting from the snapshot waits in pending.
    const holder = await createRunning(platform, alice, { gpuCount: 1 });
    const waiting = await json(await rest(platform, 'POST', '/sandboxes', { name: 'waits', workspaceId: alice.workspaceId, snapshotId: snap.id, gpuCount: 1, args: ['sleep', '3600'] }, alice.auth));
    expect(waiting.status).toBe('pending');
    const refused = await rest(platform, 'DELETE', `/snapshots/${snap.id}`, undefined, alice.auth);
    expect(refused.status).toBe(409);
    expect((await json(refused)).error.code).toBe('INVALID_STATE');
    await rest(platform, 'DELETE', `/sandboxes/${waiting.id}`, undefined, alice.auth);
    await waitForStatus(platform, alice, waiting.id, 'deleted');
    expect((await rest(platform, 'DELETE', `/snapshots/${snap.id}`, undefined, alice.auth)).status).toBe(200);
    await rest(platform, 'DELETE', `/sandboxes/${holder.id}`, undefined, alice.auth);
  });

  it('keeps another workspace out (404), including booting from a foreign snapshot', async () => {
    const snap = await waitForSnapshot(platform, alice, (await json(await rest(platform, 'POST', '/snapshots', { image: TEST_IMAGE, name: 'private' }, alice.auth))).id);
    for (const [method, path, body] of [
      ['GET', `/snapshots/${snap.id}`],
      ['PUT', `/snapshots/${snap.id}`, { name: 'pwned' }],
      ['DELETE', `/snapshots/${snap.id}`],
      ['POST', `/snapshots/${snap.id}/restore`, { name: 'stolen' }],
    ] as Array<[string, string, unknown?]>) {
      expect({ method, path, status: (await rest(platform, method, path, body, mallory.auth)).status }).toEqual({ method, path, status: 404 });
    }
    const boot = await rest(platform, 'POST', '/sandboxes', { name: 'x', workspaceId: mallory.workspaceId, snapshotId: snap.id }, mallory.auth);
    expect(boot.status).toBe(404);
    const list = await json(await rest(platform, 'GET', '/snapshots', undefined, mallory.auth));
    expect(list.data).toEqual([]);
    expect((await json(await rest(platform, 'GET', `/snapshots/${snap.id}`, undefined, alice.auth))).name).toBe('private');
  });
});

import { startTestPlatform, type TestPlatform } from '../harness';
import { createUserAndLogin, eventually, loginAdmin, rest } from '../helpers';
import { COMPUTE_TEST_ENV, createRunning, json, removeDeploymentContainers, waitForStatus, type Caller } from './support';

jest.setTimeout(60_000);

let platform: TestPlatform;
let alice: Caller;

beforeAll(async () => {
  platform = await startTestPlatform({ env: { ...COMPUTE_TEST_ENV, RATE_LIMIT_OVERRIDES: JSON.stringify({ '*': { concurrentSandboxes: 2 } }) } });
  const admin = await loginAdmin(platform);
  const a = await createUserAndLogin(platform, admin.auth, 'alice-limits');
  alice = { auth: a.auth, workspaceId: a.defaultWorkspaceId };
});

afterAll(async () => {
  await removeDeploymentContainers(platform);
  await platform?.stop();
});

const inUse = async () => (await json(await rest(platform, 'GET', `/workspaces/${alice.workspaceId}/rate-limits`, undefined, alice.auth))).usage.concurrentSandboxes;

it('counts active sandboxes against the workspace limit, answers 429 past it, and frees the slot on stop', async () => {
  const first = await createRunning(platform, alice);
  await createRunning(platform, alice);
  expect(await inUse()).toEqual({ inUse: 2, limit: 2, available: 0 });

  const refused = await rest(platform, 'POST', '/sandboxes', { name: 'third', workspaceId: alice.workspaceId, image: 'platform/busybox:latest' }, alice.auth);
  expect(refused.status).toBe(429);
  const body = await json(refused);
  expect(body.error).toMatchObject({ code: 'RATE_LIMITED', details: { kind: 'concurrentSandboxes', limit: 2, inUse: 2 } });
  expect(refused.headers.get('retry-after')).toBeTruthy();

  await rest(platform, 'POST', `/sandboxes/${first.id}/stop`, undefined, alice.auth);
  await waitForStatus(platform, alice, first.id, 'stopped');
  await eventually(async () => (await inUse()).inUse === 1, 5000, 'the slot to be freed');
  const third = await createRunning(platform, alice, { name: 'third' });
  expect(third.status).toBe('running');
  // A stopped sandbox starting again needs a slot too.
  const restart = await rest(platform, 'POST', `/sandboxes/${first.id}/start`, undefined, alice.auth);
  expect(restart.status).toBe(429);
  expect((await json(await rest(platform, 'GET', `/sandboxes/${first.id}`, undefined, alice.auth))).status).toBe('stopped');
});

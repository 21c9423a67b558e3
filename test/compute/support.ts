import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { TestPlatform } from '../harness';
import { eventually, json, rest } from '../helpers';

const exec = promisify(execFile);

/** The image compute tests boot: busybox-static, built locally by scripts/build-test-images.sh. */
export const TEST_IMAGE = 'platform/busybox:latest';

/** Environment of a compute test platform: fast sampling and reconciling, a small fake GPU inventory. */
export const COMPUTE_TEST_ENV: Record<string, string> = {
  COMPUTE_STATS_INTERVAL_SECONDS: '1',
  COMPUTE_RECONCILE_INTERVAL_SECONDS: '2',
  GPU_INVENTORY: 't4:gpu-0',
  GPU_DEVICE_REQUESTS: 'false',
};

export interface Caller {
  auth: Record<string, string>;
  workspaceId: string;
}

/** POST /sandboxes (a long-running busybox by default) and wait until it runs. */
export async function createRunning(platform: TestPlatform, who: Caller, body: Record<string, unknown> = {}): Promise<any> {
  const response = await rest(platform, 'POST', '/sandboxes', { name: 'test', workspaceId: who.workspaceId, image: TEST_IMAGE, args: ['sleep', '3600'], ...body }, who.auth);
  const created = await json(response);
  if (response.status !== 201) throw new Error(`create answered ${response.status}: ${JSON.stringify(created)}`);
  return waitForStatus(platform, who, created.id, 'running');
}

/** Polls GET /sandboxes/{id} until `status`; fails fast on failed (with its reason). */
export async function waitForStatus(platform: TestPlatform, who: Caller, id: string, status: string, timeoutMs = 20_000): Promise<any> {
  return eventually(
    async () => {
      const sandbox = await json(await rest(platform, 'GET', `/sandboxes/${id}`, undefined, who.auth));
      if (sandbox.status === 'failed' && status !== 'failed') throw new Error(`sandbox ${id} failed: ${sandbox.statusReason}`);
      return sandbox.status === status ? sandbox : undefined;
    },
    timeoutMs,
    `sandbox ${id} to be ${status}`,
  );
}

export async function waitForSnapshot(platform: TestPlatform, who: Caller, id: string, timeoutMs = 30_000): Promise<any> {
  return eventually(
    async () => {
      const snapshot = await json(await rest(platform, 'GET', `/snapshots/${id}`, undefined, who.auth));
      if (snapshot.status === 'failed') throw new Error(`snapshot ${id} failed: ${snapshot.statusReason}`);
      return snapshot.status === 'ready' ? snapshot : undefined;
    },
    timeoutMs,
    `snapshot ${id} to be ready`,
  );
}

export async function execIn(platform: TestPlatform, who: Caller, id: string, body: Record<string, unknown>): Promise<{ status: number; body: any }> {
  const response = await rest(platform, 'POST', `/sandboxes/${id}/exec`, body, who.auth);
  return { status: response.status, body: await json(response) };
}

/** Ids of the engine's containers of this platform (label platform.deployment), running or not. */
export async function deploymentContainers(platform: TestPlatform, extraLabel?: string): Promise<string[]> {
  const filters = ['--filter', `label=platform.deployment=${platform.config.compute.deploymentId}`];
  if (extraLabel) filters.push('--filter', `label=${extraLabel}`);
  const { stdout } = await exec('docker', ['ps', '-aq', '--no-trunc', ...filters]);
  return stdout.split('\n').filter(Boolean);
}

/** Removes this platform's containers and snapshot images (afterAll). */
export async function removeDeploymentContainers(platform: TestPlatform): Promise<void> {
  const ids = await deploymentContainers(platform).catch(() => []);
  if (ids.length) await exec('docker', ['rm', '-f', '-v', ...ids]).catch(() => undefined);
}

/**
 * Removes the snapshot tags of these workspaces. By tag, not by image id: a snapshot made from an
 * image (`snapshot.from-image`) is a second tag of that image, and removing the id would take the
 * test image itself (platform/busybox:latest) with it.
 */
export async function removeSnapshotImages(workspaceIds: string[]): Promise<void> {
  for (const ws of workspaceIds) {
    const { stdout } = await exec('docker', ['images', '--format', '{{.Repository}}:{{.Tag}}', `platform-snapshots/${ws.toLowerCase()}`]).catch(() => ({ stdout: '' }));
    const refs = [...new Set(stdout.split('\n').filter(Boolean))];
    if (refs.length) await exec('docker', ['rmi', '-f', ...refs]).catch(() => undefined);
  }
}

export { json } from '../helpers';

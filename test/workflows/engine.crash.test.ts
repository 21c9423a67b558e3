import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { startWorker, type RunningWorker } from '../../worker';
import { WORKFLOW_PROCESSORS } from '../../worker/processors/workflows';
import { eventually } from '../services';
import { chain, createEngineTestEnv, node, type EngineTestEnv } from './engine-harness';

const ROOT = join(__dirname, '..', '..');
const ENTRY = join(__dirname, 'engine-worker-entry.ts');
const SHORT_LOCKS = { workflows: () => ({ concurrency: 4, lockDuration: 2000, stalledInterval: 1000, maxStalledCount: 3 }) };

async function spawnWorker(t: EngineTestEnv): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', ENTRY], {
    cwd: ROOT,
    env: { ...process.env, WF_TEST_DATABASE_URL: t.database.url, WF_TEST_PREFIX: t.env.prefix },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (chunk) => (out += chunk));
  child.stderr!.on('data', (chunk) => (out += chunk));
  await eventually(
    () => {
      if (child.exitCode !== null) throw new Error(`the worker process exited with ${child.exitCode}:\n${out}`);
      return out.includes('ready\n');
    },
    30_000,
    'the worker process to start',
  );
  return { child, output: () => out };
}

describe('workflow engine: a worker killed in the middle of a step', () => {
  let t: EngineTestEnv;
  let child: ChildProcess | undefined;
  let survivor: RunningWorker | undefined;

  beforeAll(async () => {
    t = await createEngineTestEnv();
  });

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await survivor?.stop();
    await t?.cleanup();
  });

  it('resumes on another worker: finished steps are not repeated, the interrupted one runs again', async () => {
    ({ child } = await spawnWorker(t));
    const id = await t.start({
      nodes: [
        node('trigger', 'manual-trigger'),
        node('busy', 'code', { code: 'const end = Date.now() + 1500; while (Date.now() < end) {} return items.map((i) => ({ ...i, busy: true }));', timeoutMs: 5000 }),
        node('s1', 'set', { values: { s1: true } }),
        node('s2', 'set', { values: { s2: true } }),
      ],
      connections: chain('trigger', 'busy', 's1', 's2'),
    }, { run: 1 });

    await eventually(async () => (await t.steps(id)).some((s) => s.node_id === 'busy' && s.status === 'running'), 20_000, 'the busy step to run');
    child.kill('SIGKILL');
    await eventually(() => child!.exitCode !== null || child!.signalCode !== null, 5_000, 'the worker process to die');
    expect((await t.steps(id)).map((s) => [s.node_id, s.status])).toEqual([
      ['trigger', 'succeeded'],
      ['busy', 'running'],
    ]);
    expect((await t.execution(id)).status).toBe('running');

    const killedAt = Date.now();
    survivor = await startWorker(t.env.runtime, { processors: { workflows: WORKFLOW_PROCESSORS }, schedules: [], queueOptions: SHORT_LOCKS, shutdownTimeoutMs: 2000 });
    const done = await t.until(id, ['succeeded', 'failed', 'cancelled'], 30_000);
    expect(Date.now() - killedAt).toBeLessThan(20_000);
    expect(done.status).toBe('succeeded');
    expect(done.output).toEqual([{ run: 1, busy: true, s1: true, s2: true }]);
    const steps = await t.steps(id);
    expect(steps.map((s) => [s.node_id, s.status, s.attempts, s.seq])).toEqual([
      ['trigger', 'succeeded', 1, 1],
      ['busy', 'succeeded', 2, 2],
      ['s1', 'succeeded', 1, 3],
      ['s2', 'succeeded', 1, 4],
    ]);
  });
});

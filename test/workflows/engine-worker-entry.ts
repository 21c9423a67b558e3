/**
 * A workflows worker in a process of its own, for engine.crash.test.ts:
 *   node --import tsx test/workflows/engine-worker-entry.ts
 * Environment: WF_TEST_DATABASE_URL, WF_TEST_PREFIX (Redis prefix). Short job locks, so a killed
 * worker's execution moves to another one within seconds. Prints "ready" once consuming.
 */
import 'reflect-metadata';
import { startWorker } from '../../worker';
import { WORKFLOW_PROCESSORS } from '../../worker/processors/workflows';
import { createTestRuntime } from '../services';

export const SHORT_LOCKS = { workflows: () => ({ concurrency: 4, lockDuration: 2000, stalledInterval: 1000, maxStalledCount: 3 }) };

async function main(): Promise<void> {
  const databaseUrl = process.env.WF_TEST_DATABASE_URL;
  const prefix = process.env.WF_TEST_PREFIX;
  if (!databaseUrl || !prefix) throw new Error('WF_TEST_DATABASE_URL and WF_TEST_PREFIX are required');
  const runtime = createTestRuntime({ databaseUrl, prefix });
  const worker = await startWorker(runtime, { processors: { workflows: WORKFLOW_PROCESSORS }, schedules: [], queueOptions: SHORT_LOCKS });
  process.once('SIGTERM', () => void worker.stop().then(() => process.exit(0)));
  process.stdout.write('ready\n');
}

if (process.env.WF_TEST_DATABASE_URL) {
  main().catch((err) => {
    process.stderr.write(`${(err as Error).stack ?? err}\n`);
    process.exit(1);
  });
}

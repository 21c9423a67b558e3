/**
 * A compute worker in a process of its own, for the crash test (compute.crash.test.ts):
 *   node --import tsx worker/processors/compute/testing/worker-entry.ts
 * Environment: COMPUTE_TEST_DATABASE_URL, COMPUTE_TEST_PREFIX (Redis prefix and deployment id),
 * COMPUTE_TEST_CONFIG (JSON, merged into config.compute) and COMPUTE_TEST_HOLD_AFTER_CREATE_MS
 * (sleep after each container create, so the test can kill the process between the engine
 * call and the database update). Prints "ready" once the queues are consumed.
 */
import 'reflect-metadata';
import { setTimeout as delay } from 'node:timers/promises';
import { createTestRuntime } from '../../../../test/services';
import { startWorker } from '../../../index';
import { DockerRuntime } from '../../../runtime/docker';
import { COMPUTE_PROCESSORS, GPU_PROCESSORS } from '../index';

async function main(): Promise<void> {
  const databaseUrl = process.env.COMPUTE_TEST_DATABASE_URL;
  const prefix = process.env.COMPUTE_TEST_PREFIX;
  if (!databaseUrl || !prefix) throw new Error('COMPUTE_TEST_DATABASE_URL and COMPUTE_TEST_PREFIX are required');
  const holdMs = Number(process.env.COMPUTE_TEST_HOLD_AFTER_CREATE_MS ?? 0);
  if (holdMs > 0) {
    const createAndStart = DockerRuntime.prototype.createAndStart;
    DockerRuntime.prototype.createAndStart = async function (spec) {
      const created = await createAndStart.call(this, spec);
      process.stdout.write(`created ${created.containerId}\n`);
      await delay(holdMs);
      return created;
    };
  }
  const runtime = createTestRuntime({ databaseUrl, prefix });
  runtime.config.compute = { ...runtime.config.compute, ...JSON.parse(process.env.COMPUTE_TEST_CONFIG ?? '{}'), deploymentId: prefix };
  const worker = await startWorker(runtime, { processors: { compute: COMPUTE_PROCESSORS, gpu: GPU_PROCESSORS }, schedules: [] });
  process.once('SIGTERM', () => void worker.stop().then(() => process.exit(0)));
  process.stdout.write('ready\n');
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});

import { UnrecoverableError, type Job } from 'bullmq';
import { DEFAULT_JOB_OPTIONS, MAINTENANCE_JOBS } from '../core/queues';
import { startWorker, type RunningWorker } from './index';
import { PROCESSORS, SCHEDULES, type JobProcessor } from './processors';
import { createWorkerTestRuntime, eventually, type WorkerTestRuntime } from './test-support';

/** A promise with its resolver outside, to hold a job in its processor. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('worker', () => {
  let env: WorkerTestRuntime;
  let worker: RunningWorker | undefined;

  beforeEach(() => {
    env = createWorkerTestRuntime({ overrides: { refreshTokenPurgeCron: '17 3 * * *', workerConcurrency: 2 } });
  });

  afterEach(async () => {
    await worker?.stop();
    worker = undefined;
    await env.cleanup();
  });

  // The maintenance queue alone: the compute queues have tests of their own (processors/compute).
  const maintenanceOnly = { processors: { maintenance: PROCESSORS.maintenance }, schedules: SCHEDULES.filter((s) => s.queue === 'maintenance') };

  it('consumes only the queues that have processors and registers the refresh-token purge schedule', async () => {
    worker = await startWorker(env.runtime, maintenanceOnly);

    expect(worker.queues).toEqual(['maintenance']);
    expect(worker.schedulers).toEqual(['purge-expired-refresh-tokens']);
    const schedulers = await env.queue('maintenance').getJobSchedulers();
    expect(schedulers).toEqual([
      expect.objectContaining({ key: 'purge-expired-refresh-tokens', name: MAINTENANCE_JOBS.purgeExpiredRefreshTokens, pattern: '17 3 * * *' }),
    ]);
    // The scheduler's next run waits in the delayed set with the default retry policy.
    const [next] = await env.queue('maintenance').getDelayed();
    expect(next.name).toBe(MAINTENANCE_JOBS.purgeExpiredRefreshTokens);
    expect(next.opts.attempts).toBe(DEFAULT_JOB_OPTIONS.attempts);
  });

  it('upserts the schedule instead of adding a second one when several workers start', async () => {
    worker = await startWorker(env.runtime, maintenanceOnly);
    const second = await startWorker(env.runtime, maintenanceOnly);
    try {
      expect(await env.queue('maintenance').getJobSchedulersCount()).toBe(1);
    } finally {
      await second.stop();
    }
  });

  it('retries a failing job with the default exponential backoff until it succeeds', async () => {
    const attempts: Array<{ attempt: number; at: number }> = [];
    const flaky: JobProcessor = async (job) => {
      attempts.push({ attempt: job.attemptsMade + 1, at: Date.now() });
      if (attempts.length < 3) throw new Error(`transient failure ${attempts.length}`);
      return { ok: true };
    };
    worker = await startWorker(env.runtime, { processors: { compute: { flaky } }, schedules: [] });

    const job = await env.queue('compute').add('flaky', { n: 1 });
    const done = await eventually(async () => ((await job.isCompleted()) ? env.queue('compute').getJob(job.id!) : undefined), 20_000, 'job completion');

    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3]);
    expect(done?.returnvalue).toEqual({ ok: true });
    expect(done?.attemptsMade).toBe(3);
    // Backoff of DEFAULT_JOB_OPTIONS: 1 s, then 2 s.
    expect(attempts[1].at - attempts[0].at).toBeGreaterThanOrEqual(950);
    expect(attempts[2].at - attempts[1].at).toBeGreaterThanOrEqual(1950);
  });

  it('does not retry a job that throws UnrecoverableError', async () => {
    let calls = 0;
    const doomed: JobProcessor = async () => {
      calls += 1;
      throw new UnrecoverableError('the sandbox image does not exist');
    };
    worker = await startWorker(env.runtime, { processors: { compute: { doomed } }, schedules: [] });

    const job = await env.queue('compute').add('doomed', {});
    await eventually(() => job.isFailed(), 10_000, 'job failure');
    const failed = (await env.queue('compute').getJob(job.id!)) as Job;

    expect(calls).toBe(1);
    expect(failed.attemptsMade).toBe(1);
    expect(failed.failedReason).toBe('the sandbox image does not exist');
  });

  it('fails a job whose name has no processor without retrying it', async () => {
    worker = await startWorker(env.runtime, { processors: { compute: { known: async () => 'ok' } }, schedules: [] });

    const job = await env.queue('compute').add('unknown', {});
    await eventually(() => job.isFailed(), 10_000, 'job failure');
    const failed = (await env.queue('compute').getJob(job.id!)) as Job;

    expect(failed.attemptsMade).toBe(1);
    expect(failed.failedReason).toMatch(/No processor for job "unknown"/);
  });

  it('waits for an active job to finish when stopped', async () => {
    const started = deferred();
    const release = deferred();
    const slow: JobProcessor = async () => {
      started.resolve();
      await release.promise;
      return 'finished';
    };
    worker = await startWorker(env.runtime, { processors: { compute: { slow } }, schedules: [] });
    const job = await env.queue('compute').add('slow', {});
    await started.promise;

    let stopped = false;
    const stopping = worker.stop().then(() => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(stopped).toBe(false);

    release.resolve();
    await stopping;
    expect(await job.isCompleted()).toBe(true);
    expect((await env.queue('compute').getJob(job.id!))?.returnvalue).toBe('finished');
    // Idempotent: a second stop resolves at once.
    await worker.stop();
  });

  it('aborts jobs still active after the shutdown timeout and stops anyway', async () => {
    const started = deferred();
    let aborted = false;
    const stuck: JobProcessor = (_job, _ctx, signal) =>
      new Promise((_resolve, reject) => {
        started.resolve();
        signal?.addEventListener('abort', () => {
          aborted = true;
          reject(new Error('aborted'));
        });
      });
    worker = await startWorker(env.runtime, { processors: { compute: { stuck } }, schedules: [], shutdownTimeoutMs: 200 });
    await env.queue('compute').add('stuck', {});
    await started.promise;

    const before = Date.now();
    await worker.stop();
    expect(Date.now() - before).toBeLessThan(5_000);
    expect(aborted).toBe(true);
  });
});

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TOPICS } from '../../core/pubsub';
import { onExecutionEvents } from '../../subgraphs/workflows/engine/events';
import { ID_PREFIX, newId } from '../../core/ids';
import { WORKFLOW_JOBS } from '../../core/queues';
import { startWorker, type RunningWorker } from '../../worker';
import { WORKFLOW_PROCESSORS, WORKFLOW_QUEUE_OPTIONS } from '../../worker/processors/workflows';
import { eventually } from '../services';
import { chain, createEngineTestEnv, node, type EngineTestEnv } from './engine-harness';

describe('workflow engine (worker tier)', () => {
  let t: EngineTestEnv;
  let worker: RunningWorker;
  let server: Server;
  let serverUrl: string;
  let hits = 0;

  beforeAll(async () => {
    t = await createEngineTestEnv();
    worker = await startWorker(t.env.runtime, { processors: { workflows: WORKFLOW_PROCESSORS }, schedules: [], queueOptions: WORKFLOW_QUEUE_OPTIONS, shutdownTimeoutMs: 2000 });
    server = createServer((req, res) => {
      hits += 1;
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"error":"boom"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await worker?.stop();
    await new Promise((resolve) => server?.close(resolve));
    await t?.cleanup();
  });

  it('runs trigger → set → if → code to succeeded, every step persisted in order', async () => {
    const graph = {
      nodes: [
        node('trigger', 'manual-trigger'),
        node('set', 'set', { values: { greeting: 'hello {{ $json.name }}', n: 21 } }, 'Set'),
        node('if', 'if', { conditions: [{ left: '{{ $json.n }}', operator: 'gt', right: 10 }] }),
        node('code', 'code', { code: 'return items.map((i) => ({ ...i, doubled: i.n * 2 }));' }),
        node('never', 'set', { values: { no: true } }),
      ],
      connections: [...chain('trigger', 'set', 'if', 'code'), { from: 'if', fromOutput: 1, to: 'never' }],
    };
    const events: any[] = [];
    // Subscribed before the start (the engine publishes each write's events once, as one message).
    const id = newId(ID_PREFIX.execution);
    const off = onExecutionEvents(t.env.runtime.pubsub, id, (e) => events.push(e));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await t.start(graph, { name: 'ada' }, null, id);
    const done = await t.until(id, ['succeeded', 'failed']);
    off();
    expect(done.status).toBe('succeeded');
    expect(done.error).toBeNull();
    expect(done.started_at).toBeTruthy();
    expect(done.finished_at).toBeTruthy();
    expect(done.output).toEqual([{ name: 'ada', greeting: 'hello ada', n: 21, doubled: 42 }]);

    const steps = await t.steps(id);
    expect(steps.map((s) => [s.node_id, s.status, s.attempts])).toEqual([
      ['trigger', 'succeeded', 1],
      ['set', 'succeeded', 1],
      ['if', 'succeeded', 1],
      ['code', 'succeeded', 1],
      ['never', 'skipped', 0],
    ]);
    expect(steps.map((s) => s.seq)).toEqual([1, 2, 3, 4, 5]);
    const [, set, cond, code] = steps;
    expect(set.input).toEqual([{ json: { name: 'ada' } }]);
    expect(set.output).toEqual([[{ json: { name: 'ada', greeting: 'hello ada', n: 21 } }]]);
    expect(cond.output).toEqual([[{ json: { name: 'ada', greeting: 'hello ada', n: 21 } }], []]);
    expect(code.output[0][0].json.doubled).toBe(42);
    for (const s of steps.slice(0, 4)) {
      expect(s.started_at).toBeInstanceOf(Date);
      expect(s.finished_at.getTime()).toBeGreaterThanOrEqual(s.started_at.getTime());
      expect(typeof s.duration_ms).toBe('number');
      expect(s.workspace_id).toBe('ws_enginetest');
    }
    // Live events: running first, step events, succeeded last.
    await eventually(() => events.some((e) => e.type === 'status' && e.status === 'succeeded'), 5000, 'the final status event');
    expect(events.filter((e) => e.type === 'step' && e.status === 'succeeded').map((e) => e.nodeId)).toEqual(['trigger', 'set', 'if', 'code']);
  });

  it('fails the execution when an http-request keeps failing, counting its attempts', async () => {
    hits = 0;
    const id = await t.start({
      nodes: [node('trigger', 'manual-trigger'), node('fetch', 'http-request', { url: `${serverUrl}/x` }, 'Fetch'), node('after', 'set', { values: { a: 1 } })],
      connections: chain('trigger', 'fetch', 'after'),
      settings: { retries: 3 },
    });
    const done = await t.until(id, ['succeeded', 'failed']);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/^Fetch: HTTP request failed with status 500/);
    const steps = await t.steps(id);
    expect(steps.map((s) => [s.node_id, s.status, s.attempts])).toEqual([
      ['trigger', 'succeeded', 1],
      ['fetch', 'failed', 3],
    ]);
    expect(steps[1].error).toMatch(/status 500/);
    expect(hits).toBe(3);
  });

  it('cancels a code node that loops forever through the cancel path', async () => {
    const id = await t.start({
      nodes: [node('trigger', 'manual-trigger'), node('spin', 'code', { code: 'for (;;) {}', timeoutMs: 30000 })],
      connections: chain('trigger', 'spin'),
    });
    await eventually(async () => (await t.steps(id)).some((s) => s.node_id === 'spin' && s.status === 'running'), 10_000, 'the code step to run');
    const asked = Date.now();
    // What the API's cancel does for a running execution.
    await t.db.query(`UPDATE workflows.executions SET cancel_requested = true WHERE id = $1`, [id]);
    t.env.runtime.pubsub.publish(TOPICS.workflowExecution, { type: 'cancel-requested', executionId: id, at: new Date().toISOString() }, id);
    const done = await t.until(id, ['cancelled', 'failed', 'succeeded']);
    expect(done.status).toBe('cancelled');
    expect(Date.now() - asked).toBeLessThan(5000);
    const spin = (await t.steps(id)).find((s) => s.node_id === 'spin')!;
    expect(spin.status).toBe('failed');
    expect(spin.error).toMatch(/cancelled/);
  });

  it('fails an execution that runs past its timeout', async () => {
    const id = await t.start({
      nodes: [node('trigger', 'manual-trigger'), node('spin', 'code', { code: 'for (;;) {}', timeoutMs: 30000 })],
      connections: chain('trigger', 'spin'),
      settings: { timeoutSeconds: 1 },
    });
    const done = await t.until(id, ['cancelled', 'failed', 'succeeded'], 10_000);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/timed out/);
  });

  it('waits durably and resumes after the delay', async () => {
    const id = await t.start({
      nodes: [node('trigger', 'manual-trigger'), node('pause', 'wait', { seconds: 1 }), node('after', 'set', { values: { resumed: true } })],
      connections: chain('trigger', 'pause', 'after'),
    });
    const waiting = await t.until(id, ['waiting', 'succeeded', 'failed']);
    expect(waiting.status).toBe('waiting');
    const during = await t.steps(id);
    expect(during.map((s) => [s.node_id, s.status])).toEqual([
      ['trigger', 'succeeded'],
      ['pause', 'succeeded'],
    ]);
    const job = await t.env.queue('workflows').getJob(id);
    expect(await job!.getState()).toBe('delayed');
    const done = await t.until(id, ['succeeded', 'failed'], 10_000);
    expect(done.status).toBe('succeeded');
    expect(done.output).toEqual([{ resumed: true }]);
    const steps = await t.steps(id);
    expect(steps.map((s) => [s.node_id, s.attempts])).toEqual([
      ['trigger', 1],
      ['pause', 1],
      ['after', 1],
    ]);
    expect(steps[2].started_at.getTime() - steps[1].finished_at.getTime()).toBeGreaterThanOrEqual(900);
  });

  it('fires a schedule trigger of a deployed workflow (seconds cron), and not once undeployed', async () => {
    const graph = { nodes: [node('tick', 'schedule', { cron: '*/1 * * * * *' }), node('mark', 'set', { values: { ticked: true } })], connections: chain('tick', 'mark') };
    const workflowId = await t.insertWorkflow(graph, true);
    const queue = t.env.queue('workflows');
    // What deploy does (TriggerRegistrar): a job scheduler per schedule node.
    await queue.upsertJobScheduler(`wf-${workflowId}-tick`, { pattern: '*/1 * * * * *' }, { name: WORKFLOW_JOBS.scheduled, data: { workflowId, nodeId: 'tick' } });
    const first = await eventually(
      async () => ((await t.db.query(`SELECT * FROM workflows.executions WHERE workflow_id = $1 AND status = 'succeeded'`, [workflowId])) as any[])[0],
      10_000,
      'a scheduled execution',
    );
    expect(first.mode).toBe('schedule');
    expect(first.trigger_node_id).toBe('tick');
    expect(first.output).toEqual([expect.objectContaining({ ticked: true })]);

    // Undeployed: the scheduler may still fire once more, but starts nothing.
    await t.db.query(`UPDATE workflows.workflows SET deployed = false WHERE id = $1`, [workflowId]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const [{ count: before }] = await t.db.query(`SELECT count(*)::int AS count FROM workflows.executions WHERE workflow_id = $1`, [workflowId]);
    await new Promise((resolve) => setTimeout(resolve, 2200));
    const [{ count: after }] = await t.db.query(`SELECT count(*)::int AS count FROM workflows.executions WHERE workflow_id = $1`, [workflowId]);
    expect(after).toBe(before);
    await queue.removeJobScheduler(`wf-${workflowId}-tick`);
  });

  it('resumes an execution whose worker died mid-step (same process, simulated): finished steps are reused', async () => {
    const graph = { nodes: [node('trigger', 'manual-trigger'), node('a', 'set', { values: { a: 1 } }), node('b', 'set', { values: { b: 2 } })], connections: chain('trigger', 'a', 'b') };
    // A stored execution as a dead worker left it: running, trigger done, `a` running.
    const id = 'exe_resume_' + Date.now();
    await t.db.query(
      `INSERT INTO workflows.executions (id, workspace_id, definition, status, mode, trigger_node_id, input, started_at) VALUES ($1, 'ws_enginetest', $2, 'running', 'manual', 'trigger', '{"x":1}', now())`,
      [id, JSON.stringify({ ...graph, settings: {} })],
    );
    await t.db.query(
      `INSERT INTO workflows.execution_steps (execution_id, node_id, workspace_id, node_type, seq, status, input, output, attempts, started_at, finished_at, duration_ms)
       VALUES ($1, 'trigger', 'ws_enginetest', 'manual-trigger', 1, 'succeeded', '[]', '[[{"json":{"x":1,"stored":true}}]]', 1, now(), now(), 1),
              ($1, 'a', 'ws_enginetest', 'set', 2, 'running', '[]', NULL, 1, now(), NULL, NULL)`,
      [id],
    );
    await t.env.queue('workflows').add(WORKFLOW_JOBS.execute, { executionId: id }, { jobId: id });
    const done = await t.until(id, ['succeeded', 'failed']);
    expect(done.status).toBe('succeeded');
    expect(done.output).toEqual([{ x: 1, stored: true, a: 1, b: 2 }]);
    expect((await t.steps(id)).map((s) => [s.node_id, s.attempts, s.seq])).toEqual([
      ['trigger', 1, 1],
      ['a', 2, 2],
      ['b', 1, 3],
    ]);
  });
});

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ID_PREFIX, newId } from '../../core/ids';
import { TOPICS } from '../../core/pubsub';
import { WORKFLOW_JOBS } from '../../core/queues';
import { createRedis } from '../../core/redis';
import { onExecutionEvents } from '../../subgraphs/workflows/engine/events';
import { publishReply, ReplyWaiter, type ExecutionReply } from '../../subgraphs/workflows/engine/replies';
import { startWorker, type RunningWorker } from '../../worker';
import { WORKFLOW_PROCESSORS, WORKFLOW_QUEUE_OPTIONS } from '../../worker/processors/workflows';
import { eventually } from '../services';
import { chain, createEngineTestEnv, node, WORKSPACE, type EngineTestEnv } from './engine-harness';

/**
 * The engine's write batching (steps without side effects go with the next write), fresh runs
 * from the job's snapshot, per-workflow concurrency, and the reply channel.
 */
describe('workflow engine: batching, snapshots, concurrency, replies', () => {
  let t: EngineTestEnv;
  let worker: RunningWorker;
  let server: Server;
  let serverUrl: string;
  let inFlight = 0;
  let mostInFlight = 0;

  beforeAll(async () => {
    t = await createEngineTestEnv();
    worker = await startWorker(t.env.runtime, { processors: { workflows: WORKFLOW_PROCESSORS }, schedules: [], queueOptions: WORKFLOW_QUEUE_OPTIONS, shutdownTimeoutMs: 2000 });
    // A slow endpoint that counts how many requests it serves at once.
    server = createServer((req, res) => {
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      setTimeout(() => {
        inFlight -= 1;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      }, 250);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await worker?.stop();
    await new Promise((resolve) => server?.close(resolve));
    await t?.cleanup();
  });

  it('a flow without side effects is stored whole at its end: every step, skipped ones too, and its events after the commit', async () => {
    const graph = {
      nodes: [
        node('trigger', 'manual-trigger'),
        node('shape', 'set', { values: { n: '{{ $json.n }}', label: 'x' } }),
        node('big', 'if', { conditions: [{ left: '{{ $json.n }}', operator: 'gt', right: 10 }] }),
        node('yes', 'set', { values: { size: 'big' } }),
        node('no', 'set', { values: { size: 'small' } }),
      ],
      connections: [...chain('trigger', 'shape', 'big'), { from: 'big', fromOutput: 0, to: 'yes' }, { from: 'big', fromOutput: 1, to: 'no' }],
    };
    const id = newId(ID_PREFIX.execution);
    const events: any[] = [];
    const off = onExecutionEvents(t.env.runtime.pubsub, id, (e) => events.push(e));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await t.start(graph, { n: 42 }, null, id);
    const done = await t.until(id, ['succeeded', 'failed']);
    expect(done.status).toBe('succeeded');
    expect(done.started_at).toBeInstanceOf(Date);
    expect(done.duration_ms).toBeGreaterThanOrEqual(0);
    expect(done.output).toEqual([{ n: 42, label: 'x', size: 'big' }]);
    const steps = await t.steps(id);
    expect(steps.map((s) => [s.node_id, s.status, s.attempts, s.seq])).toEqual([
      ['trigger', 'succeeded', 1, 1],
      ['shape', 'succeeded', 1, 2],
      ['big', 'succeeded', 1, 3],
      ['yes', 'succeeded', 1, 4],
      ['no', 'skipped', 0, 5],
    ]);
    expect(steps[1].input).toEqual([{ json: { n: 42 } }]);
    expect(steps[3].output).toEqual([[{ json: { n: 42, label: 'x', size: 'big' } }]]);
    await eventually(() => events.some((e) => e.type === 'status' && e.status === 'succeeded'), 5000, 'the final status event');
    off();
    // running, the steps in order, succeeded: one message, published after the commit.
    expect(events.map((e) => (e.type === 'status' ? `status:${e.status}` : `${e.nodeId}:${e.status}`))).toEqual([
      'status:running',
      'trigger:succeeded',
      'shape:succeeded',
      'big:succeeded',
      'yes:succeeded',
      'no:skipped',
      'status:succeeded',
    ]);
  });

  it('publishes a run\'s events as they come only while someone follows it; a late follower gets the run so far at once', async () => {
    const graph = {
      nodes: [
        node('trigger', 'manual-trigger'),
        node('busy', 'code', { code: 'const end = Date.now() + 700; while (Date.now() < end) {} return items;' }),
        node('after', 'set', { values: { done: true } }),
      ],
      connections: chain('trigger', 'busy', 'after'),
    };
    // Nobody follows: the claim and end of the busy step publish nothing; the run's end publishes
    // its whole history as one message.
    const quietId = newId(ID_PREFIX.execution);
    const messages: any[] = [];
    const offQuiet = t.env.runtime.pubsub.on(TOPICS.workflowExecution, (m) => messages.push(m), quietId);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await t.start(graph, {}, null, quietId);
    await t.until(quietId, ['succeeded']);
    await eventually(() => messages.length > 0 || undefined, 5000, 'the end of the run');
    await new Promise((resolve) => setTimeout(resolve, 200));
    offQuiet();
    expect(messages).toHaveLength(1);
    expect(messages[0].map((e: any) => (e.type === 'status' ? `status:${e.status}` : `${e.nodeId}:${e.status}`))).toEqual([
      'status:running',
      'trigger:succeeded',
      'busy:running',
      'busy:succeeded',
      'after:succeeded',
      'status:succeeded',
    ]);

    // Followed from the middle of the busy step: what happened before comes at once, the rest live.
    const id = await t.start(graph, {});
    await eventually(async () => (await t.steps(id)).some((s) => s.node_id === 'busy' && s.status === 'running') || undefined, 5000, 'the busy step to start');
    const events: any[] = [];
    let firstAt = 0;
    const off = onExecutionEvents(t.env.runtime.pubsub, id, (e) => {
      firstAt ||= Date.now();
      events.push(e);
    });
    const done = await t.until(id, ['succeeded']);
    await eventually(() => events.some((e) => e.type === 'status' && e.status === 'succeeded') || undefined, 5000, 'the final status event');
    off();
    expect(events.map((e) => (e.type === 'status' ? `status:${e.status}` : `${e.nodeId}:${e.status}`))).toEqual([
      'status:running',
      'trigger:succeeded',
      'busy:running',
      'busy:succeeded',
      'after:succeeded',
      'status:succeeded',
    ]);
    // The resend came while the busy step still ran, not with the run's end.
    expect(firstAt).toBeLessThan(done.finished_at.getTime());
  });

  it('a replayable step that fails is retried in memory and stored once, with its attempts', async () => {
    const id = await t.start(
      {
        nodes: [node('trigger', 'manual-trigger'), node('bad', 'set', { values: { 'a.__proto__.b': 1 } }, 'Bad')],
        connections: chain('trigger', 'bad'),
        settings: { retries: 2 },
      },
      {},
    );
    const done = await t.until(id, ['succeeded', 'failed']);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/^Bad: /);
    const steps = await t.steps(id);
    expect(steps.map((s) => [s.node_id, s.status, s.attempts])).toEqual([
      ['trigger', 'succeeded', 1],
      ['bad', 'failed', 2],
    ]);
  });

  it('a fresh run of an execution cancelled while its job was on its way writes nothing and leaves it cancelled', async () => {
    const graph = { nodes: [node('trigger', 'manual-trigger'), node('shape', 'set', { values: { a: 1 } })], connections: chain('trigger', 'shape'), settings: {} };
    const id = newId(ID_PREFIX.execution);
    await t.db.query(
      `INSERT INTO workflows.executions (id, workspace_id, definition, status, mode, trigger_node_id, input, cancel_requested, error, finished_at)
       VALUES ($1, $2, $3, 'cancelled', 'manual', 'trigger', '{}', true, 'Cancelled', now())`,
      [id, WORKSPACE, JSON.stringify(graph)],
    );
    // The job as ExecutionStarter queues it, with the snapshot its first run uses instead of the row.
    const job = await t.env.queue('workflows').add(
      WORKFLOW_JOBS.execute,
      { executionId: id, run: { workflowId: null, workspaceId: WORKSPACE, definition: graph, mode: 'manual', triggerNodeId: 'trigger', input: {} } },
      { jobId: id },
    );
    await eventually(async () => (await job.isCompleted()) || undefined, 10_000, 'the job to complete');
    const row = await t.execution(id);
    expect(row.status).toBe('cancelled');
    expect(row.error).toBe('Cancelled');
    expect(row.output).toBeNull();
    expect(await t.steps(id)).toEqual([]);
  });

  it('settings.concurrency bounds the executions of one workflow running at once; the others wait and then run', async () => {
    const graph = {
      nodes: [node('trigger', 'manual-trigger'), node('slow', 'http-request', { url: `${serverUrl}/slow` }), node('after', 'set', { values: { done: true } })],
      connections: chain('trigger', 'slow', 'after'),
      settings: { concurrency: 2 },
    };
    const workflowId = await t.insertWorkflow(graph);
    mostInFlight = 0;
    const ids = await Promise.all(Array.from({ length: 6 }, (_, i) => t.start(graph, { i }, workflowId)));
    const finished = await Promise.all(ids.map((id) => t.until(id, ['succeeded', 'failed'], 30_000)));
    expect(finished.map((e) => e.status)).toEqual(Array(6).fill('succeeded'));
    expect(mostInFlight).toBe(2);
    // Every slot was given back.
    const redis = createRedis(t.env.runtime.redisUrl);
    try {
      expect(await redis.zcard(`${t.env.prefix}:wf-slots:${workflowId}`)).toBe(0);
    } finally {
      await redis.quit();
    }

    // Another workflow has slots of its own: the first one's limit does not hold it back.
    const other = await t.insertWorkflow(graph);
    mostInFlight = 0;
    const both = await Promise.all([...Array.from({ length: 2 }, () => t.start(graph, {}, workflowId)), ...Array.from({ length: 2 }, () => t.start(graph, {}, other))]);
    await Promise.all(both.map((id) => t.until(id, ['succeeded'], 30_000)));
    expect(mostInFlight).toBe(4);
  });

  it('replies reach the waiting process over Redis (another process) and in-process, only for its own token', async () => {
    const { pubsub } = t.env.runtime;
    const waiter = new ReplyWaiter(pubsub);
    const other = new ReplyWaiter(pubsub);
    try {
      await Promise.all([waiter.ready, other.ready]);
      const got: ExecutionReply[] = [];
      const elsewhere: ExecutionReply[] = [];
      const off = waiter.on('exe_one', (r) => got.push(r));
      const offOther = other.on('exe_one', (r) => elsewhere.push(r));
      // As an engine in another process sends it: a message on the waiter's channel.
      pubsub.publish(TOPICS.workflowReplies, { kind: 'respond', executionId: 'exe_one', response: { status: 201, headers: {}, body: { via: 'redis' } } }, waiter.token);
      await eventually(() => got.length === 1 || undefined, 5000, 'the reply over Redis');
      // As an engine in this process sends it: handed over without Redis, as a copy.
      const body = { via: 'local' };
      publishReply(pubsub, waiter.token, { kind: 'finished', executionId: 'exe_one', status: 'succeeded' });
      publishReply(pubsub, waiter.token, { kind: 'respond', executionId: 'exe_one', response: { status: 200, headers: {}, body } });
      await eventually(() => got.length === 3 || undefined, 5000, 'the local replies');
      expect(got.map((r) => r.kind)).toEqual(['respond', 'finished', 'respond']);
      expect((got[2] as any).response.body).toEqual(body);
      expect((got[2] as any).response.body).not.toBe(body);
      // Replies for other executions are not delivered; the other waiter heard nothing.
      publishReply(pubsub, waiter.token, { kind: 'finished', executionId: 'exe_two', status: 'failed' });
      off();
      publishReply(pubsub, waiter.token, { kind: 'finished', executionId: 'exe_one', status: 'failed' });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(got).toHaveLength(3);
      expect(elsewhere).toEqual([]);
      offOther();
    } finally {
      waiter.close();
      other.close();
    }
  });
});

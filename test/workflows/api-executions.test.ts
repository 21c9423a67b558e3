import { createClient, type Client as WsClient } from 'graphql-ws';
import WebSocket from 'ws';
import { TOPICS, createPlatformPubSub, type PlatformPubSub } from '../../core/pubsub';
import { WORKFLOW_JOBS } from '../../core/queues';
import { startTestPlatform, type TestPlatform } from '../harness';
import { eventually, rest } from '../helpers';
import { TEST_REDIS_URL } from '../services';
import { SIMPLE_GRAPH, SLEEPY_GRAPH, createWorkflow, insertExecution, insertStep, json, setUpWorkflowTest, sharedWorkspace, type WorkflowTestEnv } from './api-support';

jest.setTimeout(60_000);

let platform: TestPlatform;
let t: WorkflowTestEnv;
let pubsub: PlatformPubSub;
const wsClients: WsClient[] = [];

beforeAll(async () => {
  platform = await startTestPlatform();
  t = await setUpWorkflowTest(platform, 'wfexec');
  pubsub = createPlatformPubSub(TEST_REDIS_URL, platform.config.redisPrefix);
});

afterAll(async () => {
  await Promise.all(wsClients.map((c) => c.dispose()));
  await pubsub?.close();
  await t?.close();
  await platform?.stop();
});

describe('execute', () => {
  it('queues a manual execution (202) on the workflows queue, from the manual trigger', async () => {
    // A graph that ends in a long wait, so its job is still there to look at.
    const wf = await createWorkflow(platform, t.alice, { name: 'sleepy', ...SLEEPY_GRAPH });
    const response = await rest(platform, 'POST', `/workflows/${wf.id}/execute`, { input: { order: 7 } }, t.alice.auth);
    expect(response.status).toBe(202);
    const execution = await json(response);
    expect(execution).toMatchObject({ id: expect.stringMatching(/^exe_/), workflowId: wf.id, workspaceId: t.alice.workspaceId, workflowVersion: 1, status: 'queued', mode: 'manual', triggerNodeId: 'start', input: { order: 7 }, cancelRequested: false });
    const job = await t.queue.getJob(execution.id);
    expect(job).toBeTruthy();
    expect(job!.name).toBe(WORKFLOW_JOBS.execute);
    // The job carries the execution (definition and input are small), so its first run reads nothing.
    expect(job!.data).toEqual({ executionId: execution.id, run: expect.objectContaining({ workflowId: execution.workflowId, mode: 'manual', definition: expect.objectContaining({ nodes: expect.any(Array) }) }) });
    const row = await t.pg.query('SELECT workflow_id, definition FROM workflows.executions WHERE id = $1', [execution.id]);
    expect(row.rows[0]).toMatchObject({ workflow_id: wf.id, definition: { nodes: SLEEPY_GRAPH.nodes, connections: SLEEPY_GRAPH.connections } });
  });

  it('with wait answers the finished execution with its steps', async () => {
    const wf = await createWorkflow(platform, t.alice);
    const response = await rest(platform, 'POST', `/workflows/${wf.id}/execute`, { input: { n: 1 }, wait: true, timeoutSeconds: 20 }, t.alice.auth);
    expect(response.status).toBe(202);
    const execution = await json(response);
    expect(execution.status).toBe('succeeded');
    expect(execution.finishedAt).toEqual(expect.any(String));
    expect(execution.steps.map((s: any) => s.nodeId)).toEqual(['start', 'shape']);
    expect(execution.steps.every((s: any) => s.status === 'succeeded')).toBe(true);
  });

  it('rejects a wait longer than 300 seconds', async () => {
    const wf = await createWorkflow(platform, t.alice);
    const response = await rest(platform, 'POST', `/workflows/${wf.id}/execute`, { wait: true, timeoutSeconds: 301 }, t.alice.auth);
    expect(response.status).toBe(400);
    expect((await json(response)).error.details).toMatchObject({ field: 'timeoutSeconds' });
  });

  it('execute-in-memory validates the unsaved definition and runs it in the X-Workspace-ID workspace', async () => {
    const shared = await sharedWorkspace(platform, t.mallory, t.alice, 'member');
    const response = await rest(platform, 'POST', '/workflows/execute-in-memory', { name: 'scratch', ...SLEEPY_GRAPH, input: { x: 1 } }, { ...t.alice.auth, 'x-workspace-id': shared });
    expect(response.status).toBe(202);
    const execution = await json(response);
    expect(execution).toMatchObject({ workflowId: null, workspaceId: shared, mode: 'in_memory', status: 'queued', triggerNodeId: 'start', input: { x: 1 } });
    expect(await t.queue.getJob(execution.id)).toBeTruthy();

    const personal = await json(await rest(platform, 'POST', '/workflows/execute-in-memory', SIMPLE_GRAPH, t.alice.auth));
    expect(personal.workspaceId).toBe(t.alice.workspaceId);

    const invalid = await rest(platform, 'POST', '/workflows/execute-in-memory', { nodes: [{ id: 'q', type: 'unknown-type', name: 'Q', parameters: {} }] }, t.alice.auth);
    expect(invalid.status).toBe(400);
    expect((await json(invalid)).error.details).toMatchObject({ nodeId: 'q', field: 'type' });
  });

  it('in-memory executions are listed, read and cancelled under the workflow id `in-memory`, per workspace', async () => {
    const shared = await sharedWorkspace(platform, t.mallory, t.alice, 'member');
    const inShared = await json(await rest(platform, 'POST', '/workflows/execute-in-memory', SIMPLE_GRAPH, { ...t.alice.auth, 'x-workspace-id': shared }));
    const personal = await json(await rest(platform, 'POST', '/workflows/execute-in-memory', SIMPLE_GRAPH, t.alice.auth));

    const read = await rest(platform, 'GET', `/workflows/in-memory/executions/${inShared.id}`, undefined, t.alice.auth);
    expect(read.status).toBe(200);
    expect(await json(read)).toMatchObject({ id: inShared.id, workflowId: null, workspaceId: shared, mode: 'in_memory' });
    const listed = await json(await rest(platform, 'GET', '/workflows/in-memory/executions', undefined, { ...t.alice.auth, 'x-workspace-id': shared }));
    expect(listed.data.map((e: any) => e.id)).toContain(inShared.id);
    expect(listed.data.map((e: any) => e.id)).not.toContain(personal.id);
    expect(listed.data.every((e: any) => e.workspaceId === shared && e.workflowId === null)).toBe(true);

    // Another workspace's: 404 to read, list or cancel.
    expect((await rest(platform, 'GET', `/workflows/in-memory/executions/${personal.id}`, undefined, t.mallory.auth)).status).toBe(404);
    expect((await rest(platform, 'GET', '/workflows/in-memory/executions', undefined, { ...t.mallory.auth, 'x-workspace-id': t.alice.workspaceId })).status).toBe(404);
    expect((await rest(platform, 'POST', `/workflows/in-memory/executions/${personal.id}/cancel`, undefined, t.mallory.auth)).status).toBe(404);
    // A saved workflow's execution is not an in-memory one.
    const wf = await createWorkflow(platform, t.alice);
    const saved = await json(await rest(platform, 'POST', `/workflows/${wf.id}/execute`, {}, t.alice.auth));
    expect((await rest(platform, 'GET', `/workflows/in-memory/executions/${saved.id}`, undefined, t.alice.auth)).status).toBe(404);
    expect((await rest(platform, 'GET', `/workflows/in-memory/executions/not-an-id`, undefined, t.alice.auth)).status).toBe(404);

    // A waiting one (a 1-hour wait): cancel wakes its delayed job, which ends it cancelled at once.
    const napping = await json(await rest(platform, 'POST', '/workflows/execute-in-memory', SLEEPY_GRAPH, t.alice.auth));
    await eventually(async () => (await json(await rest(platform, 'GET', `/workflows/in-memory/executions/${napping.id}`, undefined, t.alice.auth))).status === 'waiting' || undefined, 10_000, 'the execution to wait');
    const cancelled = await rest(platform, 'POST', `/workflows/in-memory/executions/${napping.id}/cancel`, undefined, t.alice.auth);
    expect(cancelled.status).toBe(200);
    const ended = await eventually(
      async () => {
        const row = await json(await rest(platform, 'GET', `/workflows/in-memory/executions/${napping.id}`, undefined, t.alice.auth));
        return row.status === 'cancelled' ? row : undefined;
      },
      10_000,
      'the waiting execution to be cancelled',
    );
    expect(ended.error).toMatch(/cancel/i);
    // Finished ones: 409 naming the status.
    const finished = await rest(platform, 'POST', `/workflows/in-memory/executions/${napping.id}/cancel`, undefined, t.alice.auth);
    expect(finished.status).toBe(409);
  });
});

describe('executions: list, read, cancel', () => {
  it('lists newest first without steps, filters by status, and reads one with its steps by seq', async () => {
    const wf = await createWorkflow(platform, t.alice);
    const now = Date.now();
    const older = await insertExecution(t.pg, { workflowId: wf.id, workspaceId: t.alice.workspaceId, status: 'succeeded', createdAt: new Date(now - 60_000), durationMs: 40 });
    const newer = await insertExecution(t.pg, { workflowId: wf.id, workspaceId: t.alice.workspaceId, status: 'failed', createdAt: new Date(now - 1000), durationMs: 20 });
    await insertStep(t.pg, { executionId: older, workspaceId: t.alice.workspaceId, nodeId: 'shape', nodeType: 'set', seq: 2, status: 'succeeded', durationMs: 30, output: [[{ json: { greeting: 'hello' } }]] });
    await insertStep(t.pg, { executionId: older, workspaceId: t.alice.workspaceId, nodeId: 'start', nodeType: 'manual-trigger', seq: 1, status: 'succeeded', durationMs: 1 });

    const list = await json(await rest(platform, 'GET', `/workflows/${wf.id}/executions`, undefined, t.alice.auth));
    expect(list).toMatchObject({ total: 2, page: 1, limit: 20 });
    expect(list.data.map((e: any) => e.id)).toEqual([newer, older]);
    expect(list.data[0].steps).toBeNull();
    const failed = await json(await rest(platform, 'GET', `/workflows/${wf.id}/executions?status=failed`, undefined, t.alice.auth));
    expect(failed.data.map((e: any) => e.id)).toEqual([newer]);
    expect((await rest(platform, 'GET', `/workflows/${wf.id}/executions?status=bogus`, undefined, t.alice.auth)).status).toBe(400);

    const one = await json(await rest(platform, 'GET', `/workflows/${wf.id}/executions/${older}`, undefined, t.alice.auth));
    expect(one).toMatchObject({ id: older, status: 'succeeded', durationMs: 40 });
    expect(one.steps).toEqual([
      expect.objectContaining({ nodeId: 'start', nodeType: 'manual-trigger', seq: 1, status: 'succeeded', attempts: 1, durationMs: 1 }),
      expect.objectContaining({ nodeId: 'shape', nodeType: 'set', seq: 2, status: 'succeeded', output: [[{ json: { greeting: 'hello' } }]], durationMs: 30 }),
    ]);
    // An execution of another workflow is not found under this one.
    const otherWf = await createWorkflow(platform, t.alice);
    expect((await rest(platform, 'GET', `/workflows/${otherWf.id}/executions/${older}`, undefined, t.alice.auth)).status).toBe(404);
  });

  it('cancels a queued execution at once and removes its job', async () => {
    const wf = await createWorkflow(platform, t.alice);
    const id = await insertExecution(t.pg, { workflowId: wf.id, workspaceId: t.alice.workspaceId, status: 'queued' });
    // A job that would run in an hour (the worker must not pick it up during the test).
    await t.queue.add(WORKFLOW_JOBS.execute, { executionId: id }, { jobId: id, delay: 3_600_000 });
    expect(await t.queue.getJob(id)).toBeTruthy();

    const response = await rest(platform, 'POST', `/workflows/${wf.id}/executions/${id}/cancel`, undefined, t.alice.auth);
    expect(response.status).toBe(200);
    expect(await json(response)).toMatchObject({ id, status: 'cancelled', cancelRequested: true, finishedAt: expect.any(String) });
    expect(await t.queue.getJob(id)).toBeFalsy();
    expect((await t.pg.query('SELECT status FROM workflows.executions WHERE id = $1', [id])).rows[0].status).toBe('cancelled');
  });

  it('asks a running execution to stop: cancel_requested and a cancel-requested signal', async () => {
    const wf = await createWorkflow(platform, t.alice);
    const id = await insertExecution(t.pg, { workflowId: wf.id, workspaceId: t.alice.workspaceId, status: 'running' });
    const signals: any[] = [];
    const off = pubsub.on(TOPICS.workflowExecution, (payload) => signals.push(payload), id);
    await new Promise((resolve) => setTimeout(resolve, 200));
    try {
      const response = await rest(platform, 'POST', `/workflows/${wf.id}/executions/${id}/cancel`, undefined, t.alice.auth);
      expect(response.status).toBe(200);
      expect(await json(response)).toMatchObject({ id, status: 'running', cancelRequested: true });
      await eventually(() => signals.length > 0, 5000, 'the cancel-requested signal');
      expect(signals[0]).toMatchObject({ type: 'cancel-requested', executionId: id, at: expect.any(String) });
    } finally {
      off();
    }
  });

  it('answers 409 INVALID_STATE naming the status for a finished execution', async () => {
    const wf = await createWorkflow(platform, t.alice);
    const id = await insertExecution(t.pg, { workflowId: wf.id, workspaceId: t.alice.workspaceId, status: 'succeeded', durationMs: 5 });
    const response = await rest(platform, 'POST', `/workflows/${wf.id}/executions/${id}/cancel`, undefined, t.alice.auth);
    expect(response.status).toBe(409);
    const { error } = await json(response);
    expect(error.code).toBe('INVALID_STATE');
    expect(error.message).toContain('succeeded');
  });
});

describe('metrics', () => {
  const T0 = Date.parse('2024-03-01T00:00:00.000Z');
  const at = (minutes: number) => new Date(T0 + minutes * 60_000);
  let wfId: string;

  beforeAll(async () => {
    wfId = (await createWorkflow(platform, t.alice, { name: 'metrics' })).id;
    const ws = t.alice.workspaceId;
    const a = await insertExecution(t.pg, { workflowId: wfId, workspaceId: ws, status: 'succeeded', createdAt: at(10), durationMs: 100 });
    await insertExecution(t.pg, { workflowId: wfId, workspaceId: ws, status: 'succeeded', createdAt: at(20), durationMs: 300 });
    const c = await insertExecution(t.pg, { workflowId: wfId, workspaceId: ws, status: 'failed', createdAt: at(70), durationMs: 1000 });
    await insertExecution(t.pg, { workflowId: wfId, workspaceId: ws, status: 'running', createdAt: at(80) });
    await insertExecution(t.pg, { workflowId: wfId, workspaceId: ws, status: 'cancelled', createdAt: at(130), durationMs: 200 });
    await insertExecution(t.pg, { workflowId: wfId, workspaceId: ws, status: 'succeeded', createdAt: at(-60), durationMs: 5 }); // outside the window
    for (const [exe, failed] of [[a, false], [c, true]] as const) {
      await insertStep(t.pg, { executionId: exe, workspaceId: ws, nodeId: 'start', nodeType: 'manual-trigger', seq: 1, status: 'succeeded', durationMs: 5 });
      await insertStep(t.pg, { executionId: exe, workspaceId: ws, nodeId: 'shape', nodeType: 'set', seq: 2, status: failed ? 'failed' : 'succeeded', durationMs: failed ? 900 : 50 });
    }
  });

  it('counts by status, success rate and duration percentiles, per node too', async () => {
    const response = await rest(platform, 'GET', `/workflows/${wfId}/metrics?from=${at(0).toISOString()}&to=${at(180).toISOString()}`, undefined, t.alice.auth);
    expect(response.status).toBe(200);
    const m = await json(response);
    expect(m).toMatchObject({
      from: at(0).toISOString(),
      to: at(180).toISOString(),
      total: 5,
      byStatus: { queued: 0, running: 1, waiting: 0, succeeded: 2, failed: 1, cancelled: 1 },
      successRate: 0.5,
      durationP50Ms: 250,
    });
    expect(m.durationP95Ms).toBeCloseTo(895, 5);
    expect(m.nodes).toEqual([
      { nodeId: 'shape', nodeType: 'set', runs: 2, failures: 1, durationP50Ms: 475, durationP95Ms: expect.closeTo(857.5, 5) },
      { nodeId: 'start', nodeType: 'manual-trigger', runs: 2, failures: 0, durationP50Ms: 5, durationP95Ms: 5 },
    ]);
    expect((await rest(platform, 'GET', `/workflows/${wfId}/metrics?from=nonsense`, undefined, t.alice.auth)).status).toBe(400);
  });

  it('buckets a timeseries, empty buckets included, and refuses more than 1000 buckets', async () => {
    const response = await rest(platform, 'GET', `/workflows/${wfId}/metrics/timeseries?from=${at(0).toISOString()}&to=${at(240).toISOString()}&interval=1h`, undefined, t.alice.auth);
    expect(response.status).toBe(200);
    const series = await json(response);
    expect(series.interval).toBe('1h');
    expect(series.buckets).toEqual([
      { at: at(0).toISOString(), total: 2, succeeded: 2, failed: 0, cancelled: 0, durationP50Ms: 200 },
      { at: at(60).toISOString(), total: 2, succeeded: 0, failed: 1, cancelled: 0, durationP50Ms: 1000 },
      { at: at(120).toISOString(), total: 1, succeeded: 0, failed: 0, cancelled: 1, durationP50Ms: 200 },
      { at: at(180).toISOString(), total: 0, succeeded: 0, failed: 0, cancelled: 0, durationP50Ms: null },
    ]);
    const tooMany = await rest(platform, 'GET', `/workflows/${wfId}/metrics/timeseries?from=${at(0).toISOString()}&to=${at(60 * 24 * 2).toISOString()}&interval=1m`, undefined, t.alice.auth);
    expect(tooMany.status).toBe(400);
    expect((await json(tooMany)).error.details).toMatchObject({ field: 'interval' });
    expect((await rest(platform, 'GET', `/workflows/${wfId}/metrics/timeseries?interval=2h`, undefined, t.alice.auth)).status).toBe(400);
  });
});

describe('workflowExecutionEvents subscription', () => {
  it('relays a status event to a reader and refuses another workspace', async () => {
    const wf = await createWorkflow(platform, t.alice);
    const id = await insertExecution(t.pg, { workflowId: wf.id, workspaceId: t.alice.workspaceId, status: 'running' });
    const query = 'subscription($id: ID!) { workflowExecutionEvents(executionId: $id) { type executionId status nodeId at } }';

    const client = createClient({ url: platform.wsUrl, webSocketImpl: WebSocket, connectionParams: { authorization: t.alice.auth.authorization }, retryAttempts: 0, lazy: false });
    wsClients.push(client);
    const events: any[] = [];
    const done = new Promise<void>((resolve, reject) => {
      client.subscribe({ query, variables: { id } }, { next: (v) => events.push(v), error: reject, complete: resolve });
    });
    await eventually(() => (platform.subgraphs.workflows?.openSockets() ?? 0) >= 1, 5000, 'the upstream subscription');
    await new Promise((resolve) => setTimeout(resolve, 300));
    pubsub.publish(TOPICS.workflowExecution, { type: 'step', executionId: id, nodeId: 'shape', nodeType: 'set', status: 'succeeded', durationMs: 3, at: new Date().toISOString() }, id);
    pubsub.publish(TOPICS.workflowExecution, { type: 'status', executionId: id, status: 'succeeded', at: new Date().toISOString() }, id);
    await done;
    expect(events.map((e) => e.data.workflowExecutionEvents)).toEqual([
      expect.objectContaining({ type: 'step', executionId: id, nodeId: 'shape', status: 'succeeded' }),
      expect.objectContaining({ type: 'status', executionId: id, status: 'succeeded', nodeId: null }),
    ]);

    const eve = createClient({ url: platform.wsUrl, webSocketImpl: WebSocket, connectionParams: { authorization: t.mallory.auth.authorization }, retryAttempts: 0, lazy: false });
    wsClients.push(eve);
    const refused = await new Promise<any>((resolve) => {
      eve.subscribe({ query, variables: { id } }, { next: (v) => resolve(v), error: (e) => resolve({ error: e }), complete: () => resolve({ completed: true }) });
    });
    expect(JSON.stringify(refused)).toContain('NOT_FOUND');
  });
});

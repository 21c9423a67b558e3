import { createHmac } from 'node:crypto';
import { WORKFLOW_JOBS } from '../../core/queues';
import { startTestPlatform, type TestPlatform } from '../harness';
import { rest } from '../helpers';
import { eventually } from '../services';
import { SIMPLE_GRAPH, TRIGGER_GRAPH, createWorkflow, json, setUpWorkflowTest, sharedWorkspace, type WorkflowTestEnv } from './api-support';

jest.setTimeout(60_000);

let platform: TestPlatform;
let t: WorkflowTestEnv;

beforeAll(async () => {
  platform = await startTestPlatform({ env: { PUBLIC_URL: 'https://platform.example.com', WORKFLOW_TRUSTED_PLUGINS: '' } });
  t = await setUpWorkflowTest(platform, 'wfapi');
});

afterAll(async () => {
  await t?.close();
  await platform?.stop();
});

describe('workflow CRUD over REST', () => {
  it('creates (201), reads, lists, updates (version bump) and deletes a workflow', async () => {
    const created = await createWorkflow(platform, t.alice, { name: 'First', description: 'does things', settings: { timeoutSeconds: 60 } });
    expect(created).toMatchObject({
      id: expect.stringMatching(/^wf_/),
      workspaceId: t.alice.workspaceId,
      name: 'First',
      description: 'does things',
      nodes: SIMPLE_GRAPH.nodes,
      connections: SIMPLE_GRAPH.connections,
      settings: { timeoutSeconds: 60 },
      version: 1,
      deployed: false,
      deployedAt: null,
      webhookEndpoints: [],
    });

    const read = await rest(platform, 'GET', `/workflows/${created.id}`, undefined, t.alice.auth);
    expect(read.status).toBe(200);
    expect(await json(read)).toEqual(created);

    const list = await json(await rest(platform, 'GET', '/workflows', undefined, t.alice.auth));
    expect(list).toMatchObject({ total: 1, page: 1, limit: 20 });
    expect(list.data.map((w: any) => w.id)).toEqual([created.id]);

    const updated = await rest(platform, 'PUT', `/workflows/${created.id}`, { name: 'Renamed', nodes: [{ ...SIMPLE_GRAPH.nodes[0] }], connections: [] }, t.alice.auth);
    expect(updated.status).toBe(200);
    expect(await json(updated)).toMatchObject({ name: 'Renamed', description: 'does things', version: 2, nodes: [SIMPLE_GRAPH.nodes[0]], connections: [], settings: { timeoutSeconds: 60 } });

    const deleted = await rest(platform, 'DELETE', `/workflows/${created.id}`, undefined, t.alice.auth);
    expect(deleted.status).toBe(200);
    expect(await json(deleted)).toEqual({ id: created.id, deleted: true });
    expect((await rest(platform, 'GET', `/workflows/${created.id}`, undefined, t.alice.auth)).status).toBe(404);
  });

  it('answers 400 naming the node and field: unknown type, bad parameters, a cycle, bad shapes', async () => {
    const post = async (body: Record<string, unknown>) => {
      const response = await rest(platform, 'POST', '/workflows', { name: 'bad', ...body }, t.alice.auth);
      expect(response.status).toBe(400);
      return (await json(response)).error;
    };

    const unknownType = await post({ nodes: [{ id: 'n1', type: 'no-such-node', name: 'N', parameters: {} }] });
    expect(unknownType).toMatchObject({ code: 'VALIDATION_FAILED', details: { nodeId: 'n1', field: 'type' } });
    expect(unknownType.message).toContain('n1');

    const badParameters = await post({ nodes: [{ id: 'fetch', type: 'http-request', name: 'Fetch', parameters: { url: 42 } }] });
    expect(badParameters).toMatchObject({ code: 'VALIDATION_FAILED', details: { nodeId: 'fetch', field: expect.stringContaining('parameters') } });
    expect(badParameters.message).toMatch(/fetch|Fetch/);

    const cycle = await post({
      nodes: [
        { id: 'a', type: 'set', name: 'A', parameters: { values: {} } },
        { id: 'b', type: 'set', name: 'B', parameters: { values: {} } },
      ],
      connections: [
        { from: 'a', to: 'b' },
        { from: 'b', to: 'a' },
      ],
    });
    expect(cycle).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'connections' } });
    expect(cycle.message).toMatch(/cycle/);

    expect(await post({ nodes: { id: 'x' } })).toMatchObject({ details: { field: 'nodes' } });
    expect(await post({ nodes: [{ id: 'p', type: 'set', name: 'P', parameters: [] }] })).toMatchObject({ details: { nodeId: 'p', field: 'parameters' } });
    expect(await post({ nodes: [{ id: 'p', type: 'set', name: 'P', parameters: { values: {} }, position: { x: 'left' } }] })).toMatchObject({ details: { nodeId: 'p', field: 'position' } });
    expect(await post({ ...SIMPLE_GRAPH, connections: [{ from: 'start' }] })).toMatchObject({ details: { field: 'connections[0].to' } });
    expect(await post({ ...SIMPLE_GRAPH, name: '' })).toMatchObject({ details: { field: 'name' } });

    // The same checks on update; the stored workflow is untouched.
    const wf = await createWorkflow(platform, t.alice);
    const put = await rest(platform, 'PUT', `/workflows/${wf.id}`, { nodes: [{ id: 'z', type: 'nope', name: 'Z', parameters: {} }] }, t.alice.auth);
    expect(put.status).toBe(400);
    expect((await json(put)).error.details).toMatchObject({ nodeId: 'z', field: 'type' });
    expect((await json(await rest(platform, 'GET', `/workflows/${wf.id}`, undefined, t.alice.auth))).version).toBe(1);
  });

  it('selects the workspace: argument, else X-Workspace-ID, else the personal one', async () => {
    const other = await sharedWorkspace(platform, t.alice, t.mallory, 'viewer');
    const byHeader = await rest(platform, 'POST', '/workflows', { name: 'in shared', ...SIMPLE_GRAPH }, { ...t.alice.auth, 'x-workspace-id': other });
    expect(byHeader.status).toBe(201);
    const created = await json(byHeader);
    expect(created.workspaceId).toBe(other);

    const listed = await json(await rest(platform, 'GET', '/workflows', undefined, { ...t.alice.auth, 'x-workspace-id': other }));
    expect(listed.data.map((w: any) => w.id)).toEqual([created.id]);
    const personal = await json(await rest(platform, 'GET', '/workflows', undefined, t.alice.auth));
    expect(personal.data.map((w: any) => w.id)).not.toContain(created.id);
    const byArg = await json(await rest(platform, 'GET', `/workflows?workspaceId=${other}`, undefined, { ...t.alice.auth, 'x-workspace-id': t.alice.workspaceId }));
    expect(byArg.data.map((w: any) => w.id)).toEqual([created.id]);

    // A viewer reads but may not write or execute.
    expect((await rest(platform, 'GET', `/workflows/${created.id}`, undefined, t.mallory.auth)).status).toBe(200);
    expect((await rest(platform, 'PUT', `/workflows/${created.id}`, { name: 'mine' }, t.mallory.auth)).status).toBe(403);
    expect((await rest(platform, 'POST', `/workflows/${created.id}/execute`, {}, t.mallory.auth)).status).toBe(403);
    expect((await rest(platform, 'POST', '/workflows', { name: 'x', ...SIMPLE_GRAPH }, { ...t.mallory.auth, 'x-workspace-id': other })).status).toBe(403);
  });
});

describe('deploy and undeploy', () => {
  it('a webhook answers right after deploy and stops right after undeploy (no stale cache)', async () => {
    const wf = await createWorkflow(platform, t.alice, {
      name: 'toggle',
      nodes: [
        { id: 'hook', type: 'webhook', name: 'Hook', parameters: { method: 'POST', respond: 'immediately' } },
        { id: 'shape', type: 'set', name: 'Shape', parameters: { values: { ok: true } } },
      ],
      connections: [{ from: 'hook', to: 'shape' }],
    });
    const hook = () => fetch(`${platform.baseUrl}/v1/webhooks/v1/${wf.id}/hook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect((await hook()).status).toBe(404);
    await rest(platform, 'POST', `/workflows/${wf.id}/deploy`, undefined, t.alice.auth);
    expect((await hook()).status).toBe(202);
    await rest(platform, 'POST', `/workflows/${wf.id}/undeploy`, undefined, t.alice.auth);
    // Well within the registration cache's 3 s lifetime: the undeploy answered only once the
    // invalidation was on its way to every process, so the very next call is refused.
    expect((await hook()).status).toBe(404);
    await rest(platform, 'POST', `/workflows/${wf.id}/deploy`, undefined, t.alice.auth);
    expect((await hook()).status).toBe(202);
  });

  it('registers webhook rows and job schedulers, lists webhookEndpoints, and removes them again', async () => {
    const wf = await createWorkflow(platform, t.alice, { name: 'triggers', ...TRIGGER_GRAPH });
    const deployed = await rest(platform, 'POST', `/workflows/${wf.id}/deploy`, undefined, t.alice.auth);
    expect(deployed.status).toBe(200);
    const body = await json(deployed);
    expect(body).toMatchObject({ deployed: true, deployedAt: expect.any(String) });
    expect(body.webhookEndpoints).toEqual([
      { nodeId: 'hook', method: 'POST', path: `/v1/webhooks/v1/${wf.id}/hook/orders/new`, url: `https://platform.example.com/v1/webhooks/v1/${wf.id}/hook/orders/new`, auth: 'header', respond: 'lastNode' },
      { nodeId: 'plain', method: 'POST', path: `/v1/webhooks/v1/${wf.id}/plain`, url: `https://platform.example.com/v1/webhooks/v1/${wf.id}/plain`, auth: 'none', respond: 'lastNode' },
    ]);
    expect((await json(await rest(platform, 'GET', `/workflows/${wf.id}`, undefined, t.alice.auth))).webhookEndpoints).toHaveLength(2);

    const rows = await t.pg.query('SELECT node_id, method, workspace_id FROM workflows.webhook_registrations WHERE workflow_id = $1 ORDER BY node_id', [wf.id]);
    expect(rows.rows).toEqual([
      { node_id: 'hook', method: 'POST', workspace_id: t.alice.workspaceId },
      { node_id: 'plain', method: 'POST', workspace_id: t.alice.workspaceId },
    ]);
    const scheduler = await t.queue.getJobScheduler(`wf-${wf.id}-tick`);
    expect(scheduler).toMatchObject({ pattern: '*/5 * * * *', tz: 'Europe/Berlin', template: { data: { workflowId: wf.id, nodeId: 'tick' } } });
    expect(scheduler!.name).toBe(WORKFLOW_JOBS.scheduled);

    // Idempotent: deploying again keeps one of each.
    const again = await json(await rest(platform, 'POST', `/workflows/${wf.id}/deploy`, undefined, t.alice.auth));
    expect(again.deployedAt).toBe(body.deployedAt);
    expect((await t.pg.query('SELECT 1 FROM workflows.webhook_registrations WHERE workflow_id = $1', [wf.id])).rowCount).toBe(2);
    expect((await t.queue.getJobSchedulers()).filter((s) => s.key === `wf-${wf.id}-tick` || s.id === `wf-${wf.id}-tick`)).toHaveLength(1);

    // An update of a deployed workflow re-registers: the plain webhook and the schedule go away.
    const updated = await json(await rest(platform, 'PUT', `/workflows/${wf.id}`, { nodes: [TRIGGER_GRAPH.nodes[0], TRIGGER_GRAPH.nodes[3]], connections: [{ from: 'hook', to: 'shape' }] }, t.alice.auth));
    expect(updated.webhookEndpoints.map((e: any) => e.nodeId)).toEqual(['hook']);
    expect((await t.pg.query('SELECT node_id FROM workflows.webhook_registrations WHERE workflow_id = $1', [wf.id])).rows).toEqual([{ node_id: 'hook' }]);
    expect(await t.queue.getJobScheduler(`wf-${wf.id}-tick`)).toBeFalsy();
    await rest(platform, 'PUT', `/workflows/${wf.id}`, { nodes: TRIGGER_GRAPH.nodes, connections: TRIGGER_GRAPH.connections }, t.alice.auth);
    expect(await t.queue.getJobScheduler(`wf-${wf.id}-tick`)).toBeTruthy();

    const undeployed = await rest(platform, 'POST', `/workflows/${wf.id}/undeploy`, undefined, t.alice.auth);
    expect(undeployed.status).toBe(200);
    expect(await json(undeployed)).toMatchObject({ deployed: false, deployedAt: null, webhookEndpoints: [] });
    expect((await t.pg.query('SELECT 1 FROM workflows.webhook_registrations WHERE workflow_id = $1', [wf.id])).rowCount).toBe(0);
    expect(await t.queue.getJobScheduler(`wf-${wf.id}-tick`)).toBeFalsy();
  });

  it('deleting a deployed workflow undeploys it first', async () => {
    const wf = await createWorkflow(platform, t.alice, { name: 'doomed', ...TRIGGER_GRAPH });
    await rest(platform, 'POST', `/workflows/${wf.id}/deploy`, undefined, t.alice.auth);
    expect(await t.queue.getJobScheduler(`wf-${wf.id}-tick`)).toBeTruthy();
    expect((await rest(platform, 'DELETE', `/workflows/${wf.id}`, undefined, t.alice.auth)).status).toBe(200);
    expect(await t.queue.getJobScheduler(`wf-${wf.id}-tick`)).toBeFalsy();
    expect((await t.pg.query('SELECT 1 FROM workflows.webhook_registrations WHERE workflow_id = $1', [wf.id])).rowCount).toBe(0);
  });
});

describe('secret parameters (webhook auth)', () => {
  const PLACEHOLDER = '<secret: stored, not shown>';
  const hookNode = (auth: Record<string, unknown>, method = 'POST') => ({ id: 'hook', type: 'webhook', name: 'Hook', parameters: { method, respond: 'immediately', auth } });
  const hook = (id: string, headers: Record<string, string>, method = 'POST', body = '{}') =>
    fetch(`${platform.baseUrl}/v1/webhooks/v1/${id}/hook`, { method, headers: { 'content-type': 'application/json', ...headers }, body });
  const signed = (secret: string, body: string) => ({ 'x-signature': createHmac('sha256', secret).update(body).digest('hex') });
  const stored = async (id: string) => (await t.pg.query('SELECT nodes FROM workflows.workflows WHERE id = $1', [id])).rows[0].nodes;
  const deploy = async (id: string) => expect((await rest(platform, 'POST', `/workflows/${id}/deploy`, undefined, t.alice.auth)).status).toBe(200);

  it('never shows a stored secret: create, read, list and deploy answer a placeholder; the definition marks it writeOnly', async () => {
    const wf = await createWorkflow(platform, t.alice, { name: 'secretive', nodes: [hookNode({ type: 'header', name: 'x-token', value: 'hunter2' })], connections: [] });
    expect(wf.nodes[0].parameters.auth).toEqual({ type: 'header', name: 'x-token', value: PLACEHOLDER });
    const answers = [
      await json(await rest(platform, 'GET', `/workflows/${wf.id}`, undefined, t.alice.auth)),
      (await json(await rest(platform, 'GET', '/workflows?limit=100', undefined, t.alice.auth))).data.find((w: any) => w.id === wf.id),
      await json(await rest(platform, 'POST', `/workflows/${wf.id}/deploy`, undefined, t.alice.auth)),
    ];
    for (const answer of answers) {
      expect(JSON.stringify(answer)).not.toContain('hunter2');
      expect(answer.nodes[0].parameters.auth.value).toBe(PLACEHOLDER);
    }
    expect((await hook(wf.id, { 'x-token': 'hunter2' })).status).toBe(202);
    expect((await hook(wf.id, { 'x-token': 'hunter3' })).status).toBe(403);

    const definition = await json(await rest(platform, 'GET', '/workflows/node-definitions/webhook', undefined, t.alice.auth));
    const branches = definition.parametersSchema.properties.auth.oneOf;
    expect(branches.find((b: any) => b.properties.type.const === 'header').properties.value.writeOnly).toBe(true);
    expect(branches.find((b: any) => b.properties.type.const === 'hmac').properties.secret.writeOnly).toBe(true);
  });

  it('stores secrets sealed, in the workflow and in its executions\' snapshots, and a sealed value copied to another workflow does not open', async () => {
    const wf = await createWorkflow(platform, t.alice, { name: 'sealed', nodes: [hookNode({ type: 'header', name: 'x-token', value: 'open-sesame' })], connections: [] });
    const value = (await stored(wf.id))[0].parameters.auth.value;
    expect(value).toMatch(/^sealed:v1\./);
    expect(value).not.toContain('open-sesame');
    await deploy(wf.id);
    const answer = await hook(wf.id, { 'x-token': 'open-sesame' });
    expect(answer.status).toBe(202);
    const { executionId } = await json(answer);
    const execution = (await t.pg.query('SELECT definition::text AS definition, input::text AS input FROM workflows.executions WHERE id = $1', [executionId])).rows[0];
    expect(execution.definition).not.toContain('open-sesame');
    expect(execution.input).not.toContain('open-sesame');

    // The same sealed text put into another workflow (straight into the table): it opens for no one.
    const other = await createWorkflow(platform, t.alice, { name: 'copy', nodes: [hookNode({ type: 'header', name: 'x-token', value: 'something-else' })], connections: [] });
    await t.pg.query(`UPDATE workflows.workflows SET nodes = jsonb_set(nodes, '{0,parameters,auth,value}', to_jsonb($2::text)) WHERE id = $1`, [other.id, value]);
    await deploy(other.id);
    expect((await hook(other.id, { 'x-token': 'open-sesame' })).status).toBe(403);
    // Setting it again puts it right.
    const reset = await rest(platform, 'PUT', `/workflows/${other.id}`, { nodes: [hookNode({ type: 'header', name: 'x-token', value: 'fresh' })], connections: [] }, t.alice.auth);
    expect(reset.status).toBe(200);
    await eventually(async () => (await hook(other.id, { 'x-token': 'fresh' })).status === 202, 10_000, 'the new secret to be in effect');
  });

  it('keeps the stored secret when the placeholder comes back in an update, and takes a new one when sent', async () => {
    const wf = await createWorkflow(platform, t.alice, { name: 'round trip', nodes: [hookNode({ type: 'hmac', secret: 'k3y' })], connections: [] });
    await deploy(wf.id);
    const read = await json(await rest(platform, 'GET', `/workflows/${wf.id}`, undefined, t.alice.auth));
    // The client saves what it read, with another name and another method.
    read.nodes[0].parameters.method = 'PUT';
    const saved = await rest(platform, 'PUT', `/workflows/${wf.id}`, { name: 'renamed', nodes: read.nodes, connections: read.connections }, t.alice.auth);
    expect(saved.status).toBe(200);
    expect((await json(saved)).nodes[0].parameters).toMatchObject({ method: 'PUT', auth: { type: 'hmac', secret: PLACEHOLDER } });
    await eventually(async () => (await hook(wf.id, signed('k3y', '{"a":1}'), 'PUT', '{"a":1}')).status === 202, 10_000, 'the PUT webhook with the kept secret');

    // A rename alone (no nodes) keeps it too.
    expect((await rest(platform, 'PUT', `/workflows/${wf.id}`, { name: 'renamed again' }, t.alice.auth)).status).toBe(200);
    expect((await hook(wf.id, signed('k3y', '{}'), 'PUT')).status).toBe(202);

    const rotated = await rest(platform, 'PUT', `/workflows/${wf.id}`, { nodes: [hookNode({ type: 'hmac', secret: 'n3w' }, 'PUT')], connections: [] }, t.alice.auth);
    expect(rotated.status).toBe(200);
    await eventually(async () => (await hook(wf.id, signed('n3w', '{}'), 'PUT')).status === 202, 10_000, 'the rotated secret');
    expect((await hook(wf.id, signed('k3y', '{}'), 'PUT')).status).toBe(403);
  });

  it('refuses a placeholder with nothing stored behind it (400 naming the node and field), and stores nothing', async () => {
    const created = await rest(platform, 'POST', '/workflows', { name: 'no secret', nodes: [hookNode({ type: 'header', name: 'x-token', value: PLACEHOLDER })], connections: [] }, t.alice.auth);
    expect(created.status).toBe(400);
    expect((await json(created)).error).toMatchObject({ code: 'VALIDATION_FAILED', details: { nodeId: 'hook', field: 'parameters.auth.value' } });

    const wf = await createWorkflow(platform, t.alice, { name: 'switching', nodes: [hookNode({ type: 'header', name: 'x-token', value: 'abc' })], connections: [] });
    const before = await stored(wf.id);
    // Another auth type at the same node: no stored secret at auth.secret.
    const switched = await rest(platform, 'PUT', `/workflows/${wf.id}`, { nodes: [hookNode({ type: 'hmac', secret: PLACEHOLDER })], connections: [] }, t.alice.auth);
    expect(switched.status).toBe(400);
    expect((await json(switched)).error.details).toMatchObject({ nodeId: 'hook', field: 'parameters.auth.secret' });
    // A new node id cannot borrow another node's secret.
    const renamed = await rest(platform, 'PUT', `/workflows/${wf.id}`, { nodes: [{ ...hookNode({ type: 'header', name: 'x-token', value: PLACEHOLDER }), id: 'other' }], connections: [] }, t.alice.auth);
    expect(renamed.status).toBe(400);
    expect(await stored(wf.id)).toEqual(before);
  });
});

describe('another workspace\'s workflow', () => {
  it('is 404 on every route', async () => {
    const wf = await createWorkflow(platform, t.alice, { name: 'private' });
    const exe = 'exe_doesnotmatter000000';
    const calls: Array<[string, string, unknown?]> = [
      ['GET', `/workflows/${wf.id}`],
      ['PUT', `/workflows/${wf.id}`, { name: 'x' }],
      ['DELETE', `/workflows/${wf.id}`],
      ['POST', `/workflows/${wf.id}/deploy`],
      ['POST', `/workflows/${wf.id}/undeploy`],
      ['POST', `/workflows/${wf.id}/execute`, {}],
      ['GET', `/workflows/${wf.id}/executions`],
      ['GET', `/workflows/${wf.id}/executions/${exe}`],
      ['POST', `/workflows/${wf.id}/executions/${exe}/cancel`],
      ['GET', `/workflows/${wf.id}/metrics`],
      ['GET', `/workflows/${wf.id}/metrics/timeseries`],
    ];
    for (const [method, path, body] of calls) {
      const response = await rest(platform, method, path, body, t.mallory.auth);
      expect({ route: `${method} ${path}`, status: response.status }).toEqual({ route: `${method} ${path}`, status: 404 });
      expect((await json(response)).error.code).toBe('NOT_FOUND');
    }
    // The list of mallory's workspace does not show it; naming alice's workspace is 404 too.
    expect((await json(await rest(platform, 'GET', '/workflows', undefined, t.mallory.auth))).data.map((w: any) => w.id)).not.toContain(wf.id);
    expect((await rest(platform, 'GET', '/workflows', undefined, { ...t.mallory.auth, 'x-workspace-id': t.alice.workspaceId })).status).toBe(404);
    expect((await rest(platform, 'POST', '/workflows/execute-in-memory', SIMPLE_GRAPH, { ...t.mallory.auth, 'x-workspace-id': t.alice.workspaceId })).status).toBe(404);
    // Still there, unchanged.
    expect((await json(await rest(platform, 'GET', `/workflows/${wf.id}`, undefined, t.alice.auth))).name).toBe('private');
  });
});

describe('node definitions and plugins', () => {
  it('lists the registry\'s definitions with their JSON Schemas, one by type, 404 for an unknown type', async () => {
    const list = await rest(platform, 'GET', '/workflows/node-definitions', undefined, t.mallory.auth);
    expect(list.status).toBe(200);
    const definitions = await json(list);
    const types = definitions.map((d: any) => d.type);
    expect(types).toEqual(expect.arrayContaining(['manual-trigger', 'webhook', 'schedule', 'set', 'http-request', 'code', 'if']));
    const webhook = definitions.find((d: any) => d.type === 'webhook');
    expect(webhook).toMatchObject({ group: 'trigger', trigger: 'webhook', inputs: 0, parametersSchema: { type: 'object' } });

    const one = await rest(platform, 'GET', '/workflows/node-definitions/http-request', undefined, t.alice.auth);
    expect(one.status).toBe(200);
    expect(await json(one)).toMatchObject({ type: 'http-request', parametersSchema: { properties: { url: expect.any(Object) } } });
    const missing = await rest(platform, 'GET', '/workflows/node-definitions/no-such-node', undefined, t.alice.auth);
    expect(missing.status).toBe(404);
    expect((await rest(platform, 'GET', '/workflows/node-definitions')).status).toBe(401);
  });

  it('lists trusted plugins (none configured here)', async () => {
    const response = await rest(platform, 'GET', '/workflows/plugins/trusted', undefined, t.alice.auth);
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual([]);
  });
});

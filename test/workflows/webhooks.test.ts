import { createHmac } from 'node:crypto';
import { ID_PREFIX, newId } from '../../core/ids';
import type { WorkflowConnection, WorkflowNode } from '../../subgraphs/workflows/model/entities';
import { startTestPlatform, type TestPlatform } from '../harness';
import { eventually } from '../services';

const WORKSPACE = 'ws_webhooktest';
const node = (id: string, type: string, parameters: Record<string, unknown> = {}): WorkflowNode => ({ id, type, name: id, parameters });
const chain = (...ids: string[]): WorkflowConnection[] => ids.slice(1).map((to, i) => ({ from: ids[i], to }));

describe('workflow webhooks through the edge', () => {
  let platform: TestPlatform;
  const db = () => platform.subgraphs.workflows!.dataSource!;

  /** A deployed workflow with its webhook registration, as deploy leaves it. */
  async function deploy(nodes: WorkflowNode[], connections: WorkflowConnection[], deployed = true): Promise<string> {
    const id = newId(ID_PREFIX.workflow);
    await db().query(
      `INSERT INTO workflows.workflows (id, workspace_id, name, nodes, connections, settings, deployed, deployed_at) VALUES ($1, $2, 'webhook test', $3, $4, '{}', $5, now())`,
      [id, WORKSPACE, JSON.stringify(nodes), JSON.stringify(connections), deployed],
    );
    for (const n of nodes.filter((n) => n.type === 'webhook')) {
      if (deployed) await db().query(`INSERT INTO workflows.webhook_registrations (workflow_id, node_id, workspace_id, method) VALUES ($1, $2, $3, $4)`, [id, n.id, WORKSPACE, String(n.parameters.method ?? 'POST').toUpperCase()]);
    }
    return id;
  }

  const call = (path: string, init: RequestInit = {}) => fetch(`${platform.baseUrl}/v1/webhooks/v1/${path}`, init);
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    call(path, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } });

  beforeAll(async () => {
    platform = await startTestPlatform({ services: ['workflows', 'gateway', 'worker'], env: { WORKFLOW_WEBHOOK_MAX_BODY_BYTES: '2048' } });
  });

  afterAll(async () => {
    await platform?.stop();
  });

  it('answers the caller from a respond-to-webhook node (status, headers, body) after 3 nodes', async () => {
    const id = await deploy(
      [
        node('hook', 'webhook', { method: 'POST', respond: 'respondNode' }),
        node('set', 'set', { values: { total: '{{ $json.body.a }}' } }),
        node('check', 'if', { conditions: [{ left: '{{ $json.total }}', operator: 'gt', right: 2 }] }),
        node('answer', 'respond-to-webhook', { status: 201, headers: { 'x-answer': 'yes' }, body: { total: '{{ $json.total }}', big: true } }),
      ],
      chain('hook', 'set', 'check', 'answer'),
    );
    const res = await post(`${id}/hook`, { a: 5, b: 3 });
    expect(res.status).toBe(201);
    expect(res.headers.get('x-answer')).toBe('yes');
    const executionId = res.headers.get('x-execution-id')!;
    expect(await res.json()).toEqual({ total: 5, big: true });
    const exe = await eventually(async () => ((await db().query(`SELECT * FROM workflows.executions WHERE id = $1 AND status = 'succeeded'`, [executionId])) as any[])[0], 10_000, 'the execution');
    expect(exe.mode).toBe('webhook');
    expect(exe.trigger_node_id).toBe('hook');
    expect(exe.input).toMatchObject({ body: { a: 5, b: 3 }, method: 'POST', path: '', query: {} });
    expect(exe.input.headers['content-type']).toBe('application/json');
  });

  it('answers 202 with the execution id when set to respond immediately', async () => {
    const id = await deploy([node('hook', 'webhook', { method: 'POST', respond: 'immediately' }), node('set', 'set', { values: { x: 1 } })], chain('hook', 'set'));
    const res = await post(`${id}/hook`, { hello: 'world' });
    expect(res.status).toBe(202);
    const { executionId } = (await res.json()) as { executionId: string };
    expect(executionId).toMatch(/^exe/);
    await eventually(async () => ((await db().query(`SELECT 1 FROM workflows.executions WHERE id = $1 AND status = 'succeeded'`, [executionId])) as any[]).length > 0, 10_000, 'the execution');
  });

  it('answers with the last node\'s first item (lastNode) and its response code; methods, query, tail paths', async () => {
    const id = await deploy(
      [node('hook', 'webhook', { method: '*', respond: 'lastNode', responseCode: 200 }), node('echo', 'set', { values: { method: '{{ $json.method }}', tail: '{{ $json.path }}', q: '{{ $json.query.q }}' }, keepOnlySet: true })],
      chain('hook', 'echo'),
    );
    for (const method of ['GET', 'PUT', 'DELETE', 'POST']) {
      const res = await call(`${id}/hook/some/tail?q=${method.toLowerCase()}`, { method });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ method, tail: 'some/tail', q: method.toLowerCase() });
    }

    // A node bound to one method and one path suffix: anything else is 404.
    const only = await deploy([node('hook', 'webhook', { method: 'PUT', path: 'orders/new', respond: 'lastNode', responseCode: 200 }), node('ok', 'set', { values: { ok: true }, keepOnlySet: true })], chain('hook', 'ok'));
    expect((await call(`${only}/hook/orders/new`, { method: 'PUT' })).status).toBe(200);
    expect((await call(`${only}/hook/orders/new`, { method: 'GET' })).status).toBe(404);
    expect((await call(`${only}/hook/orders/old`, { method: 'PUT' })).status).toBe(404);
    expect((await call(`${only}/hook`, { method: 'PUT' })).status).toBe(404);
  });

  it('answers 500 with the error when the execution fails', async () => {
    const id = await deploy([node('hook', 'webhook', { method: 'POST' }), node('boom', 'code', { code: 'throw new Error("nope")' })], chain('hook', 'boom'));
    const res = await post(`${id}/hook`, {});
    expect(res.status).toBe(500);
    expect(JSON.stringify(await res.json())).toMatch(/nope/);
  });

  it('checks header auth: good, bad (403), missing (401)', async () => {
    const id = await deploy([node('hook', 'webhook', { method: 'POST', respond: 'immediately', auth: { type: 'header', name: 'X-Token', value: 's3cret' } })], []);
    const good = await post(`${id}/hook`, {}, { 'x-token': 's3cret' });
    expect(good.status).toBe(202);
    // The graph, and whoever reads the execution, sees that the header came, not the secret.
    const { executionId } = (await good.json()) as { executionId: string };
    const input = await eventually(async () => ((await db().query(`SELECT input FROM workflows.executions WHERE id = $1`, [executionId])) as any[])[0]?.input, 10_000, 'the execution');
    expect(input.headers['x-token']).toBe('<secret: stored, not shown>');
    expect(JSON.stringify(input)).not.toContain('s3cret');
    const bad = await post(`${id}/hook`, {}, { 'x-token': 'nope' });
    expect(bad.status).toBe(403);
    expect(((await bad.json()) as any).error.code).toBe('FORBIDDEN');
    const missing = await post(`${id}/hook`, {});
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as any).error.code).toBe('UNAUTHENTICATED');
  });

  it('checks HMAC auth over the raw body: good, bad, missing', async () => {
    const id = await deploy([node('hook', 'webhook', { method: 'POST', respond: 'immediately', auth: { type: 'hmac', header: 'x-signature', secret: 'k3y' } })], []);
    const body = '{"event":"paid","amount":12}';
    const sig = createHmac('sha256', 'k3y').update(body).digest('hex');
    expect((await post(`${id}/hook`, body, { 'x-signature': `sha256=${sig}` })).status).toBe(202);
    expect((await post(`${id}/hook`, body, { 'x-signature': sig })).status).toBe(202);
    expect((await post(`${id}/hook`, body + ' ', { 'x-signature': sig })).status).toBe(403);
    expect((await post(`${id}/hook`, body)).status).toBe(401);
  });

  it('refuses a body over the limit with 413, and parses form bodies', async () => {
    const id = await deploy([node('hook', 'webhook', { method: 'POST' }), node('echo', 'set', { values: { body: '{{ $json.body }}' }, keepOnlySet: true })], chain('hook', 'echo'));
    const big = await post(`${id}/hook`, { pad: 'x'.repeat(4096) });
    expect(big.status).toBe(413);
    expect(((await big.json()) as any).error.code).toBe('PAYLOAD_TOO_LARGE');
    const form = await call(`${id}/hook`, { method: 'POST', body: 'a=1&b=two', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(form.status).toBe(200);
    expect(await form.json()).toEqual({ body: { a: '1', b: 'two' } });
  });

  it('answers 404 for an undeployed workflow, an unknown workflow and a node that is not its webhook', async () => {
    const undeployed = await deploy([node('hook', 'webhook', { method: 'POST' })], [], false);
    const notFound = await post(`${undeployed}/hook`, {});
    expect(notFound.status).toBe(404);
    expect(((await notFound.json()) as any).error.code).toBe('NOT_FOUND');
    expect((await post(`wf_doesnotexist/hook`, {})).status).toBe(404);
    const id = await deploy([node('hook', 'webhook', { method: 'POST' }), node('set', 'set', { values: { x: 1 } })], chain('hook', 'set'));
    expect((await post(`${id}/set`, {})).status).toBe(404);
  });
});

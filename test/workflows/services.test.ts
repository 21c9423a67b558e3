import { randomBytes } from 'node:crypto';
import { ENVELOPE_HEADER, signEnvelope, type Principal } from '../../core/principal';
import { startStandIn, type StandIn } from '../../subgraphs/ai/testing/stand-ins';
import { COMPUTE_TEST_ENV, createRunning, execIn, removeDeploymentContainers, waitForStatus } from '../compute/support';
import { startTestPlatform, type TestPlatform } from '../harness';
import { eventually, rest } from '../helpers';
import { createWorkflow, json, setUpWorkflowTest, type Caller, type WorkflowTestEnv } from './api-support';

/*
 * The sandbox-exec and ai-chat nodes end to end: a workflow executed over REST (wait: true) runs
 * on the worker, which calls the compute and ai subgraphs' internal routes. Real PostgreSQL,
 * Redis and Docker (busybox sandboxes); the AI upstream is a local stand-in speaking the OpenAI
 * protocol. Then the two internal routes on their own: bad bodies and unsigned calls.
 */

jest.setTimeout(120_000);

let platform: TestPlatform;
let t: WorkflowTestEnv;
let standIn: StandIn;
let aliceSandbox: any;
let mallorySandbox: any;
let stoppedSandbox: any;
let alicePool: any;
let aliceUpstream: any;
let malloryPool: any;

beforeAll(async () => {
  standIn = await startStandIn('openai');
  platform = await startTestPlatform({ env: COMPUTE_TEST_ENV });
  t = await setUpWorkflowTest(platform, 'wfsvc');
  [aliceSandbox, mallorySandbox, stoppedSandbox] = await Promise.all([
    createRunning(platform, t.alice, { name: 'alice-box' }),
    createRunning(platform, t.mallory, { name: 'mallory-box' }),
    createRunning(platform, t.alice, { name: 'stopped-box' }),
  ]);
  expect((await rest(platform, 'POST', `/sandboxes/${stoppedSandbox.id}/stop`, undefined, t.alice.auth)).status).toBe(202);
  await waitForStatus(platform, t.alice, stoppedSandbox.id, 'stopped');

  aliceUpstream = await created(rest(platform, 'POST', '/ai-gateway/upstreams', { name: 'stand-in', provider: 'vendor-a', baseUrl: standIn.baseUrl, apiKey: standIn.apiKey, models: ['gpt-4o-mini'] }, t.alice.auth));
  alicePool = await created(rest(platform, 'POST', '/ai-gateway/pools', { name: 'alice-pool', members: [{ upstreamId: aliceUpstream.id }] }, t.alice.auth));
  const malloryUpstream = await created(rest(platform, 'POST', '/ai-gateway/upstreams', { name: 'mallory-up', provider: 'vendor-a', baseUrl: standIn.baseUrl, apiKey: standIn.apiKey }, t.mallory.auth));
  malloryPool = await created(rest(platform, 'POST', '/ai-gateway/pools', { name: 'mallory-pool', members: [{ upstreamId: malloryUpstream.id }] }, t.mallory.auth));
});

afterAll(async () => {
  if (platform) await removeDeploymentContainers(platform);
  await t?.close();
  await platform?.stop();
  await standIn?.close();
});

async function created(response: Promise<Response>): Promise<any> {
  const res = await response;
  const body = await json(res);
  if (res.status !== 201) throw new Error(`create answered ${res.status}: ${JSON.stringify(body)}`);
  return body;
}

/** Saves a workflow of a manual trigger feeding `node`, executes it with wait, and answers the finished execution. */
async function runNode(who: Caller, node: { type: string; parameters: Record<string, unknown> }, settings: Record<string, unknown> = {}): Promise<{ execution: any; step: any }> {
  const wf = await createWorkflow(platform, who, {
    nodes: [
      { id: 'start', type: 'manual-trigger', name: 'Start', parameters: {} },
      { id: 'step', type: node.type, name: 'Step', parameters: node.parameters },
    ],
    connections: [{ from: 'start', to: 'step' }],
    settings,
  });
  const response = await rest(platform, 'POST', `/workflows/${wf.id}/execute`, { wait: true, timeoutSeconds: 60 }, who.auth);
  const execution = await json(response);
  expect(response.status).toBe(202);
  expect(['succeeded', 'failed']).toContain(execution.status);
  const step = execution.steps.find((s: any) => s.nodeId === 'step');
  expect(step).toBeDefined();
  return { execution, step };
}

describe('sandbox-exec node', () => {
  it('runs a command in a running sandbox of the workspace and outputs its result', async () => {
    const { execution, step } = await runNode(t.alice, { type: 'sandbox-exec', parameters: { sandboxId: aliceSandbox.id, command: 'echo "hello from $((40 + 2))"', timeoutSeconds: 30 } });
    expect(execution.status).toBe('succeeded');
    expect(step).toMatchObject({ status: 'succeeded', error: null });
    expect(step.output).toEqual([[{ json: { exitCode: 0, stdout: 'hello from 42\n', stderr: '', timedOut: false } }]]);
  });

  it('runs an argv array, and a non-zero exit code is an output, not a failure', async () => {
    const argv = await runNode(t.alice, { type: 'sandbox-exec', parameters: { sandboxId: aliceSandbox.id, command: ['echo', '$HOME is not expanded'] } });
    expect(argv.step.output).toEqual([[{ json: { exitCode: 0, stdout: '$HOME is not expanded\n', stderr: '', timedOut: false } }]]);

    const { execution, step } = await runNode(t.alice, { type: 'sandbox-exec', parameters: { sandboxId: aliceSandbox.id, command: 'echo out; echo err >&2; exit 3' } });
    expect(execution.status).toBe('succeeded');
    expect(step.status).toBe('succeeded');
    expect(step.output).toEqual([[{ json: { exitCode: 3, stdout: 'out\n', stderr: 'err\n', timedOut: false } }]]);
  });

  it('fails the step with not-found for a sandbox of another workspace, and leaves that sandbox untouched', async () => {
    const marker = `/tmp/touched-${randomBytes(4).toString('hex')}`;
    const { execution, step } = await runNode(t.alice, { type: 'sandbox-exec', parameters: { sandboxId: mallorySandbox.id, command: `touch ${marker}` } });
    expect(execution.status).toBe('failed');
    expect(step.status).toBe('failed');
    expect(step.error).toBe(`Sandbox ${mallorySandbox.id} not found`);
    expect(step.output).toBeNull();
    expect(execution.error).toContain(`Sandbox ${mallorySandbox.id} not found`);

    // Mallory's sandbox still runs, and the command never ran in it.
    const check = await execIn(platform, t.mallory, mallorySandbox.id, { command: `test -e ${marker}; echo $?` });
    expect(check.body.stdout).toBe('1\n');
    expect((await json(await rest(platform, 'GET', `/sandboxes/${mallorySandbox.id}`, undefined, t.mallory.auth))).status).toBe('running');
  });

  it('fails the step naming the state for a stopped sandbox, and not-found for an unknown id', async () => {
    const stopped = await runNode(t.alice, { type: 'sandbox-exec', parameters: { sandboxId: stoppedSandbox.id, command: 'echo never' } });
    expect(stopped.execution.status).toBe('failed');
    expect(stopped.step.status).toBe('failed');
    expect(stopped.step.error).toBe(`Cannot run a command in sandbox ${stoppedSandbox.id} while it is stopped`);

    const unknown = await runNode(t.alice, { type: 'sandbox-exec', parameters: { sandboxId: 'sbx_doesnotexist', command: 'echo never' } });
    expect(unknown.step.error).toBe('Sandbox sbx_doesnotexist not found');
  });


  it('kills the command in the sandbox when its execution is cancelled', async () => {
    const pidFile = `/tmp/cancelled-${randomBytes(4).toString('hex')}`;
    const wf = await createWorkflow(platform, t.alice, {
      nodes: [
        { id: 'start', type: 'manual-trigger', name: 'Start', parameters: {} },
        { id: 'step', type: 'sandbox-exec', name: 'Step', parameters: { sandboxId: aliceSandbox.id, command: `echo $$ > ${pidFile}; exec sleep 60`, timeoutSeconds: 120 } },
      ],
      connections: [{ from: 'start', to: 'step' }],
    });
    const execution = await json(await rest(platform, 'POST', `/workflows/${wf.id}/execute`, {}, t.alice.auth));
    const alive = async () => (await execIn(platform, t.alice, aliceSandbox.id, { command: `test -s ${pidFile} && kill -0 "$(cat ${pidFile})" 2>/dev/null && echo alive || echo gone` })).body.stdout;
    await eventually(async () => (await alive()) === 'alive\n', 15_000, 'the command to run');
    expect((await rest(platform, 'POST', `/workflows/${wf.id}/executions/${execution.id}/cancel`, undefined, t.alice.auth)).status).toBe(200);
    await eventually(async () => (await json(await rest(platform, 'GET', `/workflows/${wf.id}/executions/${execution.id}`, undefined, t.alice.auth))).status === 'cancelled', 10_000, 'the execution to be cancelled');
    // Killed, not left to run out its 60 s.
    await eventually(async () => (await alive()) === 'gone\n', 10_000, 'the command to be killed');
  });

  it('stops waiting for a command when the execution times out', async () => {
    const started = Date.now();
    const { execution, step } = await runNode(t.alice, { type: 'sandbox-exec', parameters: { sandboxId: aliceSandbox.id, command: ['sleep', '30'], timeoutSeconds: 60 } }, { timeoutSeconds: 1 });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(execution.status).toBe('failed');
    expect(execution.error).toMatch(/timed out/i);
    expect(step.status).toBe('failed');
  });
});

describe('ai-chat node', () => {
  it('hangs up on the vendor when its execution is cancelled: the usage row says 499 and no answer is metered', async () => {
    // A pool of its own: the other tests count alicePool's usage rows.
    const pool = await created(rest(platform, 'POST', '/ai-gateway/pools', { name: 'cancel-pool', members: [{ upstreamId: aliceUpstream.id }] }, t.alice.auth));
    standIn.clear();
    standIn.behavior.delayMs = 5000;
    try {
      const wf = await createWorkflow(platform, t.alice, {
        nodes: [
          { id: 'start', type: 'manual-trigger', name: 'Start', parameters: {} },
          { id: 'step', type: 'ai-chat', name: 'Step', parameters: { poolId: pool.id, model: 'gpt-4o-mini', prompt: 'cancel me' } },
        ],
        connections: [{ from: 'start', to: 'step' }],
      });
      const execution = await json(await rest(platform, 'POST', `/workflows/${wf.id}/execute`, {}, t.alice.auth));
      await eventually(() => standIn.requests.some((r) => JSON.stringify(r.body).includes('cancel me')), 10_000, 'the vendor to get the request');
      const started = Date.now();
      const cancel = await rest(platform, 'POST', `/workflows/${wf.id}/executions/${execution.id}/cancel`, undefined, t.alice.auth);
      const cancelBody = await json(cancel);
      expect(cancel.status === 200 ? 200 : JSON.stringify(cancelBody)).toBe(200);
      const ended = await eventually(
        async () => {
          const row = await json(await rest(platform, 'GET', `/workflows/${wf.id}/executions/${execution.id}`, undefined, t.alice.auth));
          return row.status === 'cancelled' ? row : undefined;
        },
        10_000,
        'the execution to be cancelled',
      );
      expect(ended.status).toBe('cancelled');
      const usage = await eventually(
        async () => {
          const { rows } = await t.pg.query(`SELECT status, output_tokens FROM ai.usage WHERE pool_id = $1`, [pool.id]);
          return rows.length ? rows : undefined;
        },
        4000,
        'the usage row',
      );
      expect(usage).toEqual([{ status: 499, output_tokens: 0 }]);
      expect(Date.now() - started).toBeLessThan(4500);
    } finally {
      standIn.behavior.delayMs = 0;
    }
  });


  it('answers through a pool of the workspace with the upstream\'s text and tokens, and records usage for the workspace', async () => {
    standIn.clear();
    const { execution, step } = await runNode(t.alice, { type: 'ai-chat', parameters: { poolId: alicePool.id, model: 'gpt-4o-mini', system: 'You are terse.', prompt: 'hello there', maxTokens: 64 } });
    expect(execution.status).toBe('succeeded');
    expect(step.status).toBe('succeeded');
    // The stand-in echoes the prompt; tokens: words + 3 per message (system 3 + 3, prompt 2 + 3), reply 3 words.
    expect(step.output).toEqual([[{ json: { text: 'echo: hello there', inputTokens: 11, outputTokens: 3 } }]]);
    expect(standIn.requests).toHaveLength(1);
    expect(standIn.requests[0].body).toMatchObject({ model: 'gpt-4o-mini', max_completion_tokens: 64, messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'hello there' }] });

    // Usage rows are written in batches (about every 100 ms), with their metering events.
    const rows = await eventually(async () => {
      const { rows } = await t.pg.query(`SELECT request_id, workspace_id, pool_id, upstream_id, key_id, client_api, operation, model, input_tokens, output_tokens, status FROM ai.usage WHERE pool_id = $1`, [alicePool.id]);
      return rows.length ? rows : undefined;
    }, 5000, 'the usage row');
    expect(rows).toEqual([
      { request_id: expect.stringMatching(/^req_wf_/), workspace_id: t.alice.workspaceId, pool_id: alicePool.id, upstream_id: aliceUpstream.id, key_id: null, client_api: 'playground', operation: 'chat', model: 'gpt-4o-mini', input_tokens: 11, output_tokens: 3, status: 200 },
    ]);
    const metering = await eventually(async () => {
      const { rows: events } = await t.pg.query('SELECT workspace_id FROM ai.metering_events WHERE request_id = $1', [rows[0].request_id]);
      return events.length ? events : undefined;
    }, 5000, 'the metering events');
    expect(metering.every((e: any) => e.workspace_id === t.alice.workspaceId)).toBe(true);
  });

  it('answers straight from an upstream of the workspace', async () => {
    const { step } = await runNode(t.alice, { type: 'ai-chat', parameters: { upstreamId: aliceUpstream.id, model: 'gpt-4o-mini', prompt: 'one two three' } });
    expect(step.output).toEqual([[{ json: { text: 'echo: one two three', inputTokens: 6, outputTokens: 4 } }]]);
  });

  it('fails the step with not-found for a pool of another workspace, and calls no upstream', async () => {
    standIn.clear();
    const { execution, step } = await runNode(t.alice, { type: 'ai-chat', parameters: { poolId: malloryPool.id, model: 'gpt-4o-mini', prompt: 'hello' } });
    expect(execution.status).toBe('failed');
    expect(step.status).toBe('failed');
    expect(step.error).toBe(`Pool ${malloryPool.id} not found`);
    expect(standIn.requests).toHaveLength(0);
    const { rows } = await t.pg.query('SELECT 1 FROM ai.usage WHERE pool_id = $1', [malloryPool.id]);
    expect(rows).toHaveLength(0);
  });
});

describe('internal routes', () => {
  const baseOf = (name: 'compute' | 'ai') => platform.subgraphs[name]!.url.replace(/\/graphql$/, '');
  const envelope = (principal: Principal | null = null, secret = platform.config.internalSigningSecret) =>
    signEnvelope(secret, { principal, requestId: `req_${randomBytes(4).toString('hex')}`, clientIp: '127.0.0.1', iat: Math.floor(Date.now() / 1000) });
  const post = async (name: 'compute' | 'ai', route: string, body: unknown, headers: Record<string, string> = { [ENVELOPE_HEADER]: envelope() }) => {
    const res = await fetch(`${baseOf(name)}/internal/${route}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as any };
  };

  describe('workflows/sandbox-exec', () => {
    const good = () => ({ workspaceId: t.alice.workspaceId, sandboxId: aliceSandbox.id, command: 'echo ok' });

    it('answers the command\'s result for a sandbox of the workspace', async () => {
      const res = await post('compute', 'workflows/sandbox-exec', { ...good(), command: ['sh', '-c', 'echo ok; exit 5'], timeoutSeconds: 10 });
      expect(res).toEqual({ status: 200, body: { data: { exitCode: 5, stdout: 'ok\n', stderr: '', timedOut: false } } });
    });

    it.each([
      ['a body that is not an object', '"echo"', 'body'],
      ['a body that is an array', [], 'body'],
      ['no workspaceId', { workspaceId: undefined }, 'workspaceId'],
      ['a workspaceId that is a number', { workspaceId: 7 }, 'workspaceId'],
      ['an empty sandboxId', { sandboxId: '' }, 'sandboxId'],
      ['a sandboxId that is too long', { sandboxId: `sbx_${'x'.repeat(200)}` }, 'sandboxId'],
      ['no command', { command: undefined }, 'command'],
      ['an empty command', { command: '  ' }, 'command'],
      ['an empty argv', { command: [] }, 'command'],
      ['an argv with a number', { command: ['echo', 1] }, 'command[1]'],
      ['an argv with an empty program', { command: ['', 'x'] }, 'command[0]'],
      ['a command over the size limit', { command: 'x'.repeat(131_073) }, 'command'],
      ['a command that is an object', { command: { run: 'echo' } }, 'command'],
      ['a zero timeout', { timeoutSeconds: 0 }, 'timeoutSeconds'],
      ['a fractional timeout', { timeoutSeconds: 1.5 }, 'timeoutSeconds'],
      ['a timeout as a string', { timeoutSeconds: '10' }, 'timeoutSeconds'],
      ['a timeout past 3600', { timeoutSeconds: 3601 }, 'timeoutSeconds'],
      ['a timeout past COMPUTE_EXEC_MAX_TIMEOUT_SECONDS', { timeoutSeconds: 601 }, 'timeoutSeconds'],
    ])('refuses %s with 400 naming the field', async (_what, change, field) => {
      const body = typeof change === 'string' || Array.isArray(change) ? change : { ...good(), ...change };
      const res = await post('compute', 'workflows/sandbox-exec', body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: { field } });
    });

    it('answers 404 for a sandbox of another workspace, the same as for none, and 409 for a stopped one', async () => {
      const other = await post('compute', 'workflows/sandbox-exec', { ...good(), sandboxId: mallorySandbox.id });
      expect(other.status).toBe(404);
      expect(other.body.error).toMatchObject({ code: 'NOT_FOUND', message: `Sandbox ${mallorySandbox.id} not found` });
      expect(JSON.stringify(other.body)).not.toContain(t.mallory.workspaceId);
      const none = await post('compute', 'workflows/sandbox-exec', { ...good(), sandboxId: 'sbx_nothinghere' });
      expect(none.status).toBe(404);
      expect(Object.keys(none.body.error).sort()).toEqual(Object.keys(other.body.error).sort());
      const stopped = await post('compute', 'workflows/sandbox-exec', { ...good(), sandboxId: stoppedSandbox.id });
      expect(stopped.status).toBe(409);
      expect(stopped.body.error).toMatchObject({ code: 'INVALID_STATE', details: { state: 'stopped' } });
    });

    it('refuses a call without the internal signature, or signed with another secret, and runs nothing', async () => {
      const marker = `/tmp/unsigned-${randomBytes(4).toString('hex')}`;
      const body = { ...good(), command: `touch ${marker}` };
      const unsigned = await post('compute', 'workflows/sandbox-exec', body, {});
      expect(unsigned.status).toBe(401);
      expect(unsigned.body.error.code).toBe('UNAUTHENTICATED');
      const forged = await post('compute', 'workflows/sandbox-exec', body, { [ENVELOPE_HEADER]: envelope(null, 'not-the-signing-secret-0123456789abcdef') });
      expect(forged.status).toBe(401);
      const check = await execIn(platform, t.alice, aliceSandbox.id, { command: `test -e ${marker}; echo $?` });
      expect(check.body.stdout).toBe('1\n');
    });

    it('holds a signed user principal to membership of the workspace', async () => {
      const principal: Principal = { userId: t.mallory.userId, username: 'mallory', isAdmin: false, via: 'jwt', defaultWorkspaceId: t.mallory.workspaceId, memberships: { [t.mallory.workspaceId]: 'owner' } };
      const res = await post('compute', 'workflows/sandbox-exec', good(), { [ENVELOPE_HEADER]: envelope(principal) });
      expect(res.status).toBe(404);
    });
  });

  describe('workflows/chat', () => {
    const good = () => ({ workspaceId: t.alice.workspaceId, poolId: alicePool.id, model: 'gpt-4o-mini', prompt: 'hi' });

    it('answers the text and token counts', async () => {
      const res = await post('ai', 'workflows/chat', { ...good(), system: 'Be brief.' });
      expect(res).toEqual({ status: 200, body: { data: { text: 'echo: hi', inputTokens: 9, outputTokens: 2 } } });
    });

    it.each([
      ['a body that is not an object', '"hi"', 'body'],
      ['no workspaceId', { workspaceId: undefined }, 'workspaceId'],
      ['a workspaceId that is a number', { workspaceId: 1 }, 'workspaceId'],
      ['neither poolId nor upstreamId', { poolId: undefined }, 'poolId'],
      ['both poolId and upstreamId', { upstreamId: 'ups_x' }, 'upstreamId'],
      ['a poolId that is a number', { poolId: 5 }, 'poolId'],
      ['an upstreamId that is too long', { poolId: undefined, upstreamId: `ups_${'x'.repeat(200)}` }, 'upstreamId'],
      ['no model', { model: undefined }, 'model'],
      ['a blank model', { model: ' ' }, 'model'],
      ['a model name over 256 characters', { model: 'm'.repeat(257) }, 'model'],
      ['no prompt', { prompt: undefined }, 'prompt'],
      ['an empty prompt', { prompt: '' }, 'prompt'],
      ['a prompt that is not a string', { prompt: ['hi'] }, 'prompt'],
      ['a prompt over the size limit', { prompt: 'p'.repeat(1_000_001) }, 'prompt'],
      ['a system prompt that is not a string', { system: 5 }, 'system'],
      ['a system prompt over the size limit', { system: 's'.repeat(100_001) }, 'system'],
      ['zero maxTokens', { maxTokens: 0 }, 'maxTokens'],
      ['fractional maxTokens', { maxTokens: 2.5 }, 'maxTokens'],
      ['maxTokens as a string', { maxTokens: '64' }, 'maxTokens'],
      ['maxTokens past 200000', { maxTokens: 200_001 }, 'maxTokens'],
    ])('refuses %s with 400 naming the field', async (_what, change, field) => {
      const body = typeof change === 'string' ? change : { ...good(), ...change };
      const res = await post('ai', 'workflows/chat', body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: { field } });
    });

    it('answers 404 for a pool or an upstream of another workspace', async () => {
      standIn.clear();
      const pool = await post('ai', 'workflows/chat', { ...good(), poolId: malloryPool.id });
      expect(pool.status).toBe(404);
      expect(pool.body.error).toMatchObject({ code: 'NOT_FOUND', message: `Pool ${malloryPool.id} not found` });
      const upstream = await post('ai', 'workflows/chat', { ...good(), workspaceId: t.mallory.workspaceId, poolId: undefined, upstreamId: aliceUpstream.id });
      expect(upstream.status).toBe(404);
      expect(upstream.body.error).toMatchObject({ code: 'NOT_FOUND', message: `Upstream ${aliceUpstream.id} not found` });
      expect(standIn.requests).toHaveLength(0);
    });

    it('stops the vendor call and records 499 when the caller hangs up (a cancelled step), rather than metering an answer no one gets', async () => {
      const pool = await created(rest(platform, 'POST', '/ai-gateway/pools', { name: 'hang-up-pool', members: [{ upstreamId: aliceUpstream.id }] }, t.alice.auth));
      standIn.clear();
      standIn.behavior.delayMs = 4000;
      const started = Date.now();
      try {
        const caller = new AbortController();
        const call = fetch(`${baseOf('ai')}/internal/workflows/chat`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', [ENVELOPE_HEADER]: envelope() },
          body: JSON.stringify({ ...good(), poolId: pool.id, prompt: 'hang up on me' }),
          signal: caller.signal,
        }).catch((err: unknown) => err);
        await eventually(() => standIn.requests.length > 0, 5000, 'the vendor to get the request');
        caller.abort();
        expect((await call) as Error).toMatchObject({ name: 'AbortError' });
        const row = await eventually(
          async () => (await t.pg.query(`SELECT status, input_tokens, output_tokens FROM ai.usage WHERE pool_id = $1`, [pool.id])).rows[0],
          3000,
          'the usage row',
        );
        expect(row).toEqual({ status: 499, input_tokens: 0, output_tokens: 0 });
        // Recorded before the vendor would have answered: the call was stopped, not waited out.
        expect(Date.now() - started).toBeLessThan(3500);
      } finally {
        standIn.behavior.delayMs = 0;
      }
    });

    it('refuses a call without the internal signature', async () => {
      standIn.clear();
      const res = await post('ai', 'workflows/chat', good(), {});
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('UNAUTHENTICATED');
      expect(standIn.requests).toHaveLength(0);
    });
  });
});

import { Client } from 'pg';
import type { Queue } from 'bullmq';
import { createQueue } from '../../core/queues';
import { createRedis, type Redis } from '../../core/redis';
import type { TestPlatform } from '../harness';
import { createUserAndLogin, gql, json, loginAdmin, rest } from '../helpers';
import { TEST_REDIS_URL } from '../services';

export interface Caller {
  auth: Record<string, string>;
  userId: string;
  workspaceId: string;
}

/** A manual trigger feeding a set node. */
export const SIMPLE_GRAPH = {
  nodes: [
    { id: 'start', type: 'manual-trigger', name: 'Start', parameters: {} },
    { id: 'shape', type: 'set', name: 'Shape', parameters: { values: { greeting: 'hello' } }, position: { x: 200, y: 0 } },
  ],
  connections: [{ from: 'start', to: 'shape' }],
};

/** SIMPLE_GRAPH, then a 1-hour wait: its job stays in the queue (delayed), to be looked at. */
export const SLEEPY_GRAPH = {
  nodes: [...SIMPLE_GRAPH.nodes, { id: 'nap', type: 'wait', name: 'Nap', parameters: { seconds: 3600 } }],
  connections: [...SIMPLE_GRAPH.connections, { from: 'shape', to: 'nap' }],
};

/** Webhook (with a path suffix and header auth) and schedule triggers, both feeding a set node. */
export const TRIGGER_GRAPH = {
  nodes: [
    { id: 'hook', type: 'webhook', name: 'Hook', parameters: { method: 'POST', path: 'orders/new', auth: { type: 'header', name: 'x-token', value: 's3cret' } } },
    { id: 'plain', type: 'webhook', name: 'Plain', parameters: {} },
    { id: 'tick', type: 'schedule', name: 'Tick', parameters: { cron: '*/5 * * * *', timezone: 'Europe/Berlin' } },
    { id: 'shape', type: 'set', name: 'Shape', parameters: { values: { seen: true } } },
  ],
  connections: [
    { from: 'hook', to: 'shape' },
    { from: 'plain', to: 'shape' },
    { from: 'tick', to: 'shape' },
  ],
};

export interface WorkflowTestEnv {
  alice: Caller;
  mallory: Caller;
  pg: Client;
  redis: Redis;
  queue: Queue;
  close(): Promise<void>;
}

export async function setUpWorkflowTest(platform: TestPlatform, prefix: string): Promise<WorkflowTestEnv> {
  const admin = await loginAdmin(platform);
  const a = await createUserAndLogin(platform, admin.auth, `alice-${prefix}`);
  const m = await createUserAndLogin(platform, admin.auth, `mallory-${prefix}`);
  const pg = new Client({ connectionString: platform.databaseUrl });
  await pg.connect();
  const redis = createRedis(TEST_REDIS_URL);
  const queue = createQueue('workflows', redis, platform.config.redisPrefix);
  return {
    alice: { auth: a.auth, userId: a.userId, workspaceId: a.defaultWorkspaceId },
    mallory: { auth: m.auth, userId: m.userId, workspaceId: m.defaultWorkspaceId },
    pg,
    redis,
    queue,
    async close() {
      await queue.close().catch(() => undefined);
      await redis.quit().catch(() => undefined);
      await pg.end().catch(() => undefined);
    },
  };
}

export async function createWorkflow(platform: TestPlatform, who: Caller, body: Record<string, unknown> = {}): Promise<any> {
  const response = await rest(platform, 'POST', '/workflows', { name: 'wf', ...SIMPLE_GRAPH, ...body }, who.auth);
  const created = await json(response);
  if (response.status !== 201) throw new Error(`create answered ${response.status}: ${JSON.stringify(created)}`);
  return created;
}

/** A second workspace of `owner` with `member` in it at `role`. */
export async function sharedWorkspace(platform: TestPlatform, owner: Caller, member: Caller, role: 'viewer' | 'member'): Promise<string> {
  const created = await gql(platform, 'mutation($n: String!) { createWorkspace(name: $n) { id } }', { n: `shared-${role}` }, owner.auth);
  const ws = created.data.createWorkspace.id as string;
  const added = await gql(platform, `mutation($ws: ID!, $u: ID!) { addWorkspaceMember(workspaceId: $ws, userId: $u, role: ${role}) { id } }`, { ws, u: member.userId }, owner.auth);
  if (!added.data) throw new Error(`addWorkspaceMember failed: ${JSON.stringify(added.errors)}`);
  return ws;
}

/** Inserts an execution row directly (for cancel, metrics and reads independent of the engine). */
export async function insertExecution(
  pg: Client,
  row: { workflowId: string; workspaceId: string; status: string; createdAt?: Date; durationMs?: number | null; finishedAt?: Date | null },
): Promise<string> {
  const id = `exe_${Math.random().toString(36).slice(2, 12)}${Date.now().toString(36)}`;
  const createdAt = row.createdAt ?? new Date();
  const finished = ['succeeded', 'failed', 'cancelled'].includes(row.status);
  await pg.query(
    `INSERT INTO workflows.executions (id, workflow_id, workspace_id, workflow_version, definition, status, mode, created_at, started_at, finished_at, duration_ms)
     VALUES ($1, $2, $3, 1, '{"nodes":[],"connections":[],"settings":{}}', $4, 'manual', $5, $6, $7, $8)`,
    [
      id,
      row.workflowId,
      row.workspaceId,
      row.status,
      createdAt,
      row.status === 'queued' ? null : createdAt,
      row.finishedAt !== undefined ? row.finishedAt : finished ? new Date(createdAt.getTime() + (row.durationMs ?? 0)) : null,
      row.durationMs ?? null,
    ],
  );
  return id;
}

export async function insertStep(pg: Client, row: { executionId: string; workspaceId: string; nodeId: string; nodeType: string; seq: number; status: string; durationMs?: number | null; output?: unknown }): Promise<void> {
  await pg.query(
    `INSERT INTO workflows.execution_steps (execution_id, node_id, workspace_id, node_type, seq, status, output, started_at, finished_at, duration_ms)
     VALUES ($1, $2, $3, $4, $5, $6, $7, now(), now(), $8)`,
    [row.executionId, row.nodeId, row.workspaceId, row.nodeType, row.seq, row.status, row.output === undefined ? null : JSON.stringify(row.output), row.durationMs ?? null],
  );
}

export { json } from '../helpers';

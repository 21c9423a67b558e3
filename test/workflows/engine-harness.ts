import type { DataSource } from 'typeorm';
import { openSubgraphDatabase } from '../../core/database';
import { ID_PREFIX, newId } from '../../core/ids';
import { ExecutionStarter } from '../../subgraphs/workflows/executions/execution-starter';
import type { WorkflowConnection, WorkflowNode, WorkflowSettings } from '../../subgraphs/workflows/model/entities';
import { WORKFLOW_ENTITIES, WORKFLOW_MIGRATIONS } from '../../subgraphs/workflows/schema';
import { createWorkerTestRuntime, type WorkerTestRuntime } from '../../worker/test-support';
import { createTestDatabase, eventually, type TestDatabase } from '../services';

export const WORKSPACE = 'ws_enginetest';

/**
 * What the engine tests need: a database of their own with the workflows schema, a Redis prefix
 * of their own, and the producer side (ExecutionStarter on the workflows queue). The worker is
 * started by each test (in this process or another).
 */
export interface EngineTestEnv {
  database: TestDatabase;
  env: WorkerTestRuntime;
  db: DataSource;
  starter: ExecutionStarter;
  /** Inserts a workflow row (deployed when asked) and returns its id. */
  insertWorkflow(graph: { nodes: WorkflowNode[]; connections: WorkflowConnection[]; settings?: WorkflowSettings }, deployed?: boolean): Promise<string>;
  /** Starts an execution of a graph (manual mode, from its first node; `id`: chosen by the caller, e.g. to subscribe to its events first). */
  start(graph: { nodes: WorkflowNode[]; connections: WorkflowConnection[]; settings?: WorkflowSettings }, input?: unknown, workflowId?: string | null, id?: string): Promise<string>;
  execution(id: string): Promise<Record<string, any>>;
  steps(id: string): Promise<Array<Record<string, any>>>;
  /** Waits until the execution has one of the statuses. */
  until(id: string, statuses: string[], timeoutMs?: number): Promise<Record<string, any>>;
  cleanup(): Promise<void>;
}

export async function createEngineTestEnv(): Promise<EngineTestEnv> {
  const database = await createTestDatabase('wfengine');
  const env = createWorkerTestRuntime({ databaseUrl: database.url });
  const db = await openSubgraphDatabase({ url: database.url, schema: 'workflows', entities: WORKFLOW_ENTITIES, migrations: WORKFLOW_MIGRATIONS });
  const starter = new ExecutionStarter(db, env.queue('workflows'));
  const insertWorkflow: EngineTestEnv['insertWorkflow'] = async (graph, deployed = false) => {
    const id = newId(ID_PREFIX.workflow);
    await db.query(
      `INSERT INTO workflows.workflows (id, workspace_id, name, nodes, connections, settings, deployed, deployed_at) VALUES ($1, $2, 'engine test', $3, $4, $5, $6, CASE WHEN $6 THEN now() END)`,
      [id, WORKSPACE, JSON.stringify(graph.nodes), JSON.stringify(graph.connections), JSON.stringify(graph.settings ?? {}), deployed],
    );
    return id;
  };
  const execution = async (id: string) => ((await db.query(`SELECT * FROM workflows.executions WHERE id = $1`, [id])) as Array<Record<string, any>>)[0];
  return {
    database,
    env,
    db,
    starter,
    insertWorkflow,
    async start(graph, input = {}, workflowId = null, id) {
      const e = await starter.start({
        id,
        workspaceId: WORKSPACE,
        workflowId,
        workflowVersion: workflowId ? 1 : null,
        definition: { nodes: graph.nodes, connections: graph.connections, settings: graph.settings ?? {} },
        mode: 'manual',
        triggerNodeId: graph.nodes[0].id,
        input,
        userId: null,
      });
      return e.id;
    },
    execution,
    steps: async (id) => (await db.query(`SELECT * FROM workflows.execution_steps WHERE execution_id = $1 ORDER BY seq`, [id])) as Array<Record<string, any>>,
    until: (id, statuses, timeoutMs = 20_000) =>
      eventually(
        async () => {
          const e = await execution(id);
          return e && statuses.includes(e.status) ? e : undefined;
        },
        timeoutMs,
        `execution ${id} to be ${statuses.join(' or ')}`,
      ),
    async cleanup() {
      await env.cleanup();
      await db.destroy();
      await database.drop();
    },
  };
}

/** Shorthands for graphs. */
export const node = (id: string, type: string, parameters: Record<string, unknown> = {}, name = id): WorkflowNode => ({ id, type, name, parameters });
export const chain = (...ids: string[]): WorkflowConnection[] => ids.slice(1).map((to, i) => ({ from: ids[i], to }));

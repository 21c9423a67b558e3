import { WORKFLOW_JOBS } from '../../../core/queues';
import type { ExecuteJobData } from '../../../subgraphs/workflows/executions/execution-starter';
import type { JobProcessor, QueueProcessors, QueueWorkerOptions } from '../types';
import { workflowsContext } from './context';
import { runExecution } from './engine';

export { workflowsContext, type WorkflowsContext } from './context';
export { runExecution } from './engine';

/** `workflow.execute` `{ executionId, reply? }`: runs or resumes the execution (README.md). */
export const executeProcessor: JobProcessor<ExecuteJobData> = async (job, ctx, signal, token) => {
  const w = await workflowsContext(ctx);
  // The job's first activation may run from the snapshot it carries; any later one (a retry, a stall, a wait's end) reads the row.
  const snapshot = job.data.run && (job.attemptsStarted ?? 0) <= 1 && (job.stalledCounter ?? 0) === 0 ? job.data.run : undefined;
  const status = await runExecution(w, job.data.executionId, { job, token, signal, reply: job.data.reply, snapshot });
  return { status };
};

/** `workflow.scheduled` `{ workflowId, nodeId }`: a schedule trigger fired; starts an execution if the workflow is still deployed. */
export const scheduledProcessor: JobProcessor<{ workflowId: string; nodeId: string }> = async (job, ctx) => {
  const w = await workflowsContext(ctx);
  const { workflowId, nodeId } = job.data;
  const [workflow] = (await w.dataSource.query(`SELECT id, workspace_id, version, nodes, connections, settings, deployed FROM workflows.workflows WHERE id = $1`, [workflowId])) as Array<{
    id: string;
    workspace_id: string;
    version: number;
    nodes: import('../../../subgraphs/workflows/model/entities').WorkflowNode[];
    connections: import('../../../subgraphs/workflows/model/entities').WorkflowConnection[];
    settings: import('../../../subgraphs/workflows/model/entities').WorkflowSettings;
    deployed: boolean;
  }>;
  if (!workflow?.deployed || !workflow.nodes.some((n) => n.id === nodeId)) return { started: null };
  const execution = await w.starter.start({
    workspaceId: workflow.workspace_id,
    workflowId: workflow.id,
    workflowVersion: workflow.version,
    definition: { nodes: workflow.nodes, connections: workflow.connections, settings: workflow.settings ?? {} },
    mode: 'schedule',
    triggerNodeId: nodeId,
    input: { firedAt: new Date(job.processedOn ?? Date.now()).toISOString() },
    userId: null,
  });
  return { started: execution.id };
};

/** The workflows queue. */
export const WORKFLOW_PROCESSORS: QueueProcessors = {
  [WORKFLOW_JOBS.execute]: executeProcessor,
  [WORKFLOW_JOBS.scheduled]: scheduledProcessor,
};

/**
 * Workflows queue workers: config.workflows.workerConcurrency executions side by side, and a
 * 10 s lock (renewed every 5 s), so the execution of a killed worker resumes on another one
 * within about 15 s.
 */
export const WORKFLOW_QUEUE_OPTIONS: QueueWorkerOptions = {
  workflows: (config) => ({ concurrency: config.workflows.workerConcurrency, lockDuration: 10_000, stalledInterval: 5_000, maxStalledCount: 3 }),
};

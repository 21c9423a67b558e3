import type { Queue } from 'bullmq';
import type { DataSource } from 'typeorm';
import { ID_PREFIX, newId } from '../../../core/ids';
import { WORKFLOW_JOBS } from '../../../core/queues';
import { preparedQuery } from '../../../core/database';
import type { ReplyRequest } from '../engine/replies';
import { ExecutionEntity, type WorkflowConnection, type WorkflowNode, type WorkflowSettings } from '../model/entities';

export interface StartExecutionInput {
  workspaceId: string;
  /** Null for execute-in-memory. */
  workflowId: string | null;
  workflowVersion: number | null;
  definition: { nodes: WorkflowNode[]; connections: WorkflowConnection[]; settings: WorkflowSettings };
  mode: 'manual' | 'webhook' | 'schedule' | 'in_memory';
  triggerNodeId: string | null;
  /** The execute input, or the webhook request `{ body, query, headers, method, path }`. */
  input: unknown;
  userId: string | null;
  /** The execution's id, when the caller needs it before the start (a webhook subscribes to its events first). @defaultValue a new id */
  id?: string;
  /** Who waits for the execution's answer (ReplyWaiter): travels with the job to the engine. */
  reply?: ReplyRequest;
}

/** Data of a `workflow.execute` job. */
export interface ExecuteJobData {
  executionId: string;
  reply?: ReplyRequest;
  /** The execution itself when its definition and input are small (SNAPSHOT_MAX_BYTES): its first run reads nothing. */
  run?: {
    workflowId: string | null;
    workspaceId: string;
    definition: StartExecutionInput['definition'];
    mode: string;
    triggerNodeId: string | null;
    input: unknown;
  };
}

/** Definition plus input, serialized, up to which the job carries the execution (Redis holds the job until it completes). */
export const SNAPSHOT_MAX_BYTES = 16 * 1024;

/** A prepared statement: every webhook request runs it. */
const INSERT_SQL = `
  INSERT INTO workflows.executions (id, workflow_id, workspace_id, workflow_version, definition, status, mode, trigger_node_id, input, cancel_requested, created_by_user_id, created_at)
  VALUES ($1, $2, $3, $4, $5, 'queued', $6, $7, $8, false, $9, $10)`;

/**
 * Creates an execution (status queued) and queues it on the workflows queue (job id = execution
 * id, so it is queued once). Every way of starting one goes through here: execute,
 * execute-in-memory, webhooks and schedules.
 */
export class ExecutionStarter {
  constructor(
    private readonly dataSource: DataSource,
    private readonly queue: Queue,
  ) {}

  async start(input: StartExecutionInput): Promise<ExecutionEntity> {
    const execution: ExecutionEntity = {
      id: input.id ?? newId(ID_PREFIX.execution),
      workflowId: input.workflowId,
      workspaceId: input.workspaceId,
      workflowVersion: input.workflowVersion,
      definition: input.definition,
      status: 'queued',
      mode: input.mode,
      triggerNodeId: input.triggerNodeId,
      input: input.input ?? null,
      output: null,
      error: null,
      cancelRequested: false,
      createdByUserId: input.userId,
      createdAt: new Date(),
      startedAt: null,
      finishedAt: null,
      durationMs: null,
    };
    const definition = JSON.stringify(execution.definition);
    const inputJson = execution.input === null ? null : JSON.stringify(execution.input);
    await preparedQuery(this.dataSource, 'wf-exec-insert', INSERT_SQL, [
      execution.id,
      execution.workflowId,
      execution.workspaceId,
      execution.workflowVersion,
      definition,
      execution.mode,
      execution.triggerNodeId,
      inputJson,
      execution.createdByUserId,
      execution.createdAt,
    ]);
    const data: ExecuteJobData = { executionId: execution.id };
    if (input.reply) data.reply = input.reply;
    if (definition.length + (inputJson?.length ?? 0) <= SNAPSHOT_MAX_BYTES) {
      data.run = { workflowId: execution.workflowId, workspaceId: execution.workspaceId, definition: execution.definition, mode: execution.mode, triggerNodeId: execution.triggerNodeId, input: execution.input };
    }
    // A completed job is removed at once: the execution's row is the record (and keeping thousands of jobs costs Redis a trim per completion).
    await this.queue.add(WORKFLOW_JOBS.execute, data, { jobId: execution.id, attempts: 5, backoff: { type: 'fixed', delay: 200 }, removeOnComplete: true, removeOnFail: { age: 86400 } });
    return execution;
  }
}

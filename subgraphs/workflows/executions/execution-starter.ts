import type { Queue } from 'bullmq';
import type { DataSource } from 'typeorm';
import { ID_PREFIX, newId } from '../../../core/ids';
import { WORKFLOW_JOBS } from '../../../core/queues';
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
}

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
    await this.dataSource.getRepository(ExecutionEntity).insert(execution as never);
    await this.queue.add(WORKFLOW_JOBS.execute, { executionId: execution.id }, { jobId: execution.id, attempts: 5, backoff: { type: 'fixed', delay: 200 }, removeOnComplete: { age: 3600, count: 5000 }, removeOnFail: { age: 86400 } });
    return execution;
  }
}

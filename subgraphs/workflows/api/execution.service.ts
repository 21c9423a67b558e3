import type { Queue } from 'bullmq';
import { In, type DataSource } from 'typeorm';
import { requireUser, requireWorkspaceRole, selectWorkspaceId } from '../../../core/access';
import type { RequestContext } from '../../../core/context';
import { InvalidStateError, NotFoundError, ValidationError } from '../../../core/errors';
import { ID_PREFIX, hasPrefix } from '../../../core/ids';
import type { Logger } from '../../../core/logger';
import { pageResult, toPage, type PageResult } from '../../../core/pagination';
import { TOPICS, type PlatformPubSub } from '../../../core/pubsub';
import type { ExecutionStarter, StartExecutionInput } from '../executions/execution-starter';
import { EXECUTION_STATUSES, ExecutionEntity, ExecutionStepEntity, type ExecutionStatus, type WorkflowEntity } from '../model/entities';
import { FINISHED_STATUSES, type ExecutionEvent } from '../model/events';
import type { NodeRegistry } from '../nodes/types';
import { toExecution, triggersOf } from './workflow.mapper';
import type { WorkflowService } from './workflow.service';
import type { ExecuteInMemoryArgs, ExecuteWorkflowArgs, ExecutionIdArgs, ListExecutionsArgs, WorkflowExecution, WorkflowExecutionEvent } from './workflow.types';
import { validateGraph } from './workflow.validation';

/** Published on TOPICS.workflowExecution (id = execution id) when cancel is asked of a running or waiting execution; the engine aborts it. */
export interface CancelRequestedSignal {
  type: 'cancel-requested';
  executionId: string;
  at: string;
}

export const DEFAULT_WAIT_SECONDS = 30;
export const MAX_WAIT_SECONDS = 300;

/** Columns of an execution in lists (without its definition copy). */
const LIST_COLUMNS: (keyof ExecutionEntity)[] = [
  'id', 'workflowId', 'workspaceId', 'workflowVersion', 'status', 'mode', 'triggerNodeId', 'input', 'output', 'error', 'cancelRequested', 'createdByUserId', 'createdAt', 'startedAt', 'finishedAt', 'durationMs',
];

export interface ExecutionServiceOptions {
  dataSource: DataSource;
  registry: NodeRegistry;
  starter: ExecutionStarter;
  queue: Queue;
  pubsub: PlatformPubSub;
  workflows: WorkflowService;
  logger: Logger;
}

const isFinished = (status: ExecutionStatus) => FINISHED_STATUSES.includes(status);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Starting, reading, cancelling and following executions. Executing needs the member role, reading the viewer role. */
export class ExecutionService {
  constructor(private readonly o: ExecutionServiceOptions) {}

  private get repo() {
    return this.o.dataSource.getRepository(ExecutionEntity);
  }

  async execute(ctx: RequestContext, args: ExecuteWorkflowArgs): Promise<WorkflowExecution> {
    const waitMs = waitTimeoutMs(args);
    const workflow = await this.o.workflows.load(ctx, args.id, 'member');
    return this.start(
      {
        workspaceId: workflow.workspaceId,
        workflowId: workflow.id,
        workflowVersion: workflow.version,
        definition: { nodes: workflow.nodes, connections: workflow.connections, settings: workflow.settings ?? {} },
        mode: 'manual',
        triggerNodeId: triggersOf(workflow.nodes, this.o.registry).manual?.id ?? null,
        input: args.input ?? null,
        userId: ctx.principal!.userId,
      },
      args.wait ? waitMs : null,
    );
  }

  /** Runs an unsaved definition (validated like a saved one) in the selected workspace. */
  async executeInMemory(ctx: RequestContext, args: ExecuteInMemoryArgs): Promise<WorkflowExecution> {
    const waitMs = waitTimeoutMs(args);
    const workspaceId = selectWorkspaceId(ctx, args.workspaceId);
    const principal = requireWorkspaceRole(ctx, workspaceId, 'member');
    if (args.name !== undefined && args.name !== null && (typeof args.name !== 'string' || args.name.length > 200)) {
      throw new ValidationError('name must be at most 200 characters', { field: 'name' });
    }
    const graph = validateGraph(this.o.registry, { nodes: args.nodes, connections: args.connections, settings: args.settings });
    return this.start(
      {
        workspaceId,
        workflowId: null,
        workflowVersion: null,
        definition: graph,
        mode: 'in_memory',
        triggerNodeId: triggersOf(graph.nodes, this.o.registry).manual?.id ?? null,
        input: args.input ?? null,
        userId: principal.userId,
      },
      args.wait ? waitMs : null,
    );
  }

  private async start(input: StartExecutionInput, waitMs: number | null): Promise<WorkflowExecution> {
    const execution = await this.o.starter.start(input);
    if (waitMs === null) return toExecution(execution);
    return this.waitForEnd(execution.id, waitMs);
  }

  /**
   * Waits for the execution's final status event (or the deadline), then answers the row as it
   * is. The row is read right after subscribing and then at least every second, so an event
   * published before the subscription took hold is never waited for in vain.
   */
  async waitForEnd(executionId: string, timeoutMs: number): Promise<WorkflowExecution> {
    const deadline = Date.now() + timeoutMs;
    let signalled = false;
    let wake: () => void = () => undefined;
    let woken = new Promise<void>((resolve) => (wake = resolve));
    const off = this.o.pubsub.on<ExecutionEvent>(
      TOPICS.workflowExecution,
      (event) => {
        if (event?.type === 'status' && isFinished(event.status)) {
          signalled = true;
          wake();
        }
      },
      executionId,
    );
    try {
      for (;;) {
        const row = await this.repo.findOneBy({ id: executionId });
        if (!row) throw new NotFoundError('Execution', executionId);
        const remaining = deadline - Date.now();
        if (isFinished(row.status) || remaining <= 0) return toExecution(row, await this.steps(row.id));
        // After the final event, the row may lag a moment behind it (published, then committed).
        await Promise.race([signalled ? sleep(Math.min(100, remaining)) : woken, sleep(Math.min(1000, remaining))]);
        if (!signalled) woken = new Promise<void>((resolve) => (wake = resolve));
      }
    } finally {
      off();
    }
  }

  async list(ctx: RequestContext, args: ListExecutionsArgs): Promise<PageResult<WorkflowExecution>> {
    const workflow = await this.o.workflows.load(ctx, args.id, 'viewer');
    const page = toPage(args);
    if (args.status && !(EXECUTION_STATUSES as readonly string[]).includes(args.status)) {
      throw new ValidationError(`status must be one of ${EXECUTION_STATUSES.join(', ')}`, { field: 'status' });
    }
    const [rows, total] = await this.repo.findAndCount({
      select: LIST_COLUMNS,
      where: { workflowId: workflow.id, ...(args.status ? { status: args.status as ExecutionStatus } : {}) },
      order: { createdAt: 'DESC', id: 'DESC' },
      skip: page.offset,
      take: page.limit,
    });
    return pageResult(rows.map((r) => toExecution(r)), total, page);
  }

  async get(ctx: RequestContext, args: ExecutionIdArgs): Promise<WorkflowExecution> {
    const workflow = await this.o.workflows.load(ctx, args.id, 'viewer');
    const row = await this.loadOf(workflow, args.executionId);
    return toExecution(row, await this.steps(row.id));
  }

  /**
   * A queued execution is cancelled at once (its job removed); a running or waiting one is asked
   * to stop (cancel_requested, and a cancel-requested signal the engine acts on); a finished one
   * is 409.
   */
  async cancel(ctx: RequestContext, args: ExecutionIdArgs): Promise<WorkflowExecution> {
    const workflow = await this.o.workflows.load(ctx, args.id, 'member');
    const { executionId } = args;
    await this.loadOf(workflow, executionId);
    const at = new Date();
    const queued = await this.repo.update({ id: executionId, status: 'queued' }, { status: 'cancelled', cancelRequested: true, finishedAt: at, error: 'Cancelled' });
    if (queued.affected) {
      await this.o.queue.remove(executionId).catch((err) => this.o.logger.warn('could not remove the job of a cancelled execution', { executionId, err }));
      const event: ExecutionEvent = { type: 'status', executionId, status: 'cancelled', error: 'Cancelled', at: at.toISOString() };
      this.o.pubsub.publish(TOPICS.workflowExecution, event, executionId);
    } else {
      const running = await this.repo.update({ id: executionId, status: In(['running', 'waiting']) }, { cancelRequested: true });
      if (running.affected) {
        const signal: CancelRequestedSignal = { type: 'cancel-requested', executionId, at: at.toISOString() };
        this.o.pubsub.publish(TOPICS.workflowExecution, signal, executionId);
      }
    }
    const row = await this.loadOf(workflow, executionId);
    if (isFinished(row.status) && !(queued.affected && row.status === 'cancelled')) throw new InvalidStateError('execution', row.status, 'cancel');
    return toExecution(row, await this.steps(row.id));
  }

  /** Live events of an execution the caller may read (checked now); ends after the final status. */
  async eventStream(ctx: RequestContext, executionId: string): Promise<AsyncIterable<WorkflowExecutionEvent>> {
    requireUser(ctx);
    if (!hasPrefix(executionId, ID_PREFIX.execution)) throw new NotFoundError('Execution', executionId);
    const found = await this.repo.findOne({ select: ['id', 'workspaceId'], where: { id: executionId } });
    if (!found || !ctx.principal!.memberships[found.workspaceId]) throw new NotFoundError('Execution', executionId);
    requireWorkspaceRole(ctx, found.workspaceId, 'viewer');
    const source = this.o.pubsub.graphql.subscribe(TOPICS.workflowExecution, executionId) as AsyncIterable<ExecutionEvent>;
    const repo = this.repo;
    return (async function* () {
      const iterator = source[Symbol.asyncIterator]();
      const first = iterator.next();
      try {
        // Subscribed: an execution that ended before gets its final status now.
        const now = await repo.findOne({ select: ['id', 'status', 'error', 'finishedAt'], where: { id: executionId } });
        if (now && isFinished(now.status)) {
          yield { type: 'status', executionId, nodeId: null, nodeType: null, status: now.status, error: now.error, durationMs: null, at: (now.finishedAt ?? new Date()).toISOString() };
          return;
        }
        let pending = first;
        for (;;) {
          const next = await pending;
          if (next.done) return;
          const event = next.value;
          if (event?.type === 'step') {
            yield { type: 'step', executionId, nodeId: event.nodeId, nodeType: event.nodeType, status: event.status, error: event.error ?? null, durationMs: event.durationMs ?? null, at: event.at };
          } else if (event?.type === 'status') {
            yield { type: 'status', executionId, nodeId: null, nodeType: null, status: event.status, error: event.error ?? null, durationMs: null, at: event.at };
            if (isFinished(event.status)) return;
          }
          pending = iterator.next();
        }
      } finally {
        await iterator.return?.();
      }
    })();
  }

  private async loadOf(workflow: WorkflowEntity, executionId: string): Promise<ExecutionEntity> {
    if (!hasPrefix(executionId, ID_PREFIX.execution)) throw new NotFoundError('Execution', executionId);
    const row = await this.repo.findOneBy({ id: executionId, workflowId: workflow.id });
    if (!row) throw new NotFoundError('Execution', executionId);
    return row;
  }

  private steps(executionId: string): Promise<ExecutionStepEntity[]> {
    return this.o.dataSource.getRepository(ExecutionStepEntity).find({ where: { executionId }, order: { seq: 'ASC' } });
  }
}

function waitTimeoutMs(args: { timeoutSeconds?: number | null }): number {
  const seconds = args.timeoutSeconds ?? DEFAULT_WAIT_SECONDS;
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_WAIT_SECONDS) {
    throw new ValidationError(`timeoutSeconds must be an integer between 1 and ${MAX_WAIT_SECONDS}`, { field: 'timeoutSeconds' });
  }
  return seconds * 1000;
}

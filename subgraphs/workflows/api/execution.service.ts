import type { Queue } from 'bullmq';
import { In, IsNull, type DataSource, type FindOperator } from 'typeorm';
import { requireUser, requireWorkspaceRole, selectWorkspaceId } from '../../../core/access';
import type { RequestContext } from '../../../core/context';
import { InvalidStateError, NotFoundError, ValidationError } from '../../../core/errors';
import { ID_PREFIX, hasPrefix, newId } from '../../../core/ids';
import type { Logger } from '../../../core/logger';
import { pageResult, toPage, type PageResult } from '../../../core/pagination';
import { TOPICS, type PlatformPubSub } from '../../../core/pubsub';
import { dedupeKey, flattenExecutionEvents, watchExecution } from '../engine/events';
import type { ReplyWaiter } from '../engine/replies';
import type { ExecutionStarter, StartExecutionInput } from '../executions/execution-starter';
import { EXECUTION_STATUSES, ExecutionEntity, ExecutionStepEntity, type ExecutionStatus } from '../model/entities';
import type { WorkspaceRole } from '../../../core/principal';
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

/**
 * The workflow id under which executions of unsaved definitions (execute-in-memory) are listed,
 * read and cancelled: `GET /workflows/in-memory/executions[/{executionId}]` (list: the workspace
 * X-Workspace-ID selects), `POST /workflows/in-memory/executions/{executionId}/cancel`.
 */
export const IN_MEMORY_WORKFLOW_ID = 'in-memory';

/** The list filter of in-memory executions in the selected workspace (viewer role). */
function inMemoryScope(ctx: RequestContext): { workflowId: FindOperator<string>; workspaceId: string } {
  const workspaceId = selectWorkspaceId(ctx);
  requireWorkspaceRole(ctx, workspaceId, 'viewer');
  return { workflowId: IsNull(), workspaceId };
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
  /** This process's reply channel (execute with wait). */
  replies: ReplyWaiter;
}

const isFinished = (status: ExecutionStatus) => FINISHED_STATUSES.includes(status);

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
    if (waitMs === null) return toExecution(await this.o.starter.start(input));
    // The engine sends the final status to this process's reply channel once it is committed.
    const executionId = newId(ID_PREFIX.execution);
    let finished = false;
    let wake: () => void = () => undefined;
    const off = this.o.replies.on(executionId, (reply) => {
      if (reply.kind === 'finished') {
        finished = true;
        wake();
      }
    });
    try {
      await this.o.replies.ready;
      await this.o.starter.start({ ...input, id: executionId, reply: this.o.replies.request('finish') });
      const deadline = Date.now() + waitMs;
      // The row is read first and then at least every second, so a reply that went astray costs at most a second.
      for (;;) {
        const row = await this.repo.findOneBy({ id: executionId });
        if (!row) throw new NotFoundError('Execution', executionId);
        const remaining = deadline - Date.now();
        if (isFinished(row.status) || remaining <= 0) return toExecution(row, await this.steps(row.id));
        if (!finished) await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, Math.min(1000, remaining));
        });
      }
    } finally {
      off();
    }
  }

  async list(ctx: RequestContext, args: ListExecutionsArgs): Promise<PageResult<WorkflowExecution>> {
    // `in-memory`: the selected workspace's executions of unsaved definitions (execute-in-memory).
    const scope = args.id === IN_MEMORY_WORKFLOW_ID ? inMemoryScope(ctx) : { workflowId: (await this.o.workflows.load(ctx, args.id, 'viewer')).id };
    const page = toPage(args);
    if (args.status && !(EXECUTION_STATUSES as readonly string[]).includes(args.status)) {
      throw new ValidationError(`status must be one of ${EXECUTION_STATUSES.join(', ')}`, { field: 'status' });
    }
    const [rows, total] = await this.repo.findAndCount({
      select: LIST_COLUMNS,
      where: { ...scope, ...(args.status ? { status: args.status as ExecutionStatus } : {}) },
      order: { createdAt: 'DESC', id: 'DESC' },
      skip: page.offset,
      take: page.limit,
    });
    return pageResult(rows.map((r) => toExecution(r)), total, page);
  }

  async get(ctx: RequestContext, args: ExecutionIdArgs): Promise<WorkflowExecution> {
    const row = await this.loadFor(ctx, args, 'viewer');
    return toExecution(row, await this.steps(row.id));
  }

  /**
   * A queued execution is cancelled at once (its job removed); a running or waiting one is asked
   * to stop (cancel_requested, and a cancel-requested signal the engine acts on); a finished one
   * is 409.
   */
  async cancel(ctx: RequestContext, args: ExecutionIdArgs): Promise<WorkflowExecution> {
    const { executionId } = args;
    await this.loadFor(ctx, args, 'member');
    const at = new Date();
    const queued = await this.repo.update({ id: executionId, status: 'queued' }, { status: 'cancelled', cancelRequested: true, finishedAt: at, error: 'Cancelled' });
    // Whether this call changed anything; the engine may end a running execution before the row is read back.
    let requested = Boolean(queued.affected);
    if (queued.affected) {
      await this.o.queue.remove(executionId).catch((err) => this.o.logger.warn('could not remove the job of a cancelled execution', { executionId, err }));
      const event: ExecutionEvent = { type: 'status', executionId, status: 'cancelled', error: 'Cancelled', at: at.toISOString() };
      this.o.pubsub.publish(TOPICS.workflowExecution, event, executionId);
    } else {
      const running = await this.repo.update({ id: executionId, status: In(['running', 'waiting']) }, { cancelRequested: true });
      requested = Boolean(running.affected);
      if (running.affected) {
        const signal: CancelRequestedSignal = { type: 'cancel-requested', executionId, at: at.toISOString() };
        this.o.pubsub.publish(TOPICS.workflowExecution, signal, executionId);
        // A waiting execution's job sleeps (delayed) until the wait ends: wake it, so the engine ends it now.
        const job = await this.o.queue.getJob(executionId).catch(() => undefined);
        if (job && (await job.isDelayed().catch(() => false))) await job.promote().catch(() => undefined);
      }
    }
    const row = await this.loadFor(ctx, args, 'member');
    // 409 only for an execution that had ended before this call.
    if (isFinished(row.status) && !requested) throw new InvalidStateError('execution', row.status, 'cancel');
    return toExecution(row, await this.steps(row.id));
  }

  /** Live events of an execution the caller may read (checked now); ends after the final status. */
  async eventStream(ctx: RequestContext, executionId: string): Promise<AsyncIterable<WorkflowExecutionEvent>> {
    requireUser(ctx);
    if (!hasPrefix(executionId, ID_PREFIX.execution)) throw new NotFoundError('Execution', executionId);
    const found = await this.repo.findOne({ select: ['id', 'workspaceId'], where: { id: executionId } });
    if (!found || !ctx.principal!.memberships[found.workspaceId]) throw new NotFoundError('Execution', executionId);
    requireWorkspaceRole(ctx, found.workspaceId, 'viewer');
    const source = this.o.pubsub.graphql.subscribe(TOPICS.workflowExecution, executionId) as AsyncIterable<ExecutionEvent | ExecutionEvent[]>;
    // Engines publish only followed executions' events; the one running it resends its run's events so far.
    const stopWatching = watchExecution(this.o.pubsub, executionId);
    const repo = this.repo;
    const storedSteps = () => this.steps(executionId);
    return (async function* () {
      const iterator = source[Symbol.asyncIterator]();
      const first = iterator.next();
      // A finished step is told once, whether it comes from the table, the resend or live.
      const seen = new Set<string>();
      const fresh = (event: ExecutionEvent): boolean => {
        const key = event.type === 'step' && ['succeeded', 'failed', 'skipped'].includes(event.status) ? `step:${event.nodeId}:${event.status}` : dedupeKey(event);
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      };
      try {
        // Subscribed: an execution that ended before gets its final status now.
        const now = await repo.findOne({ select: ['id', 'status', 'error', 'finishedAt'], where: { id: executionId } });
        if (now && isFinished(now.status)) {
          yield { type: 'status', executionId, nodeId: null, nodeType: null, status: now.status, error: now.error, durationMs: null, at: (now.finishedAt ?? new Date()).toISOString() };
          return;
        }
        // Steps finished before the follow took hold (an earlier run's, or this run's first writes).
        for (const step of await storedSteps()) {
          if (step.status === 'running') continue;
          const at = (step.finishedAt ?? step.startedAt).toISOString();
          if (!fresh({ type: 'step', executionId, nodeId: step.nodeId, nodeType: step.nodeType, status: step.status, at })) continue;
          yield { type: 'step', executionId, nodeId: step.nodeId, nodeType: step.nodeType, status: step.status, error: step.error ?? null, durationMs: step.durationMs ?? null, at };
        }
        let pending = first;
        for (;;) {
          const next = await pending;
          if (next.done) return;
          // The engine publishes the events a write recorded as one message (flattenExecutionEvents).
          for (const event of flattenExecutionEvents(next.value) as ExecutionEvent[]) {
            if (!event || (event.type !== 'step' && event.type !== 'status') || !fresh(event)) continue;
            if (event.type === 'step') {
              yield { type: 'step', executionId, nodeId: event.nodeId, nodeType: event.nodeType, status: event.status, error: event.error ?? null, durationMs: event.durationMs ?? null, at: event.at };
            } else {
              yield { type: 'status', executionId, nodeId: null, nodeType: null, status: event.status, error: event.error ?? null, durationMs: null, at: event.at };
              if (isFinished(event.status)) return;
            }
          }
          pending = iterator.next();
        }
      } finally {
        stopWatching();
        await iterator.return?.();
      }
    })();
  }

  /**
   * The execution `executionId` of workflow `id` the caller may act on with `role`; with `id` =
   * `in-memory`, an execution of an unsaved definition, found in whichever workspace of the
   * caller holds it. 404 for anything else, including another workspace's.
   */
  private async loadFor(ctx: RequestContext, args: ExecutionIdArgs, role: WorkspaceRole): Promise<ExecutionEntity> {
    const { executionId } = args;
    if (args.id === IN_MEMORY_WORKFLOW_ID) {
      requireUser(ctx);
      const row = hasPrefix(executionId, ID_PREFIX.execution) ? await this.repo.findOneBy({ id: executionId, workflowId: IsNull() }) : null;
      if (!row || !ctx.principal!.memberships[row.workspaceId]) throw new NotFoundError('Execution', executionId);
      requireWorkspaceRole(ctx, row.workspaceId, role);
      return row;
    }
    const workflow = await this.o.workflows.load(ctx, args.id, role);
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

import { DelayedError, type Job } from 'bullmq';
import { setTimeout as delay } from 'node:timers/promises';
import { planExecution } from '../../../subgraphs/workflows/engine/graph';
import { onExecutionEvents, publishExecutionEvent } from '../../../subgraphs/workflows/engine/events';
import type { ExecutionStatus, WorkflowNode, WorkflowSettings } from '../../../subgraphs/workflows/model/entities';
import { FINISHED_STATUSES } from '../../../subgraphs/workflows/model/events';
import { resolveParameters } from '../../../subgraphs/workflows/nodes';
import type { ExpressionScope, Item, NodeExecutionContext, NodeResult } from '../../../subgraphs/workflows/nodes/types';
import type { WorkflowsContext } from './context';

/** A stored step, as the engine reads it back on resume. */
interface StoredStep {
  node_id: string;
  status: 'running' | 'succeeded' | 'failed' | 'skipped';
  output: Item[][] | null;
  attempts: number;
  seq: number;
  duration_ms: number | null;
}

interface ExecutionRow {
  id: string;
  workflow_id: string | null;
  workspace_id: string;
  definition: { nodes: WorkflowNode[]; connections: { from: string; fromOutput?: number; to: string }[]; settings: WorkflowSettings };
  status: ExecutionStatus;
  mode: string;
  trigger_node_id: string | null;
  input: unknown;
  cancel_requested: boolean;
}

type StopReason = 'cancelled' | 'timed out' | 'shutdown';

/** Thrown into a step when the execution stops under it (cancel, timeout, worker shutdown). */
class StopError extends Error {
  constructor(readonly reason: StopReason) {
    super(reason === 'cancelled' ? 'Execution was cancelled' : reason === 'timed out' ? 'Execution timed out' : 'Worker is shutting down');
  }
}

/** Attempts per step: settings.retries is the number of attempts (WorkflowSettings), at least 1. */
export function maxAttempts(settings: WorkflowSettings | undefined): number {
  const retries = Number(settings?.retries ?? 1);
  return Number.isFinite(retries) ? Math.max(1, Math.min(10, Math.floor(retries))) : 1;
}

const FINISHED = new Set<string>(FINISHED_STATUSES);

export interface RunOptions {
  /** The BullMQ job and its lock token: a wait moves the job to delayed. */
  job?: Job;
  token?: string;
  /** Aborts when the worker gives up on the job (shutdown): the execution is left to resume elsewhere. */
  signal?: AbortSignal;
}

/**
 * Runs an execution, or resumes it from its first unfinished step. Returns when it finished (or
 * was already finished or gone); throws DelayedError after a wait moved the job to delayed, and
 * other errors when the worker stops under it (the job's retry resumes it).
 */
export async function runExecution(w: WorkflowsContext, executionId: string, options: RunOptions = {}): Promise<ExecutionStatus | 'gone'> {
  const { dataSource: db, ctx } = w;
  const rows = (await db.query(
    `SELECT id, workflow_id, workspace_id, definition, status, mode, trigger_node_id, input, cancel_requested FROM workflows.executions WHERE id = $1`,
    [executionId],
  )) as ExecutionRow[];
  const execution = rows[0];
  if (!execution) return 'gone';
  if (FINISHED.has(execution.status)) return execution.status;

  const finish = async (status: 'succeeded' | 'failed' | 'cancelled', error: string | null, output: unknown): Promise<ExecutionStatus> => {
    const done = (await db.query(
      `UPDATE workflows.executions SET status = $2, error = $3, output = $4, finished_at = now(),
         duration_ms = GREATEST(0, (EXTRACT(EPOCH FROM (now() - COALESCE(started_at, created_at))) * 1000)::int)
       WHERE id = $1 AND status NOT IN ('succeeded', 'failed', 'cancelled') RETURNING id`,
      [executionId, status, error, output === undefined ? null : JSON.stringify(output)],
    )) as unknown[];
    if (done.length === 0) return status;
    publishExecutionEvent(ctx.pubsub, { type: 'status', executionId, status, error, output });
    return status;
  };

  if (execution.cancel_requested) {
    const status = await finish('cancelled', 'Execution was cancelled', null);
    publishExecutionEvent(ctx.pubsub, { type: 'respond', executionId, response: { status: 500, headers: {}, body: { error: 'Execution was cancelled' } } });
    return status;
  }

  const fresh = execution.status === 'queued';
  await db.query(`UPDATE workflows.executions SET status = 'running', started_at = COALESCE(started_at, now()) WHERE id = $1 AND status NOT IN ('succeeded', 'failed', 'cancelled')`, [executionId]);
  publishExecutionEvent(ctx.pubsub, { type: 'status', executionId, status: 'running' });

  // A fresh execution has no steps yet: skip the read.
  const stored = new Map<string, StoredStep>();
  if (!fresh) {
    for (const step of (await db.query(`SELECT node_id, status, output, attempts, seq, duration_ms FROM workflows.execution_steps WHERE execution_id = $1`, [executionId])) as StoredStep[]) {
      stored.set(step.node_id, step);
    }
  }

  const { nodes, connections, settings = {} } = execution.definition;
  const plan = planExecution(nodes, connections, execution.trigger_node_id);
  const attemptsAllowed = maxAttempts(settings);
  // The timeout counts time spent in steps, not time spent waiting (a wait node may sleep for days).
  const timeoutMs = Math.max(1, Number(settings.timeoutSeconds ?? ctx.config.workflows.executionDefaultTimeoutSeconds)) * 1000;
  const spentMs = [...stored.values()].reduce((sum, s) => sum + (s.status === 'succeeded' ? (s.duration_ms ?? 0) : 0), 0);
  const deadline = Date.now() + Math.max(0, timeoutMs - spentMs);

  // One controller for the whole run: cancel, timeout and worker shutdown abort the running step.
  const stop = new AbortController();
  let stopReason: StopReason | null = null;
  const stopWith = (reason: StopReason): void => {
    if (stopReason) return;
    stopReason = reason;
    stop.abort(new StopError(reason));
  };
  const timer = setTimeout(() => stopWith('timed out'), Math.max(0, deadline - Date.now()));
  const onShutdown = (): void => stopWith('shutdown');
  options.signal?.addEventListener('abort', onShutdown, { once: true });
  if (options.signal?.aborted) onShutdown();
  // The cancel signal is listened for only once the run lasts (a Redis SUBSCRIBE per execution is
  // not free); until then, and between steps always, cancel_requested is read with each step's write.
  let unsubscribe = (): void => undefined;
  const listen = setTimeout(() => {
    unsubscribe = onExecutionEvents(ctx.pubsub, executionId, (event) => {
      if (event.type === 'cancel-requested') stopWith('cancelled');
    });
    // A cancel asked for before the subscription took hold is in the row.
    setTimeout(() => {
      if (stopReason) return;
      db.query(`SELECT cancel_requested FROM workflows.executions WHERE id = $1`, [executionId]).then(
        (rows: Array<{ cancel_requested: boolean }>) => rows[0]?.cancel_requested && stopWith('cancelled'),
        () => undefined,
      );
    }, 100).unref();
  }, 50);

  const outputs = new Map<string, Item[][] | null>();
  for (const [nodeId, step] of stored) if (step.status === 'succeeded') outputs.set(nodeId, step.output ?? []);
  let seq = Math.max(0, ...[...stored.values()].map((s) => s.seq));
  let lastOutput: Item[][] | null = null;
  let responded = false;
  const input = execution.input;
  const trigger: Record<string, unknown> = input !== null && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : { input };
  const byName: ExpressionScope['$node'] = {};
  const nameOf = new Map(nodes.map((n) => [n.id, n.name]));
  const remember = (nodeId: string, out: Item[][] | null) => {
    const items = out?.[0] ?? [];
    byName[nameOf.get(nodeId) ?? nodeId] = { json: items[0]?.json ?? {}, items };
  };
  for (const [nodeId, out] of outputs) remember(nodeId, out);

  const respondOnce = (response: { status: number; headers: Record<string, string>; body: unknown }) => {
    if (responded) return;
    responded = true;
    publishExecutionEvent(ctx.pubsub, { type: 'respond', executionId, response });
  };

  const fail = async (message: string): Promise<ExecutionStatus> => {
    respondOnce({ status: 500, headers: {}, body: { error: message } });
    return finish('failed', message, null);
  };

  try {
    for (const node of plan.order) {
      const done = stored.get(node.id);
      if (done && (done.status === 'succeeded' || done.status === 'skipped')) {
        // Crash resume: a finished step is never run again; its stored output feeds the rest.
        if (done.status === 'succeeded' && (done.output?.length ?? 0) > 0) lastOutput = done.output;
        continue;
      }
      if (stopReason) break;

      // Inputs: one per incoming connection (in the definition's order); the start node gets the execution input.
      let inputs: Item[][];
      if (plan.starts.has(node.id)) {
        inputs = [inputItems(input)];
      } else {
        inputs = (plan.incoming.get(node.id) ?? []).map((c) => outputs.get(c.from)?.[c.fromOutput ?? 0] ?? []);
        if (inputs.every((items) => items.length === 0)) {
          const skipSeq = done?.seq ?? ++seq;
          await db.query(
            `INSERT INTO workflows.execution_steps (execution_id, node_id, workspace_id, node_type, seq, status, input, attempts, started_at, finished_at, duration_ms)
             VALUES ($1, $2, $3, $4, $5, 'skipped', '[]', 0, now(), now(), 0)
             ON CONFLICT (execution_id, node_id) DO UPDATE SET status = 'skipped', finished_at = now(), duration_ms = 0 WHERE execution_steps.status NOT IN ('succeeded', 'skipped')`,
            [executionId, node.id, execution.workspace_id, node.type, skipSeq],
          );
          outputs.set(node.id, null);
          publishExecutionEvent(ctx.pubsub, { type: 'step', executionId, nodeId: node.id, nodeType: node.type, status: 'skipped', durationMs: 0 });
          continue;
        }
      }
      const items = inputs.flat();

      // Claim the step: a new row, or the row of a step the last worker died in (attempts + 1, same seq).
      const stepSeq = done?.seq ?? ++seq;
      const claimed = (await db.query(
        `INSERT INTO workflows.execution_steps (execution_id, node_id, workspace_id, node_type, seq, status, input, attempts, started_at)
         VALUES ($1, $2, $3, $4, $5, 'running', $6, 1, now())
         ON CONFLICT (execution_id, node_id) DO UPDATE SET status = 'running', attempts = execution_steps.attempts + 1, input = EXCLUDED.input,
           started_at = now(), finished_at = NULL, duration_ms = NULL, error = NULL
           WHERE execution_steps.status IN ('running', 'failed')
         RETURNING attempts`,
        [executionId, node.id, execution.workspace_id, node.type, stepSeq, JSON.stringify(items)],
      )) as Array<{ attempts: number }>;
      if (claimed.length === 0) {
        // Another run finished it meanwhile: reuse what it stored.
        const [row] = (await db.query(`SELECT output, status FROM workflows.execution_steps WHERE execution_id = $1 AND node_id = $2`, [executionId, node.id])) as StoredStep[];
        const out = row?.status === 'succeeded' ? (row.output ?? []) : null;
        outputs.set(node.id, out);
        remember(node.id, out);
        if (out?.length) lastOutput = out;
        continue;
      }
      publishExecutionEvent(ctx.pubsub, { type: 'step', executionId, nodeId: node.id, nodeType: node.type, status: 'running' });

      const type = w.registry.get(node.type);
      let result: NodeResult | undefined;
      let error: string | null = null;
      const startedAt = Date.now();
      let attempt = 1;
      if (!type) {
        error = `Unknown node type "${node.type}"`;
      } else {
        for (;;) {
          try {
            result = await runNode(w, execution, node, type, items, inputs, trigger, byName, stop.signal, deadline);
            error = null;
            break;
          } catch (err) {
            if (stopReason) break;
            error = (err as Error)?.message ?? String(err);
            if (attempt >= attemptsAllowed) break;
            attempt += 1;
            await db.query(`UPDATE workflows.execution_steps SET attempts = attempts + 1 WHERE execution_id = $1 AND node_id = $2`, [executionId, node.id]);
            await delay(Math.min(2000, 100 * 2 ** (attempt - 2)), undefined, { signal: stop.signal }).catch(() => undefined);
            if (stopReason) break;
          }
        }
      }
      const durationMs = Date.now() - startedAt;

      if (stopReason === 'shutdown') {
        // The step stays running: the job's retry (another worker) runs it again with attempts + 1.
        throw new StopError('shutdown');
      }
      if (stopReason || error !== null || !result) {
        const message = stopReason ? new StopError(stopReason).message : error ?? 'Step produced no result';
        await db.query(
          `UPDATE workflows.execution_steps SET status = 'failed', error = $3, finished_at = now(), duration_ms = $4 WHERE execution_id = $1 AND node_id = $2`,
          [executionId, node.id, message, durationMs],
        );
        publishExecutionEvent(ctx.pubsub, { type: 'step', executionId, nodeId: node.id, nodeType: node.type, status: 'failed', error: message, durationMs });
        if (stopReason === 'cancelled') {
          respondOnce({ status: 500, headers: {}, body: { error: 'Execution was cancelled' } });
          return await finish('cancelled', 'Execution was cancelled', null);
        }
        if (stopReason === 'timed out') return await fail('Execution timed out');
        return await fail(`${node.name}: ${message}`);
      }

      let out: Item[][];
      if (result.kind === 'wait') out = [items];
      else out = result.outputs;
      if (result.kind === 'respond') respondOnce(result.response);

      // Finish the step and learn, in the same round trip, whether a cancel was asked for meanwhile.
      const [after] = (await db.query(
        `WITH step AS (
           UPDATE workflows.execution_steps SET status = 'succeeded', output = $3, finished_at = now(), duration_ms = $4 WHERE execution_id = $1 AND node_id = $2 RETURNING 1
         )
         SELECT cancel_requested FROM workflows.executions WHERE id = $1`,
        [executionId, node.id, JSON.stringify(out), durationMs],
      )) as Array<{ cancel_requested: boolean }>;
      outputs.set(node.id, out);
      remember(node.id, out);
      if (out.length) lastOutput = out;
      publishExecutionEvent(ctx.pubsub, { type: 'step', executionId, nodeId: node.id, nodeType: node.type, status: result.kind === 'wait' ? 'waiting' : 'succeeded', durationMs });
      if (after?.cancel_requested) stopWith('cancelled');

      if (result.kind === 'wait') {
        const until = result.until.getTime();
        if (until > Date.now() + 20) {
          await db.query(`UPDATE workflows.executions SET status = 'waiting' WHERE id = $1 AND status = 'running'`, [executionId]);
          publishExecutionEvent(ctx.pubsub, { type: 'status', executionId, status: 'waiting' });
          if (options.job && options.token) {
            await options.job.moveToDelayed(until, options.token);
            throw new DelayedError();
          }
          // Without a job (direct calls), wait here.
          await delay(until - Date.now(), undefined, { signal: stop.signal }).catch(() => undefined);
          await db.query(`UPDATE workflows.executions SET status = 'running' WHERE id = $1 AND status = 'waiting'`, [executionId]);
        }
      }
    }

    if (stopReason === 'cancelled') {
      respondOnce({ status: 500, headers: {}, body: { error: 'Execution was cancelled' } });
      return await finish('cancelled', 'Execution was cancelled', null);
    }
    if (stopReason === 'timed out') return await fail('Execution timed out');
    if (stopReason === 'shutdown') throw new StopError('shutdown');

    // The execution's output: the last node's first output (its items' json).
    const finalItems = (lastOutput?.[0] ?? []).map((item) => item.json);
    // A webhook waiting for the last node gets its first item (the webhook route applies its own status code).
    if (execution.mode === 'webhook') respondOnce({ status: 200, headers: {}, body: finalItems[0] ?? {} });
    return await finish('succeeded', null, finalItems);
  } finally {
    clearTimeout(timer);
    clearTimeout(listen);
    options.signal?.removeEventListener('abort', onShutdown);
    unsubscribe();
  }
}

/** The execution input as the start node's items: an array of objects is several items, anything else one. */
function inputItems(input: unknown): Item[] {
  if (Array.isArray(input)) return input.map((v) => ({ json: v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v } }));
  if (input !== null && typeof input === 'object') return [{ json: input as Record<string, unknown> }];
  return [{ json: input === null || input === undefined ? {} : { input } }];
}

async function runNode(
  w: WorkflowsContext,
  execution: ExecutionRow,
  node: WorkflowNode,
  type: NonNullable<ReturnType<WorkflowsContext['registry']['get']>>,
  items: Item[],
  inputs: Item[][],
  trigger: Record<string, unknown>,
  byName: ExpressionScope['$node'],
  signal: AbortSignal,
  deadline: number,
): Promise<NodeResult> {
  signal.throwIfAborted();
  const scope: Omit<ExpressionScope, '$json'> = {
    $node: byName,
    $trigger: trigger,
    $execution: { id: execution.id, workflowId: execution.workflow_id, mode: execution.mode },
    $now: new Date().toISOString(),
  };
  const skip = ((type.definition as { noExpressions?: readonly string[] }).noExpressions ?? []) as readonly string[];
  const resolved = new Map<number, Record<string, unknown>>();
  const rawParameters = node.parameters ?? {};
  const context: NodeExecutionContext = {
    executionId: execution.id,
    workspaceId: execution.workspace_id,
    node,
    parametersFor(i) {
      let params = resolved.get(i);
      if (!params) {
        params = resolveParameters(rawParameters, { ...scope, $json: items[i]?.json ?? {} }, { skip });
        resolved.set(i, params);
      }
      return params;
    },
    rawParameters,
    items,
    inputs,
    scope,
    signal,
    services: w.services,
    remainingMs: Math.max(0, deadline - Date.now()),
  };
  // A node that ignores its signal must not hold the execution: the abort wins the race.
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([type.executor.execute(context), aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort!);
  }
}

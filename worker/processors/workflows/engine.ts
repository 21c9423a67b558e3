import { DelayedError, type Job } from 'bullmq';
import { setTimeout as delay } from 'node:timers/promises';
import { preparedQuery } from '../../../core/database';
import { planExecution } from '../../../subgraphs/workflows/engine/graph';
import { onExecutionEvents, publishExecutionEvents, type Without } from '../../../subgraphs/workflows/engine/events';
import { publishReply, type ReplyRequest, type WebhookResponse } from '../../../subgraphs/workflows/engine/replies';
import type { ExecutionStatus, StepStatus, WorkflowNode, WorkflowSettings } from '../../../subgraphs/workflows/model/entities';
import { FINISHED_STATUSES, type ExecutionEvent } from '../../../subgraphs/workflows/model/events';
import { resolveParameters } from '../../../subgraphs/workflows/nodes';
import type { ExpressionScope, Item, NodeExecutionContext, NodeResult, NodeType } from '../../../subgraphs/workflows/nodes/types';
import type { WorkflowsContext } from './context';
import { acquireSlot, releaseSlot, type SlotLease } from './concurrency';

/** A stored step, as the engine reads it back on resume. */
interface StoredStep {
  node_id: string;
  status: StepStatus;
  output: Item[][] | null;
  attempts: number;
  seq: number;
  duration_ms: number | null;
}

/** A step row as the engine writes it (jsonb_to_recordset of STEPS_SQL). */
interface StepRow {
  node_id: string;
  node_type: string;
  seq: number;
  status: StepStatus;
  input: Item[] | null;
  output: Item[][] | null;
  error: string | null;
  attempts: number;
  started_at: string;
  finished_at: string | null;
  duration_ms: number | null;
}

interface ExecutionRow {
  prev_status: ExecutionStatus;
  id: string;
  workflow_id: string | null;
  workspace_id: string;
  definition: { nodes: WorkflowNode[]; connections: { from: string; fromOutput?: number; to: string }[]; settings: WorkflowSettings };
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
const FINISHED_SQL = `('succeeded', 'failed', 'cancelled')`;

/**
 * Marks the execution running (unless it is finished, or a cancel was asked for) and reads it, in
 * one round trip; prev_status is what it was (queued: a fresh run, no steps stored yet).
 */
const START_SQL = `
  UPDATE workflows.executions e
     SET status = CASE WHEN e.cancel_requested THEN e.status ELSE 'running' END, started_at = COALESCE(e.started_at, now())
    FROM (SELECT id, status FROM workflows.executions WHERE id = $1 FOR UPDATE) prev
   WHERE e.id = prev.id AND prev.status NOT IN ${FINISHED_SQL}
  RETURNING prev.status AS prev_status, e.id, e.workflow_id, e.workspace_id, e.definition, e.mode, e.trigger_node_id, e.input, e.cancel_requested`;

/**
 * Writes step rows ($3: a JSON array of StepRow) in one statement. A row meets a stored one only
 * when a run died in that step (status running or failed): a `running` row claims it again with
 * attempts + 1; a finished row replaces it. Steps another run finished are left alone, and are not
 * in RETURNING.
 */
const STEPS_INSERT = `
  INSERT INTO workflows.execution_steps (execution_id, node_id, workspace_id, node_type, seq, status, input, output, error, attempts, started_at, finished_at, duration_ms)
  SELECT $1, s.node_id, $2, s.node_type, s.seq, s.status, s.input, s.output, s.error, s.attempts, s.started_at, s.finished_at, s.duration_ms
    FROM jsonb_to_recordset($3::jsonb) AS s(node_id text, node_type text, seq int, status text, input jsonb, output jsonb, error text, attempts int,
                                             started_at timestamptz, finished_at timestamptz, duration_ms int)
  ON CONFLICT (execution_id, node_id) DO UPDATE SET status = EXCLUDED.status, input = EXCLUDED.input, output = EXCLUDED.output, error = EXCLUDED.error,
    attempts = CASE WHEN EXCLUDED.status = 'running' THEN execution_steps.attempts + 1 ELSE GREATEST(execution_steps.attempts, EXCLUDED.attempts) END,
    started_at = CASE WHEN EXCLUDED.status = 'running' THEN EXCLUDED.started_at ELSE execution_steps.started_at END,
    finished_at = EXCLUDED.finished_at, duration_ms = EXCLUDED.duration_ms
  WHERE execution_steps.status IN ('running', 'failed')`;
const STEPS_SQL = `${STEPS_INSERT} RETURNING node_id, attempts`;

/**
 * The last buffered steps and the execution's end, in one statement; no row (and no steps
 * written) when it had already ended, e.g. cancelled while a fresh run was still in memory. $7:
 * when this run began, for a run that never wrote before (started_at).
 */
const FINISH_SQL = `
  WITH steps AS (
    ${STEPS_INSERT.replace('FROM jsonb_to_recordset', 'FROM (SELECT 1 FROM workflows.executions WHERE id = $1 AND status NOT IN ' + FINISHED_SQL + ') live, jsonb_to_recordset')}
  )
  UPDATE workflows.executions SET status = $4, error = $5, output = $6, finished_at = now(), started_at = COALESCE(started_at, $7),
         duration_ms = GREATEST(0, (EXTRACT(EPOCH FROM (now() - COALESCE(started_at, $7, created_at))) * 1000)::int)
   WHERE id = $1 AND status NOT IN ${FINISHED_SQL}
  RETURNING id`;

/** A step with side effects ends at once, and the same round trip tells whether a cancel was asked for. */
const STEP_END_SQL = `
  WITH step AS (
    UPDATE workflows.execution_steps SET status = 'succeeded', output = $3, finished_at = now(), duration_ms = $4, attempts = GREATEST(attempts, $5)
     WHERE execution_id = $1 AND node_id = $2 RETURNING 1
  )
  SELECT cancel_requested FROM workflows.executions WHERE id = $1`;

/** Buffered steps are written once this many are waiting, whatever comes next. */
const MAX_BUFFERED_STEPS = 64;

/**
 * What a fresh run needs of its execution, carried in the job when small (ExecutionStarter), so
 * the run reads nothing before its first write.
 */
export interface ExecutionSnapshot {
  workflowId: string | null;
  workspaceId: string;
  definition: ExecutionRow['definition'];
  mode: string;
  triggerNodeId: string | null;
  input: unknown;
}

export interface RunOptions {
  /** The BullMQ job and its lock token: a wait moves the job to delayed. */
  job?: Job;
  token?: string;
  /** Aborts when the worker gives up on the job (shutdown): the execution is left to resume elsewhere. */
  signal?: AbortSignal;
  /** Who waits for this execution's answer, and which (from the job). */
  reply?: ReplyRequest;
  /** The execution, for a first run (the job's first activation): the row is not read, and is first written when a step needs it. */
  snapshot?: ExecutionSnapshot;
}

/** The execution ended under a run that had not written yet (cancelled while queued): the run stops quietly. */
class EndedError extends Error {}

/**
 * Runs an execution, or resumes it from its first unfinished step. Returns when it finished (or
 * was already finished or gone); throws DelayedError after a wait (or a full concurrency limit)
 * moved the job to delayed, and other errors when the worker stops under it (the job's retry
 * resumes it). Persistence, batching and events: README.md.
 */
export async function runExecution(w: WorkflowsContext, executionId: string, options: RunOptions = {}): Promise<ExecutionStatus | 'gone'> {
  const { ctx } = w;
  const query = <T>(name: string, text: string, values: unknown[]) => preparedQuery<T>(w.dataSource, name, text, values);
  const statusNow = async (): Promise<ExecutionStatus | 'gone'> => {
    const [row] = await query<{ status: ExecutionStatus }>('wf-exec-status', `SELECT status FROM workflows.executions WHERE id = $1`, [executionId]);
    return row?.status ?? 'gone';
  };
  const pickedAt = new Date();
  let execution: ExecutionRow;
  // Whether this run marked the execution running (START_SQL): a fresh run from a snapshot does so with its first write.
  let started = false;
  if (options.snapshot) {
    const snap = options.snapshot;
    execution = { prev_status: 'queued', id: executionId, workflow_id: snap.workflowId, workspace_id: snap.workspaceId, definition: snap.definition, mode: snap.mode, trigger_node_id: snap.triggerNodeId, input: snap.input, cancel_requested: false };
  } else {
    const [row] = await query<ExecutionRow>('wf-exec-start', START_SQL, [executionId]);
    if (!row) return statusNow();
    execution = row;
    started = true;
  }

  // Events are gathered and published after the write that records them commits.
  // They go out only while someone follows the execution (WatchedExecutions); a follower who comes
  // later gets this run's events so far (history) at once.
  let events: ExecutionEvent[] = [];
  const history: ExecutionEvent[] = [];
  const emit = (event: Without<ExecutionEvent, 'at'>) => events.push({ ...event, at: new Date().toISOString() } as ExecutionEvent);
  const publish = () => {
    if (events.length === 0) return;
    history.push(...events);
    if (w.watched.isWatched(executionId)) publishExecutionEvents(ctx.pubsub, executionId, events);
    events = [];
  };
  // When a run ends (finished, or waiting), its whole history goes out whoever follows: a follower
  // whose announcement has not arrived yet still sees every event of the run (and drops repeats).
  const publishRunEnd = () => {
    history.push(...events);
    events = [];
    publishExecutionEvents(ctx.pubsub, executionId, history);
  };
  // Steps without side effects (NodeType.replayable) and skipped steps are written with the next write.
  let buffered: StepRow[] = [];

  let responded = false;
  const respondOnce = (response: WebhookResponse) => {
    if (responded) return;
    responded = true;
    if (options.reply?.on === 'respond') publishReply(ctx.pubsub, options.reply.to, { kind: 'respond', executionId, response });
  };

  let lease: SlotLease | null = null;
  const finish = async (status: 'succeeded' | 'failed' | 'cancelled', error: string | null, output: unknown): Promise<ExecutionStatus> => {
    const rows = buffered;
    buffered = [];
    const done = await query('wf-exec-finish', FINISH_SQL, [executionId, execution.workspace_id, JSON.stringify(rows), status, error, output === undefined ? null : JSON.stringify(output), pickedAt]);
    if (lease) await releaseSlot(w, lease);
    lease = null;
    if (done.length === 0) return status;
    emit({ type: 'status', executionId, status, error, output });
    publishRunEnd();
    if (options.reply?.on === 'finish') publishReply(ctx.pubsub, options.reply.to, { kind: 'finished', executionId, status });
    return status;
  };

  if (execution.cancel_requested) {
    respondOnce({ status: 500, headers: {}, body: { error: 'Execution was cancelled' } });
    return finish('cancelled', 'Execution was cancelled', null);
  }

  const { nodes, connections, settings = {} } = execution.definition;
  let stopWith: (reason: StopReason) => void = () => undefined;
  /** Marks the execution running before the first write of a fresh run; EndedError when it ended meanwhile. */
  const ensureStarted = async (): Promise<void> => {
    if (started) return;
    const [row] = await query<ExecutionRow>('wf-exec-start', START_SQL, [executionId]);
    started = true;
    if (!row) throw new EndedError();
    if (row.cancel_requested) stopWith('cancelled');
  };
  // settings.concurrency: a run that finds the workflow's slots taken goes back to the queue for a moment.
  if (execution.workflow_id && settings.concurrency) {
    lease = await acquireSlot(w, execution.workflow_id, executionId, settings.concurrency);
    if (!lease) {
      // Back to what it was (queued stays fresh: no steps were written).
      if (started) await query('wf-exec-requeue', `UPDATE workflows.executions SET status = $2 WHERE id = $1 AND status = 'running'`, [executionId, execution.prev_status]);
      if (options.job && options.token) {
        await options.job.moveToDelayed(Date.now() + 100 + Math.floor(Math.random() * 150), options.token);
        throw new DelayedError();
      }
      throw new Error(`workflow ${execution.workflow_id} is at its concurrency limit (${settings.concurrency})`);
    }
  }
  emit({ type: 'status', executionId, status: 'running' });

  // A fresh execution has no steps yet: skip the read.
  const stored = new Map<string, StoredStep>();
  if (execution.prev_status !== 'queued') {
    const steps = await query<StoredStep>('wf-steps-read', `SELECT node_id, status, output, attempts, seq, duration_ms FROM workflows.execution_steps WHERE execution_id = $1`, [executionId]);
    for (const step of steps) stored.set(step.node_id, step);
  }

  /** Writes the buffered steps plus `claim` (a step about to run), then publishes their events; the claim's attempts, or null when another run finished it. */
  const write = async (claim?: StepRow): Promise<number | null> => {
    const rows = claim ? [...buffered, claim] : buffered;
    if (rows.length === 0) return null;
    await ensureStarted();
    buffered = [];
    const returned = await query<{ node_id: string; attempts: number }>('wf-steps-write', STEPS_SQL, [executionId, execution.workspace_id, JSON.stringify(rows)]);
    publish();
    return claim ? (returned.find((r) => r.node_id === claim.node_id)?.attempts ?? null) : null;
  };

  const plan = planExecution(nodes, connections, execution.trigger_node_id);
  const attemptsAllowed = maxAttempts(settings);
  // The timeout counts time spent in steps, not time spent waiting (a wait node may sleep for days).
  const timeoutMs = Math.max(1, Number(settings.timeoutSeconds ?? ctx.config.workflows.executionDefaultTimeoutSeconds)) * 1000;
  const spentMs = [...stored.values()].reduce((sum, s) => sum + (s.status === 'succeeded' ? (s.duration_ms ?? 0) : 0), 0);
  const deadline = Date.now() + Math.max(0, timeoutMs - spentMs);

  // One controller for the whole run: cancel, timeout and worker shutdown abort the running step.
  const stop = new AbortController();
  let stopReason: StopReason | null = null;
  stopWith = (reason: StopReason): void => {
    if (stopReason) return;
    stopReason = reason;
    stop.abort(new StopError(reason));
  };
  const timer = setTimeout(() => stopWith('timed out'), Math.max(0, deadline - Date.now()));
  const onShutdown = (): void => stopWith('shutdown');
  options.signal?.addEventListener('abort', onShutdown, { once: true });
  if (options.signal?.aborted) onShutdown();
  // The cancel signal is listened for only once the run lasts (a Redis SUBSCRIBE per execution is
  // not free); until then cancel_requested is read with each write of a step with side effects.
  let unsubscribe = (): void => undefined;
  const listen = setTimeout(() => {
    unsubscribe = onExecutionEvents(
      ctx.pubsub,
      executionId,
      (event) => {
        if (event.type === 'cancel-requested') stopWith('cancelled');
      },
      { watch: false },
    );
    // A cancel asked for before the subscription took hold is in the row.
    setTimeout(() => {
      if (stopReason) return;
      query<{ cancel_requested: boolean }>('wf-exec-cancelled', `SELECT cancel_requested FROM workflows.executions WHERE id = $1`, [executionId]).then(
        (rows) => rows[0]?.cancel_requested && stopWith('cancelled'),
        () => undefined,
      );
    }, 100).unref();
  }, 50);

  const outputs = new Map<string, Item[][] | null>();
  for (const [nodeId, step] of stored) if (step.status === 'succeeded') outputs.set(nodeId, step.output ?? []);
  let seq = Math.max(0, ...[...stored.values()].map((s) => s.seq));
  let lastOutput: Item[][] | null = null;
  const input = execution.input;
  const trigger: Record<string, unknown> = input !== null && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : { input };
  const byName: ExpressionScope['$node'] = {};
  const nameOf = new Map(nodes.map((n) => [n.id, n.name]));
  const remember = (nodeId: string, out: Item[][] | null) => {
    const items = out?.[0] ?? [];
    byName[nameOf.get(nodeId) ?? nodeId] = { json: items[0]?.json ?? {}, items };
  };
  for (const [nodeId, out] of outputs) remember(nodeId, out);

  const fail = async (message: string): Promise<ExecutionStatus> => {
    respondOnce({ status: 500, headers: {}, body: { error: message } });
    return finish('failed', message, null);
  };
  const cancelled = async (): Promise<ExecutionStatus> => {
    respondOnce({ status: 500, headers: {}, body: { error: 'Execution was cancelled' } });
    return finish('cancelled', 'Execution was cancelled', null);
  };

  const stopResending = w.watched.onWatch(executionId, () => publishExecutionEvents(ctx.pubsub, executionId, history));
  try {
    for (const node of plan.order) {
      const done = stored.get(node.id);
      if (done && (done.status === 'succeeded' || done.status === 'skipped')) {
        // Crash resume: a finished step is never run again; its stored output feeds the rest.
        if (done.status === 'succeeded' && (done.output?.length ?? 0) > 0) lastOutput = done.output;
        continue;
      }
      if (stopReason) break;
      if (buffered.length >= MAX_BUFFERED_STEPS) await write();

      // Inputs: one per incoming connection (in the definition's order); the start node gets the execution input.
      let inputs: Item[][];
      if (plan.starts.has(node.id)) {
        inputs = [inputItems(input)];
      } else {
        inputs = (plan.incoming.get(node.id) ?? []).map((c) => outputs.get(c.from)?.[c.fromOutput ?? 0] ?? []);
        if (inputs.every((items) => items.length === 0)) {
          const at = new Date().toISOString();
          buffered.push({ node_id: node.id, node_type: node.type, seq: done?.seq ?? ++seq, status: 'skipped', input: [], output: null, error: null, attempts: 0, started_at: at, finished_at: at, duration_ms: 0 });
          outputs.set(node.id, null);
          emit({ type: 'step', executionId, nodeId: node.id, nodeType: node.type, status: 'skipped', durationMs: 0 });
          continue;
        }
      }
      const items = inputs.flat();
      const type = w.registry.get(node.type);
      const stepSeq = done?.seq ?? ++seq;
      const startedAt = new Date();
      // A step with side effects is claimed (written as running) before it runs, so a crash in it is seen.
      const replayable = type?.replayable === true;
      // A step a dead run left running (or failed) counts this try as one more attempt.
      let attempts = done ? done.attempts + 1 : 1;
      if (!replayable) {
        emit({ type: 'step', executionId, nodeId: node.id, nodeType: node.type, status: 'running' });
        const claimed = await write({ node_id: node.id, node_type: node.type, seq: stepSeq, status: 'running', input: items, output: null, error: null, attempts: 1, started_at: startedAt.toISOString(), finished_at: null, duration_ms: null });
        if (claimed === null) {
          // Another run finished it meanwhile: reuse what it stored.
          const [row] = await query<StoredStep>('wf-step-read', `SELECT node_id, output, status FROM workflows.execution_steps WHERE execution_id = $1 AND node_id = $2`, [executionId, node.id]);
          const out = row?.status === 'succeeded' ? (row.output ?? []) : null;
          outputs.set(node.id, out);
          remember(node.id, out);
          if (out?.length) lastOutput = out;
          continue;
        }
        attempts = claimed;
      }

      let result: NodeResult | undefined;
      let error: string | null = null;
      if (!type) {
        error = `Unknown node type "${node.type}"`;
      } else {
        for (let attempt = 1; ; attempt++) {
          try {
            result = await runNode(w, execution, node, type, items, inputs, trigger, byName, stop.signal, deadline);
            error = null;
            break;
          } catch (err) {
            if (stopReason) break;
            error = (err as Error)?.message ?? String(err);
            if (attempt >= attemptsAllowed) break;
            attempts += 1;
            if (!replayable) {
              await query('wf-step-attempt', `UPDATE workflows.execution_steps SET attempts = attempts + 1 WHERE execution_id = $1 AND node_id = $2`, [executionId, node.id]);
            }
            await delay(Math.min(2000, 100 * 2 ** (attempt - 1)), undefined, { signal: stop.signal }).catch(() => undefined);
            if (stopReason) break;
          }
        }
      }
      const durationMs = Date.now() - startedAt.getTime();

      if (stopReason === 'shutdown') {
        // A claimed step stays running: the job's retry (another worker) runs it again with attempts + 1.
        await write().catch(() => undefined);
        throw new StopError('shutdown');
      }
      if (stopReason || error !== null || !result) {
        const message = stopReason ? new StopError(stopReason).message : (error ?? 'Step produced no result');
        buffered.push({ node_id: node.id, node_type: node.type, seq: stepSeq, status: 'failed', input: items, output: null, error: message, attempts, started_at: startedAt.toISOString(), finished_at: new Date().toISOString(), duration_ms: durationMs });
        emit({ type: 'step', executionId, nodeId: node.id, nodeType: node.type, status: 'failed', error: message, durationMs });
        if (stopReason === 'cancelled') return await cancelled();
        if (stopReason === 'timed out') return await fail('Execution timed out');
        return await fail(`${node.name}: ${message}`);
      }

      const out: Item[][] = result.kind === 'wait' ? [items] : result.outputs;
      if (result.kind === 'respond') respondOnce(result.response);
      outputs.set(node.id, out);
      remember(node.id, out);
      if (out.length) lastOutput = out;
      emit({ type: 'step', executionId, nodeId: node.id, nodeType: node.type, status: result.kind === 'wait' ? 'waiting' : 'succeeded', durationMs });

      if (replayable) {
        buffered.push({ node_id: node.id, node_type: node.type, seq: stepSeq, status: 'succeeded', input: items, output: out, error: null, attempts, started_at: startedAt.toISOString(), finished_at: new Date().toISOString(), duration_ms: durationMs });
        continue;
      }
      // A step with side effects is recorded as finished at once: a crash after this never repeats it.
      const [after] = await query<{ cancel_requested: boolean }>('wf-step-end', STEP_END_SQL, [executionId, node.id, JSON.stringify(out), durationMs, attempts]);
      publish();
      if (after?.cancel_requested) stopWith('cancelled');

      if (result.kind === 'wait') {
        const until = result.until.getTime();
        if (until > Date.now() + 20) {
          await ensureStarted();
          await query('wf-exec-waiting', `UPDATE workflows.executions SET status = 'waiting' WHERE id = $1 AND status = 'running'`, [executionId]);
          emit({ type: 'status', executionId, status: 'waiting' });
          publishRunEnd();
          // A waiting execution holds no concurrency slot.
          if (lease) await releaseSlot(w, lease);
          lease = null;
          if (options.job && options.token) {
            await options.job.moveToDelayed(until, options.token);
            throw new DelayedError();
          }
          // Without a job (direct calls), wait here.
          await delay(until - Date.now(), undefined, { signal: stop.signal }).catch(() => undefined);
          await query('wf-exec-resumed', `UPDATE workflows.executions SET status = 'running' WHERE id = $1 AND status = 'waiting'`, [executionId]);
        }
      }
    }

    if (stopReason === 'cancelled') return await cancelled();
    if (stopReason === 'timed out') return await fail('Execution timed out');
    if (stopReason === 'shutdown') {
      await write().catch(() => undefined);
      throw new StopError('shutdown');
    }

    // The execution's output: the last node's first output (its items' json).
    const finalItems = (lastOutput?.[0] ?? []).map((item) => item.json);
    // A webhook waiting for the last node gets its first item (the webhook route applies its own status code).
    if (execution.mode === 'webhook') respondOnce({ status: 200, headers: {}, body: finalItems[0] ?? {} });
    return await finish('succeeded', null, finalItems);
  } catch (err) {
    if (err instanceof EndedError) return statusNow();
    throw err;
  } finally {
    clearTimeout(timer);
    clearTimeout(listen);
    options.signal?.removeEventListener('abort', onShutdown);
    unsubscribe();
    stopResending();
    if (lease) await releaseSlot(w, lease).catch(() => undefined);
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
  type: NodeType,
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
  // Saved workflows' secret parameters are sealed in the definition; in-memory ones never are.
  const rawParameters = execution.workflow_id ? w.secrets.open(node, execution.workflow_id) : (node.parameters ?? {});
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

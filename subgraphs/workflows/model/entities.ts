import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A node of a workflow graph (validated against its type's definition when saved). */
export interface WorkflowNode {
  /** Unique within the workflow; used by connections, steps and webhook paths. */
  id: string;
  /** A node definition's type, e.g. `webhook`, `http-request`, `code`. */
  type: string;
  name: string;
  parameters: Record<string, unknown>;
  position?: { x: number; y: number };
}

/** An edge: the output `fromOutput` (default 0) of `from` feeds `to`. Branching nodes (if, switch) have several outputs. */
export interface WorkflowConnection {
  from: string;
  fromOutput?: number;
  to: string;
  /** Which input of `to` it feeds (merge has two: 0 and 1). @defaultValue 0 */
  toInput?: number;
}

export interface WorkflowSettings {
  /** Whole execution, seconds. @defaultValue 300 */
  timeoutSeconds?: number;
  /** Attempts per step on error. @defaultValue 1 */
  retries?: number;
  /** Executions of this workflow running at once; more wait queued (worker/processors/workflows/concurrency.ts). @defaultValue unlimited (the workers' concurrency) */
  concurrency?: number;
}

export const EXECUTION_STATUSES = ['queued', 'running', 'waiting', 'succeeded', 'failed', 'cancelled'] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

export const STEP_STATUSES = ['running', 'succeeded', 'failed', 'skipped'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

@Entity({ name: 'workflows' })
export class WorkflowEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', nullable: true })
  description: string | null;

  @Column({ type: 'jsonb' })
  nodes: WorkflowNode[];

  @Column({ type: 'jsonb' })
  connections: WorkflowConnection[];

  @Column({ type: 'jsonb', default: {} })
  settings: WorkflowSettings;

  /** Increments on every save; an execution records the version it ran. */
  @Column({ type: 'integer', default: 1 })
  version: number;

  @Column({ type: 'boolean', default: false })
  deployed: boolean;

  @Column({ name: 'deployed_at', type: 'timestamptz', nullable: true })
  deployedAt: Date | null;

  @Column({ name: 'created_by_user_id', type: 'text', nullable: true })
  createdByUserId: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

/** A webhook trigger of a deployed workflow (rows exist only while deployed). */
@Entity({ name: 'webhook_registrations' })
export class WebhookRegistrationEntity {
  @PrimaryColumn({ name: 'workflow_id', type: 'text' })
  workflowId: string;

  @PrimaryColumn({ name: 'node_id', type: 'text' })
  nodeId: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId: string;

  /** HTTP method the trigger accepts, or `*`. */
  @Column({ type: 'text' })
  method: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

@Entity({ name: 'executions' })
export class ExecutionEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  /** Null for execute-in-memory. */
  @Column({ name: 'workflow_id', type: 'text', nullable: true })
  workflowId: string | null;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId: string;

  @Column({ name: 'workflow_version', type: 'integer', nullable: true })
  workflowVersion: number | null;

  /** The graph it runs (a copy: later edits of the workflow do not change a running execution). */
  @Column({ type: 'jsonb' })
  definition: { nodes: WorkflowNode[]; connections: WorkflowConnection[]; settings: WorkflowSettings };

  @Column({ type: 'text' })
  status: ExecutionStatus;

  /** manual | webhook | schedule | in_memory */
  @Column({ type: 'text' })
  mode: string;

  /** The trigger node that started it, if any. */
  @Column({ name: 'trigger_node_id', type: 'text', nullable: true })
  triggerNodeId: string | null;

  @Column({ type: 'jsonb', nullable: true })
  input: unknown;

  @Column({ type: 'jsonb', nullable: true })
  output: unknown;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  @Column({ name: 'cancel_requested', type: 'boolean', default: false })
  cancelRequested: boolean;

  @Column({ name: 'created_by_user_id', type: 'text', nullable: true })
  createdByUserId: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'started_at', type: 'timestamptz', nullable: true })
  startedAt: Date | null;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;

  @Column({ name: 'duration_ms', type: 'integer', nullable: true })
  durationMs: number | null;
}

/** One node's run inside an execution; (execution, node) is unique, so a resumed execution never repeats a finished step. */
@Entity({ name: 'execution_steps' })
export class ExecutionStepEntity {
  @PrimaryColumn({ name: 'execution_id', type: 'text' })
  executionId: string;

  @PrimaryColumn({ name: 'node_id', type: 'text' })
  nodeId: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId: string;

  @Column({ name: 'node_type', type: 'text' })
  nodeType: string;

  /** Order in which steps ran. */
  @Column({ type: 'integer' })
  seq: number;

  @Column({ type: 'text' })
  status: StepStatus;

  @Column({ type: 'jsonb', nullable: true })
  input: unknown;

  /** Output items per output index (`[[...items of output 0], [...items of output 1]]`). */
  @Column({ type: 'jsonb', nullable: true })
  output: unknown;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  @Column({ type: 'integer', default: 1 })
  attempts: number;

  @Column({ name: 'started_at', type: 'timestamptz' })
  startedAt: Date;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;

  @Column({ name: 'duration_ms', type: 'integer', nullable: true })
  durationMs: number | null;
}

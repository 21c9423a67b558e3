import { ArgsType, Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { PageArgs, PaginatedList } from '../../../core/pagination';
import { JSONObjectScalar, JSONScalar } from '../../../core/scalars';

// ---------------------------------------------------------------- workflows

@ObjectType({ description: 'A webhook trigger of a deployed workflow: where to call it and how it authenticates.' })
export class WebhookEndpoint {
  @Field(() => String)
  nodeId: string;

  @Field(() => String, { description: 'HTTP method it accepts, or * for any.' })
  method: string;

  @Field(() => String, { description: 'Edge path: /v1/webhooks/v1/<workflowId>/<nodeId>[/<suffix>].' })
  path: string;

  @Field(() => String, { nullable: true, description: 'PUBLIC_URL + path, when the platform knows its public address.' })
  url: string | null;

  @Field(() => String, { description: 'none | header | hmac' })
  auth: string;

  @Field(() => String, { description: 'When the caller gets its answer (the node\'s respond parameter).' })
  respond: string;
}

@ObjectType({ description: 'A workflow: a graph of nodes; deployed, its webhook and schedule triggers are live.' })
export class Workflow {
  @Field(() => ID)
  id: string;

  @Field(() => ID)
  workspaceId: string;

  @Field(() => String)
  name: string;

  @Field(() => String, { nullable: true })
  description: string | null;

  @Field(() => JSONScalar, { description: 'Array of { id, type, name, parameters, position? }.' })
  nodes: unknown;

  @Field(() => JSONScalar, { description: 'Array of { from, fromOutput?, to }.' })
  connections: unknown;

  @Field(() => JSONObjectScalar, { description: '{ timeoutSeconds?, retries?, concurrency? }' })
  settings: Record<string, unknown>;

  @Field(() => Int, { description: 'Increments on every save.' })
  version: number;

  @Field(() => Boolean)
  deployed: boolean;

  @Field(() => String, { nullable: true })
  deployedAt: string | null;

  @Field(() => ID, { nullable: true })
  createdByUserId: string | null;

  @Field(() => String)
  createdAt: string;

  @Field(() => String)
  updatedAt: string;

  @Field(() => [WebhookEndpoint], { description: 'The webhook triggers while deployed (empty when not).' })
  webhookEndpoints: WebhookEndpoint[];
}

@ObjectType({ description: 'A page of workflows.' })
export class WorkflowList extends PaginatedList(Workflow) {}

@ObjectType()
export class DeletedWorkflow {
  @Field(() => ID)
  id: string;

  @Field(() => Boolean)
  deleted: boolean;
}

@ArgsType()
export class ListWorkflowsArgs extends PageArgs {
  @Field(() => ID, { nullable: true, description: "Default: X-Workspace-ID, else the caller's personal workspace." })
  workspaceId?: string | null;
}

@ArgsType()
export class WorkflowIdArgs {
  @Field(() => ID)
  id: string;
}

@ArgsType()
export class CreateWorkflowArgs {
  @Field(() => ID, { nullable: true, description: "Default: X-Workspace-ID, else the caller's personal workspace." })
  workspaceId?: string | null;

  @Field(() => String)
  name: string;

  @Field(() => String, { nullable: true })
  description?: string | null;

  @Field(() => JSONScalar)
  nodes: unknown;

  @Field(() => JSONScalar, { nullable: true, description: 'Default: none.' })
  connections?: unknown;

  @Field(() => JSONObjectScalar, { nullable: true })
  settings?: Record<string, unknown> | null;
}

@ArgsType()
export class UpdateWorkflowArgs {
  @Field(() => ID)
  id: string;

  @Field(() => String, { nullable: true })
  name?: string | null;

  @Field(() => String, { nullable: true })
  description?: string | null;

  @Field(() => JSONScalar, { nullable: true })
  nodes?: unknown;

  @Field(() => JSONScalar, { nullable: true })
  connections?: unknown;

  @Field(() => JSONObjectScalar, { nullable: true })
  settings?: Record<string, unknown> | null;
}

// ---------------------------------------------------------------- executions

@ObjectType({ description: "One node's run inside an execution." })
export class ExecutionStep {
  @Field(() => String)
  nodeId: string;

  @Field(() => String)
  nodeType: string;

  @Field(() => Int)
  seq: number;

  @Field(() => String, { description: 'running | succeeded | failed | skipped' })
  status: string;

  @Field(() => JSONScalar, { nullable: true })
  input: unknown;

  @Field(() => JSONScalar, { nullable: true, description: 'Items per output index.' })
  output: unknown;

  @Field(() => String, { nullable: true })
  error: string | null;

  @Field(() => Int)
  attempts: number;

  @Field(() => String)
  startedAt: string;

  @Field(() => String, { nullable: true })
  finishedAt: string | null;

  @Field(() => Int, { nullable: true })
  durationMs: number | null;
}

@ObjectType({ description: 'One run of a workflow (or of an unsaved definition, execute-in-memory).' })
export class WorkflowExecution {
  @Field(() => ID)
  id: string;

  @Field(() => ID, { nullable: true, description: 'Null for execute-in-memory.' })
  workflowId: string | null;

  @Field(() => ID)
  workspaceId: string;

  @Field(() => Int, { nullable: true })
  workflowVersion: number | null;

  @Field(() => String, { description: 'queued | running | waiting | succeeded | failed | cancelled' })
  status: string;

  @Field(() => String, { description: 'manual | webhook | schedule | in_memory' })
  mode: string;

  @Field(() => String, { nullable: true })
  triggerNodeId: string | null;

  @Field(() => JSONScalar, { nullable: true })
  input: unknown;

  @Field(() => JSONScalar, { nullable: true })
  output: unknown;

  @Field(() => String, { nullable: true })
  error: string | null;

  @Field(() => Boolean)
  cancelRequested: boolean;

  @Field(() => ID, { nullable: true })
  createdByUserId: string | null;

  @Field(() => String)
  createdAt: string;

  @Field(() => String, { nullable: true })
  startedAt: string | null;

  @Field(() => String, { nullable: true })
  finishedAt: string | null;

  @Field(() => Int, { nullable: true })
  durationMs: number | null;

  @Field(() => [ExecutionStep], { nullable: true, description: 'Ordered by seq; only on one execution (null in lists).' })
  steps: ExecutionStep[] | null;
}

@ObjectType({ description: 'A page of executions, newest first.' })
export class WorkflowExecutionList extends PaginatedList(WorkflowExecution) {}

@ArgsType()
export class ExecuteWorkflowArgs {
  @Field(() => ID)
  id: string;

  @Field(() => JSONScalar, { nullable: true, description: 'What the trigger hands the graph ($trigger).' })
  input?: unknown;

  @Field(() => Boolean, { nullable: true, defaultValue: false, description: 'Answer when the execution has finished (or at timeoutSeconds).' })
  wait?: boolean | null;

  @Field(() => Int, { nullable: true, description: 'Longest wait, seconds. Default 30, at most 300.' })
  timeoutSeconds?: number | null;
}

@ArgsType()
export class ExecuteInMemoryArgs {
  @Field(() => ID, { nullable: true, description: "Default: X-Workspace-ID, else the caller's personal workspace." })
  workspaceId?: string | null;

  @Field(() => String, { nullable: true })
  name?: string | null;

  @Field(() => JSONScalar)
  nodes: unknown;

  @Field(() => JSONScalar, { nullable: true })
  connections?: unknown;

  @Field(() => JSONObjectScalar, { nullable: true })
  settings?: Record<string, unknown> | null;

  @Field(() => JSONScalar, { nullable: true })
  input?: unknown;

  @Field(() => Boolean, { nullable: true, defaultValue: false })
  wait?: boolean | null;

  @Field(() => Int, { nullable: true, description: 'Longest wait, seconds. Default 30, at most 300.' })
  timeoutSeconds?: number | null;
}

@ArgsType()
export class ListExecutionsArgs extends PageArgs {
  @Field(() => ID)
  id: string;

  @Field(() => String, { nullable: true, description: 'Only this status.' })
  status?: string | null;
}

@ArgsType()
export class ExecutionIdArgs {
  @Field(() => ID)
  id: string;

  @Field(() => ID)
  executionId: string;
}

@ArgsType()
export class ExecutionEventsArgs {
  @Field(() => ID)
  executionId: string;
}

@ObjectType({ description: 'A live event of an execution: a step started or finished, or the execution changed status.' })
export class WorkflowExecutionEvent {
  @Field(() => String, { description: 'step | status' })
  type: string;

  @Field(() => ID)
  executionId: string;

  @Field(() => String, { nullable: true })
  nodeId: string | null;

  @Field(() => String, { nullable: true })
  nodeType: string | null;

  @Field(() => String, { nullable: true })
  status: string | null;

  @Field(() => String, { nullable: true })
  error: string | null;

  @Field(() => Int, { nullable: true })
  durationMs: number | null;

  @Field(() => String)
  at: string;
}

// ---------------------------------------------------------------- metrics

@ObjectType()
export class ExecutionStatusCounts {
  @Field(() => Int) queued: number;
  @Field(() => Int) running: number;
  @Field(() => Int) waiting: number;
  @Field(() => Int) succeeded: number;
  @Field(() => Int) failed: number;
  @Field(() => Int) cancelled: number;
}

@ObjectType()
export class NodeMetrics {
  @Field(() => String)
  nodeId: string;

  @Field(() => String)
  nodeType: string;

  @Field(() => Int)
  runs: number;

  @Field(() => Int)
  failures: number;

  @Field(() => Float, { nullable: true })
  durationP50Ms: number | null;

  @Field(() => Float, { nullable: true })
  durationP95Ms: number | null;
}

@ObjectType({ description: 'Executions created in [from, to).' })
export class WorkflowMetrics {
  @Field(() => String)
  from: string;

  @Field(() => String)
  to: string;

  @Field(() => Int)
  total: number;

  @Field(() => ExecutionStatusCounts)
  byStatus: ExecutionStatusCounts;

  @Field(() => Float, { nullable: true, description: 'succeeded / finished (null with none finished).' })
  successRate: number | null;

  @Field(() => Float, { nullable: true, description: 'Over finished executions.' })
  durationP50Ms: number | null;

  @Field(() => Float, { nullable: true })
  durationP95Ms: number | null;

  @Field(() => [NodeMetrics])
  nodes: NodeMetrics[];
}

@ArgsType()
export class MetricsArgs {
  @Field(() => ID)
  id: string;

  @Field(() => String, { nullable: true, description: 'ISO 8601. Default: 24 hours before `to`.' })
  from?: string | null;

  @Field(() => String, { nullable: true, description: 'ISO 8601. Default: now.' })
  to?: string | null;
}

@ArgsType()
export class TimeseriesArgs extends MetricsArgs {
  @Field(() => String, { nullable: true, defaultValue: '1h', description: '1m | 5m | 15m | 1h | 6h | 1d' })
  interval?: string | null;
}

@ObjectType()
export class MetricsBucket {
  @Field(() => String)
  at: string;

  @Field(() => Int)
  total: number;

  @Field(() => Int)
  succeeded: number;

  @Field(() => Int)
  failed: number;

  @Field(() => Int)
  cancelled: number;

  @Field(() => Float, { nullable: true })
  durationP50Ms: number | null;
}

@ObjectType()
export class WorkflowMetricsTimeseries {
  @Field(() => String)
  from: string;

  @Field(() => String)
  to: string;

  @Field(() => String)
  interval: string;

  @Field(() => [MetricsBucket])
  buckets: MetricsBucket[];
}

// ---------------------------------------------------------------- node catalogue

@ObjectType({ description: 'A node type the platform runs (built in, or from a trusted plugin).' })
export class WorkflowNodeDefinition {
  @Field(() => String)
  type: string;

  @Field(() => String)
  displayName: string;

  @Field(() => String, { description: 'trigger | flow | data | core | integration' })
  group: string;

  @Field(() => Int)
  version: number;

  @Field(() => String)
  description: string;

  @Field(() => Int)
  inputs: number;

  @Field(() => JSONScalar, { description: 'A number, or "dynamic" when the parameters decide.' })
  outputs: unknown;

  @Field(() => [String], { nullable: true })
  outputNames: string[] | null;

  @Field(() => JSONScalar, { description: 'JSON Schema of parameters.' })
  parametersSchema: unknown;

  @Field(() => String, { nullable: true, description: 'manual | webhook | schedule, on trigger nodes.' })
  trigger: string | null;

  @Field(() => String, { nullable: true })
  plugin: string | null;
}

@ArgsType()
export class NodeDefinitionArgs {
  @Field(() => String)
  type: string;
}

@ObjectType()
export class TrustedWorkflowPlugin {
  @Field(() => String)
  package: string;

  @Field(() => [String])
  nodeTypes: string[];
}

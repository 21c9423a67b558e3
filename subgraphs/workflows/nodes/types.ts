import type { WorkflowConnection, WorkflowNode, WorkflowSettings } from '../model/entities';

/**
 * The contract between node definitions (this folder), the workflows subgraph (which validates
 * graphs and serves the definitions) and the engine on the worker tier (which runs them).
 */

/** What flows between nodes: a list of items, each a JSON object (n8n's model). */
export interface Item {
  json: Record<string, unknown>;
}

export type NodeGroup = 'trigger' | 'flow' | 'data' | 'core' | 'integration';

/** GET /workflows/node-definitions answers these. */
export interface NodeDefinition {
  /** `webhook`, `http-request`, `code`, … ; plugin types are `<package>/<type>`. */
  type: string;
  displayName: string;
  group: NodeGroup;
  version: number;
  description: string;
  /** Inputs it takes (0 for triggers; merge takes 2). */
  inputs: number;
  /** Outputs it has; `dynamic` when the parameters decide (switch: one per rule, plus a fallback). */
  outputs: number | 'dynamic';
  /** Names of the outputs, e.g. ['true', 'false'] for if. */
  outputNames?: string[];
  /** JSON Schema (draft 2020-12 subset ajv understands) of `parameters`. */
  parametersSchema: Record<string, unknown>;
  /** Set on trigger nodes: how an execution starts there. */
  trigger?: 'manual' | 'webhook' | 'schedule';
  /** The trusted plugin package that added it, for plugin types. */
  plugin?: string;
  /** Top-level parameters that are never expression-resolved (the code node's `code`). Added (optional). */
  noExpressions?: string[];
}

/** The data a running node sees; expressions (`{{ … }}` in string parameters) resolve against it. */
export interface ExpressionScope {
  /** The current item's json. */
  $json: Record<string, unknown>;
  /** Output items of earlier nodes by node **name** (first output): `$node["Fetch"].json`. */
  $node: Record<string, { json: Record<string, unknown>; items: Item[] }>;
  /** What started the execution: the webhook request (`body`, `query`, `headers`, `method`, `path`) or the execute input. */
  $trigger: Record<string, unknown>;
  $execution: { id: string; workflowId: string | null; mode: string };
  $now: string;
}

/** Services the engine gives nodes that reach other domains; each checks the workspace. */
export interface NodeServices {
  /** Runs a command in a sandbox of the execution's workspace (compute). */
  sandboxExec(input: { workspaceId: string; sandboxId: string; command: string | string[]; timeoutSeconds?: number; signal: AbortSignal }): Promise<{ exitCode: number; stdout: string; stderr: string; timedOut: boolean }>;
  /** One chat completion through the AI gateway (a pool or an upstream of the workspace). */
  aiChat(input: { workspaceId: string; poolId?: string; upstreamId?: string; model: string; system?: string; prompt: string; maxTokens?: number; signal: AbortSignal }): Promise<{ text: string; inputTokens: number; outputTokens: number }>;
}

export interface NodeExecutionContext {
  executionId: string;
  workspaceId: string;
  node: WorkflowNode;
  /** Parameters with every expression already resolved, per item (index i for items[i]); [0] when there are no items. */
  parametersFor(itemIndex: number): Record<string, unknown>;
  /** The raw parameters as saved. */
  rawParameters: Record<string, unknown>;
  /** Input items (all inputs concatenated, in input order). */
  items: Item[];
  /** Items per input index (merge). */
  inputs: Item[][];
  scope: Omit<ExpressionScope, '$json'>;
  /** Aborts when the execution is cancelled or times out; long-running nodes must stop. */
  signal: AbortSignal;
  services: NodeServices;
  /** Milliseconds the step may still run (the execution's timeout). */
  remainingMs: number;
}

/** What a step produces. */
export type NodeResult =
  /** Items per output index. An output with no items does not run the nodes connected to it. */
  | { kind: 'output'; outputs: Item[][] }
  /** Wait: the engine persists the step as waiting and resumes at `until` (durable across restarts). */
  | { kind: 'wait'; until: Date }
  /** Respond-to-webhook: the webhook caller gets this answer now; `outputs` continue the graph. */
  | { kind: 'respond'; response: { status: number; headers: Record<string, string>; body: unknown }; outputs: Item[][] };

export interface NodeExecutor {
  execute(ctx: NodeExecutionContext): Promise<NodeResult>;
}

export interface NodeType {
  definition: NodeDefinition;
  executor: NodeExecutor;
  /** Save-time checks beyond the JSON Schema (cron syntax, URLs…); `field` is relative to the node, e.g. `parameters.cron`. Added (optional). */
  validateParameters?(parameters: Record<string, unknown>): Array<{ field: string; message: string }>;
  /**
   * Running it again after a crash has no effect outside the execution (no I/O, no side effects,
   * fast): the engine then writes its step together with the next write instead of around it
   * (worker/processors/workflows/README.md). Leave it unset for anything that reaches out.
   */
  replayable?: boolean;
  /** The number of outputs for these parameters when `definition.outputs` is `dynamic` (switch: rules + 1). Added (optional). */
  outputCount?(parameters: Record<string, unknown>): number;
}

export interface WorkflowGraph {
  nodes: WorkflowNode[];
  connections: WorkflowConnection[];
  settings: WorkflowSettings;
}

/** The node types a process knows: built-ins plus trusted plugins. */
export interface NodeRegistry {
  list(): NodeDefinition[];
  get(type: string): NodeType | undefined;
  /**
   * Checks a graph: unique node ids, known types, parameters against each schema, connections
   * between existing nodes and outputs that exist, no cycles, at most one trigger per webhook
   * path, settings in range. Throws ValidationError (core/errors) with `details: { nodeId, field }`
   * (field a JSON pointer-ish path like `parameters.url`), naming the node in the message.
   */
  validate(graph: WorkflowGraph): void;
}

import type { ExecutionEntity, ExecutionStepEntity, WorkflowEntity, WorkflowNode } from '../model/entities';
import type { NodeDefinition, NodeRegistry } from '../nodes/types';
import type { ExecutionStep, WebhookEndpoint, Workflow, WorkflowExecution, WorkflowNodeDefinition } from './workflow.types';

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

/** A webhook node's route and behaviour, its parameters normalized (defaults as the webhook node defines them). */
export interface WebhookTrigger {
  nodeId: string;
  method: string;
  /** Suffix after /webhooks/v1/<workflowId>/<nodeId>, without slashes at either end; '' for none. */
  suffix: string;
  auth: 'none' | 'header' | 'hmac';
  respond: string;
}

export interface ScheduleTrigger {
  nodeId: string;
  cron: string;
  timezone: string;
}

/** The webhook and schedule trigger nodes of a graph, by their definitions' `trigger`. */
export function triggersOf(nodes: WorkflowNode[], registry: NodeRegistry): { webhooks: WebhookTrigger[]; schedules: ScheduleTrigger[]; manual: WorkflowNode | undefined } {
  const webhooks: WebhookTrigger[] = [];
  const schedules: ScheduleTrigger[] = [];
  let manual: WorkflowNode | undefined;
  for (const node of nodes) {
    const trigger = registry.get(node.type)?.definition.trigger;
    const p = node.parameters ?? {};
    if (trigger === 'webhook') {
      const auth = typeof p.auth === 'object' && p.auth !== null ? String((p.auth as { type?: unknown }).type ?? 'none') : typeof p.auth === 'string' ? p.auth : 'none';
      webhooks.push({
        nodeId: node.id,
        method: typeof p.method === 'string' && p.method ? p.method.toUpperCase() : 'POST',
        suffix: typeof p.path === 'string' ? p.path.replace(/^\/+|\/+$/g, '').replace(/\/{2,}/g, '/') : '',
        auth: (['none', 'header', 'hmac'].includes(auth) ? auth : 'none') as WebhookTrigger['auth'],
        respond: typeof p.respond === 'string' && p.respond ? p.respond : 'lastNode',
      });
    } else if (trigger === 'schedule') {
      schedules.push({ nodeId: node.id, cron: String(p.cron ?? ''), timezone: typeof p.timezone === 'string' && p.timezone ? p.timezone : 'UTC' });
    } else if (trigger === 'manual' && !manual) {
      manual = node;
    }
  }
  return { webhooks, schedules, manual };
}

/** Edge path of a webhook trigger (REST base /v1 + the spec's /webhooks/v1/...). */
export function webhookPath(workflowId: string, trigger: Pick<WebhookTrigger, 'nodeId' | 'suffix'>): string {
  return `/v1/webhooks/v1/${workflowId}/${trigger.nodeId}${trigger.suffix ? `/${trigger.suffix}` : ''}`;
}

export function toWebhookEndpoint(workflowId: string, trigger: WebhookTrigger, publicUrl: string | undefined): WebhookEndpoint {
  const path = webhookPath(workflowId, trigger);
  return { nodeId: trigger.nodeId, method: trigger.method, path, url: publicUrl ? `${publicUrl.replace(/\/$/, '')}${path}` : null, auth: trigger.auth, respond: trigger.respond };
}

export function toWorkflow(row: WorkflowEntity, registry: NodeRegistry, publicUrl: string | undefined): Workflow {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    name: row.name,
    description: row.description,
    nodes: row.nodes,
    connections: row.connections,
    settings: (row.settings ?? {}) as Record<string, unknown>,
    version: row.version,
    deployed: row.deployed,
    deployedAt: iso(row.deployedAt),
    createdByUserId: row.createdByUserId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    webhookEndpoints: row.deployed ? triggersOf(row.nodes, registry).webhooks.map((t) => toWebhookEndpoint(row.id, t, publicUrl)) : [],
  };
}

export function toExecution(row: ExecutionEntity, steps: ExecutionStepEntity[] | null = null): WorkflowExecution {
  return {
    id: row.id,
    workflowId: row.workflowId,
    workspaceId: row.workspaceId,
    workflowVersion: row.workflowVersion,
    status: row.status,
    mode: row.mode,
    triggerNodeId: row.triggerNodeId,
    input: row.input ?? null,
    output: row.output ?? null,
    error: row.error,
    cancelRequested: row.cancelRequested,
    createdByUserId: row.createdByUserId,
    createdAt: row.createdAt.toISOString(),
    startedAt: iso(row.startedAt),
    finishedAt: iso(row.finishedAt),
    durationMs: row.durationMs,
    steps: steps ? steps.map(toExecutionStep) : null,
  };
}

export function toExecutionStep(row: ExecutionStepEntity): ExecutionStep {
  return {
    nodeId: row.nodeId,
    nodeType: row.nodeType,
    seq: row.seq,
    status: row.status,
    input: row.input ?? null,
    output: row.output ?? null,
    error: row.error,
    attempts: row.attempts,
    startedAt: row.startedAt.toISOString(),
    finishedAt: iso(row.finishedAt),
    durationMs: row.durationMs,
  };
}

export function toNodeDefinition(d: NodeDefinition): WorkflowNodeDefinition {
  return {
    type: d.type,
    displayName: d.displayName,
    group: d.group,
    version: d.version,
    description: d.description,
    inputs: d.inputs,
    outputs: d.outputs,
    outputNames: d.outputNames ?? null,
    parametersSchema: d.parametersSchema,
    trigger: d.trigger ?? null,
    plugin: d.plugin ?? null,
  };
}

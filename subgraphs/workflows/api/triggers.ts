import type { Queue } from 'bullmq';
import type { EntityManager } from 'typeorm';
import { WORKFLOW_JOBS } from '../../../core/queues';
import { WebhookRegistrationEntity, type WorkflowEntity, type WorkflowNode } from '../model/entities';
import type { NodeRegistry } from '../nodes/types';
import { triggersOf } from './workflow.mapper';

/** Id of the BullMQ job scheduler of one schedule node of a deployed workflow. */
export function schedulerId(workflowId: string, nodeId: string): string {
  return `wf-${workflowId}-${nodeId}`;
}

/** Payload of WORKFLOW_JOBS.scheduled. */
export interface ScheduledJobData {
  workflowId: string;
  nodeId: string;
}

/**
 * The live triggers of deployed workflows: one webhook_registrations row per webhook node, one
 * job scheduler on the workflows queue per schedule node. Called inside the transaction that
 * holds the workflow row locked, so deploy, update and undeploy of one workflow never interleave.
 */
export class TriggerRegistrar {
  constructor(
    private readonly queue: Queue,
    private readonly registry: NodeRegistry,
  ) {}

  /** Makes the triggers those of `workflow.nodes`; `previousNodes` are the nodes whose triggers may be live now. */
  async register(manager: EntityManager, workflow: WorkflowEntity, previousNodes: WorkflowNode[] = []): Promise<void> {
    const { webhooks, schedules } = triggersOf(workflow.nodes, this.registry);
    await manager.delete(WebhookRegistrationEntity, { workflowId: workflow.id });
    if (webhooks.length) {
      const now = new Date();
      await manager.insert(
        WebhookRegistrationEntity,
        webhooks.map((w) => ({ workflowId: workflow.id, nodeId: w.nodeId, workspaceId: workflow.workspaceId, method: w.method, createdAt: now })),
      );
    }
    const keep = new Set(schedules.map((s) => s.nodeId));
    for (const old of triggersOf(previousNodes, this.registry).schedules) {
      if (!keep.has(old.nodeId)) await this.queue.removeJobScheduler(schedulerId(workflow.id, old.nodeId));
    }
    for (const s of schedules) {
      const data: ScheduledJobData = { workflowId: workflow.id, nodeId: s.nodeId };
      await this.queue.upsertJobScheduler(schedulerId(workflow.id, s.nodeId), { pattern: s.cron, tz: s.timezone }, { name: WORKFLOW_JOBS.scheduled, data });
    }
  }

  /** Removes every trigger of the workflow (its rows and the schedulers of `nodes`). */
  async unregister(manager: EntityManager, workflow: Pick<WorkflowEntity, 'id' | 'nodes'>): Promise<void> {
    await manager.delete(WebhookRegistrationEntity, { workflowId: workflow.id });
    for (const node of workflow.nodes) {
      // Any node id: a node whose type is no longer known may still have had a scheduler.
      await this.queue.removeJobScheduler(schedulerId(workflow.id, node.id));
    }
  }
}

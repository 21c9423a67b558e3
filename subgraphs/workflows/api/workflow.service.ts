import type { DataSource, EntityManager } from 'typeorm';
import { requireUser, requireWorkspaceRole, selectWorkspaceId } from '../../../core/access';
import type { RequestContext } from '../../../core/context';
import { NotFoundError } from '../../../core/errors';
import { ID_PREFIX, hasPrefix, newId } from '../../../core/ids';
import { pageResult, toPage, type PageResult } from '../../../core/pagination';
import type { WorkspaceRole } from '../../../core/principal';
import { WorkflowEntity } from '../model/entities';
import type { NodeRegistry } from '../nodes/types';
import type { SecretParameters } from './secret-parameters';
import type { TriggerRegistrar } from './triggers';
import { toWorkflow } from './workflow.mapper';
import type { CreateWorkflowArgs, DeletedWorkflow, ListWorkflowsArgs, UpdateWorkflowArgs, Workflow } from './workflow.types';
import { optionalDescription, requireName, validateGraph } from './workflow.validation';

export interface WorkflowServiceOptions {
  dataSource: DataSource;
  registry: NodeRegistry;
  triggers: TriggerRegistrar;
  /** Seals, redacts and restores secret parameters (secret-parameters.ts). */
  secrets: SecretParameters;
  publicUrl?: string;
  /** Told after a transaction that changed a workflow's live triggers commits (webhook routes drop their cache). */
  onTriggersChanged?(workflowId: string): Promise<void>;
}

/**
 * Workflow CRUD, deploy and undeploy. Reading needs the viewer role in the workflow's workspace,
 * changing the member role; a workflow of a workspace the caller is not in is 404.
 */
export class WorkflowService {
  private readonly secrets: SecretParameters;

  constructor(private readonly o: WorkflowServiceOptions) {
    this.secrets = o.secrets;
  }

  private get repo() {
    return this.o.dataSource.getRepository(WorkflowEntity);
  }

  /** What readers see: secret parameters (writeOnly in their schema) replaced by a placeholder. */
  private view(row: WorkflowEntity): Workflow {
    return toWorkflow({ ...row, nodes: this.secrets.redact(row.nodes) }, this.o.registry, this.o.publicUrl);
  }

  /** The workflow, if the caller holds `role` in its workspace; 404 otherwise (403 for a member with too low a role). */
  async load(ctx: RequestContext, id: string, role: WorkspaceRole, manager: EntityManager = this.o.dataSource.manager, lock = false): Promise<WorkflowEntity> {
    requireUser(ctx);
    if (!hasPrefix(id, ID_PREFIX.workflow)) throw new NotFoundError('Workflow', id);
    const row = lock
      ? await manager.getRepository(WorkflowEntity).createQueryBuilder('w').setLock('pessimistic_write').where('w.id = :id', { id }).getOne()
      : await manager.getRepository(WorkflowEntity).findOneBy({ id });
    if (!row || !ctx.principal?.memberships[row.workspaceId]) throw new NotFoundError('Workflow', id);
    requireWorkspaceRole(ctx, row.workspaceId, role);
    return row;
  }

  async list(ctx: RequestContext, args: ListWorkflowsArgs): Promise<PageResult<Workflow>> {
    const workspaceId = selectWorkspaceId(ctx, args.workspaceId);
    requireWorkspaceRole(ctx, workspaceId, 'viewer');
    const page = toPage(args);
    const [rows, total] = await this.repo.findAndCount({ where: { workspaceId }, order: { createdAt: 'DESC', id: 'ASC' }, skip: page.offset, take: page.limit });
    return pageResult(rows.map((r) => this.view(r)), total, page);
  }

  async get(ctx: RequestContext, id: string): Promise<Workflow> {
    return this.view(await this.load(ctx, id, 'viewer'));
  }

  async create(ctx: RequestContext, args: CreateWorkflowArgs): Promise<Workflow> {
    const workspaceId = selectWorkspaceId(ctx, args.workspaceId);
    const principal = requireWorkspaceRole(ctx, workspaceId, 'member');
    const name = requireName(args.name);
    const description = optionalDescription(args.description);
    const graph = validateGraph(this.o.registry, { nodes: args.nodes, connections: args.connections, settings: args.settings });
    const now = new Date();
    const id = newId(ID_PREFIX.workflow);
    const row: WorkflowEntity = {
      id,
      workspaceId,
      name,
      description,
      nodes: this.secrets.seal(this.secrets.restore(graph.nodes, []), id),
      connections: graph.connections,
      settings: graph.settings,
      version: 1,
      deployed: false,
      deployedAt: null,
      createdByUserId: principal.userId ?? null,
      createdAt: now,
      updatedAt: now,
    };
    await this.repo.insert(row as never);
    return this.view(row);
  }

  /** Replaces the given fields, validates the result and bumps the version; a deployed workflow's triggers follow. */
  async update(ctx: RequestContext, args: UpdateWorkflowArgs): Promise<Workflow> {
    return this.changingTriggers(args.id, () => this.o.dataSource.transaction(async (manager) => {
      const row = await this.load(ctx, args.id, 'member', manager, true);
      const previousNodes = row.nodes;
      const previousOpened = this.secrets.openAll(row.nodes, row.id);
      if (args.name !== undefined && args.name !== null) row.name = requireName(args.name);
      if (args.description !== undefined) row.description = optionalDescription(args.description);
      const graph = validateGraph(this.o.registry, {
        nodes: args.nodes ?? previousOpened,
        connections: args.connections !== undefined && args.connections !== null ? args.connections : row.connections,
        settings: args.settings ?? row.settings,
      });
      // Placeholders sent back (the client saves what it read) keep the stored secrets.
      row.nodes = this.secrets.seal(this.secrets.restore(graph.nodes, previousOpened), row.id);
      row.connections = graph.connections;
      row.settings = graph.settings;
      row.version += 1;
      row.updatedAt = new Date();
      await manager.update(WorkflowEntity, { id: row.id }, { name: row.name, description: row.description, nodes: row.nodes as never, connections: row.connections as never, settings: row.settings as never, version: row.version, updatedAt: row.updatedAt });
      if (row.deployed) await this.o.triggers.register(manager, row, previousNodes);
      return this.view(row);
    }));
  }

  /** Undeploys (removing its triggers), then deletes it with its executions. */
  async delete(ctx: RequestContext, id: string): Promise<DeletedWorkflow> {
    return this.changingTriggers(id, () => this.o.dataSource.transaction(async (manager) => {
      const row = await this.load(ctx, id, 'member', manager, true);
      await this.o.triggers.unregister(manager, row);
      await manager.delete(WorkflowEntity, { id: row.id });
      return { id: row.id, deleted: true };
    }));
  }

  /** Registers its webhook and schedule triggers; deploying a deployed workflow refreshes them. */
  async deploy(ctx: RequestContext, id: string): Promise<Workflow> {
    return this.changingTriggers(id, () => this.o.dataSource.transaction(async (manager) => {
      const row = await this.load(ctx, id, 'member', manager, true);
      await this.o.triggers.register(manager, row, row.nodes);
      if (!row.deployed) {
        row.deployed = true;
        row.deployedAt = new Date();
        row.updatedAt = row.deployedAt;
        await manager.update(WorkflowEntity, { id: row.id }, { deployed: true, deployedAt: row.deployedAt, updatedAt: row.updatedAt });
      }
      return this.view(row);
    }));
  }

  async undeploy(ctx: RequestContext, id: string): Promise<Workflow> {
    return this.changingTriggers(id, () => this.o.dataSource.transaction(async (manager) => {
      const row = await this.load(ctx, id, 'member', manager, true);
      await this.o.triggers.unregister(manager, row);
      if (row.deployed) {
        row.deployed = false;
        row.deployedAt = null;
        row.updatedAt = new Date();
        await manager.update(WorkflowEntity, { id: row.id }, { deployed: false, deployedAt: null, updatedAt: row.updatedAt });
      }
      return this.view(row);
    }));
  }

  /** Runs a trigger-changing transaction, then (committed) tells the webhook routes to forget the workflow. */
  private async changingTriggers<T>(workflowId: string, run: () => Promise<T>): Promise<T> {
    const result = await run();
    // A Redis failure must not fail a committed change: the routes' 3 s cache bounds the staleness.
    await this.o.onTriggersChanged?.(workflowId)?.catch(() => undefined);
    return result;
  }
}

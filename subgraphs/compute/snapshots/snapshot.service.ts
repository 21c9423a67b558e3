import type { RequestContext } from '../../../core/context';
import { requireWorkspaceRole, selectWorkspaceId } from '../../../core/access';
import { InvalidStateError, NotFoundError, ValidationError } from '../../../core/errors';
import { ID_PREFIX, hasPrefix, newId } from '../../../core/ids';
import { pageResult, toPage, type PageResult } from '../../../core/pagination';
import type { WorkspaceRole } from '../../../core/principal';
import type { ContainerRuntime } from '../../../worker/runtime/types';
import type { ComputeJobs } from '../compute-jobs';
import { toSnapshot } from '../compute.mapper';
import { IMAGE_REF, requireName, stringMap } from '../compute.validation';
import { mapRuntimeErrors } from '../runtime-errors';
import type { SandboxRepository } from '../sandboxes/sandbox.repository';
import type { SandboxService } from '../sandboxes/sandbox.service';
import type { Sandbox } from '../sandboxes/sandbox.types';
import type { SnapshotEntity } from './snapshot.entity';
import { snapshotImageRef, type SnapshotRepository } from './snapshot.repository';
import type { CreateSnapshotArgs, DeletedSnapshot, ListSnapshotsArgs, RestoreSnapshotArgs, Snapshot, UpdateSnapshotArgs } from './snapshot.types';

export interface SnapshotServiceOptions {
  snapshots: SnapshotRepository;
  sandboxes: SandboxRepository;
  lifecycle: SandboxService;
  jobs: ComputeJobs;
  runtime: ContainerRuntime;
}

/** Snapshots: metadata here, the filesystem as an engine image. Same access rules as sandboxes. */
export class SnapshotService {
  constructor(private readonly o: SnapshotServiceOptions) {}

  async list(ctx: RequestContext, args: ListSnapshotsArgs): Promise<PageResult<Snapshot>> {
    const workspaceId = selectWorkspaceId(ctx, args.workspaceId);
    requireWorkspaceRole(ctx, workspaceId, 'viewer');
    const page = toPage(args);
    const [rows, total] = await this.o.snapshots.listByWorkspace(workspaceId, page, { sandboxId: args.sandboxId ?? undefined });
    return pageResult(rows.map(toSnapshot), total, page);
  }

  async get(ctx: RequestContext, id: string): Promise<Snapshot> {
    return toSnapshot(await this.load(ctx, id, 'viewer'));
  }

  /** From a sandbox (as POST /sandboxes/{id}/snapshots) or from a plain image on the engine. */
  async create(ctx: RequestContext, args: CreateSnapshotArgs): Promise<Snapshot> {
    const hasSandbox = Boolean(args.sandboxId);
    const hasImage = Boolean(args.image);
    if (hasSandbox === hasImage) throw new ValidationError('Give exactly one of sandboxId and image', { field: hasSandbox ? 'image' : 'sandboxId' });
    if (hasSandbox) {
      const sandbox = await this.o.lifecycle.load(ctx, args.sandboxId!, 'member');
      if (args.workspaceId && args.workspaceId !== sandbox.workspaceId) throw new NotFoundError('Sandbox', args.sandboxId!);
      const { snapshot } = await this.o.lifecycle.snapshot(ctx, { id: sandbox.id, name: args.name, description: args.description, labels: args.labels });
      return snapshot;
    }
    const workspaceId = selectWorkspaceId(ctx, args.workspaceId);
    const principal = requireWorkspaceRole(ctx, workspaceId, 'member');
    const image = args.image!;
    if (!IMAGE_REF.test(image)) throw new ValidationError('image is not a valid image reference', { field: 'image' });
    const info = await mapRuntimeErrors('new', () => this.o.runtime.imageInfo(image));
    if (!info) throw new ValidationError(`Image ${image} is not available on the engine`, { field: 'image' });
    const id = newId(ID_PREFIX.snapshot);
    const now = new Date();
    const row: SnapshotEntity = {
      id,
      workspaceId,
      name: args.name ? requireName(args.name) : image,
      description: args.description ?? null,
      labels: stringMap(args.labels, 'labels', { maxEntries: 64, maxValueLength: 1024 }),
      status: 'creating',
      statusReason: null,
      sourceSandboxId: null,
      sourceImage: image,
      imageRef: snapshotImageRef(workspaceId, id).ref,
      sizeBytes: null,
      createdByUserId: principal.userId ?? null,
      createdAt: now,
      updatedAt: now,
      readyAt: null,
    };
    await this.o.snapshots.insert(row);
    await this.o.jobs.snapshotFromImage(id);
    return toSnapshot(row);
  }

  async update(ctx: RequestContext, args: UpdateSnapshotArgs): Promise<Snapshot> {
    const snapshot = await this.load(ctx, args.id, 'member');
    const patch: Partial<Pick<SnapshotEntity, 'name' | 'description' | 'labels'>> = {};
    if (args.name !== null && args.name !== undefined) patch.name = requireName(args.name);
    if (args.description !== null && args.description !== undefined) {
      if (args.description.length > 4096) throw new ValidationError('description must be at most 4096 characters', { field: 'description' });
      patch.description = args.description;
    }
    if (args.labels !== null && args.labels !== undefined) patch.labels = stringMap(args.labels, 'labels', { maxEntries: 64, maxValueLength: 1024 });
    if (!Object.keys(patch).length) throw new ValidationError('Give name, description and/or labels', { field: 'name' });
    await this.o.snapshots.update(snapshot.id, patch);
    return toSnapshot(Object.assign(snapshot, patch, { updatedAt: new Date() }));
  }

  /** Refused while the snapshot is being made or a sandbox is booting from it; the image goes with it. */
  async delete(ctx: RequestContext, id: string): Promise<DeletedSnapshot> {
    const snapshot = await this.load(ctx, id, 'member');
    if (snapshot.status === 'creating') throw new InvalidStateError(`snapshot ${snapshot.id}`, 'creating', 'delete');
    const booting = await this.o.sandboxes.rows
      .createQueryBuilder('s')
      .where(`s.status IN ('pending', 'starting')`)
      .andWhere('(s.boot_snapshot_id = :id OR (s.image = :ref AND s.container_id IS NULL))', { id: snapshot.id, ref: snapshot.imageRef })
      .getCount();
    if (booting > 0) throw new InvalidStateError(`snapshot ${snapshot.id}`, 'in use by a booting sandbox', 'delete');
    await this.o.snapshots.delete(snapshot.id);
    await mapRuntimeErrors('snapshot', () => this.o.runtime.removeImage(snapshot.imageRef));
    return { id: snapshot.id, deleted: true };
  }

  /**
   * Boots a sandbox from the snapshot: a new one when `name` is given, else the given (or the
   * snapshot's own) sandbox, which must be stopped or failed.
   */
  async restore(ctx: RequestContext, args: RestoreSnapshotArgs): Promise<Sandbox> {
    const snapshot = await this.load(ctx, args.id, 'member');
    if (snapshot.status !== 'ready') throw new InvalidStateError(`snapshot ${snapshot.id}`, snapshot.status, 'restore');
    if (args.name) return this.o.lifecycle.create(ctx, { name: args.name, workspaceId: snapshot.workspaceId, snapshotId: snapshot.id });
    const sandboxId = args.sandboxId ?? snapshot.sourceSandboxId;
    if (!sandboxId) throw new ValidationError('This snapshot was not taken of a sandbox: give name (a new sandbox) or sandboxId', { field: 'sandboxId' });
    const sandbox = await this.o.lifecycle.load(ctx, sandboxId, 'member');
    if (sandbox.workspaceId !== snapshot.workspaceId) throw new NotFoundError('Sandbox', sandboxId);
    this.o.lifecycle.requireState(sandbox, 'startFromSnapshot');
    return this.o.lifecycle.bootFromSnapshot(ctx, sandbox, snapshot, `restore of snapshot ${snapshot.id} requested`);
  }

  private async load(ctx: RequestContext, id: string, role: WorkspaceRole): Promise<SnapshotEntity> {
    const snapshot = hasPrefix(id, ID_PREFIX.snapshot) ? await this.o.snapshots.findById(id) : null;
    if (!snapshot || !ctx.principal?.memberships[snapshot.workspaceId]) throw new NotFoundError('Snapshot', id);
    requireWorkspaceRole(ctx, snapshot.workspaceId, role);
    return snapshot;
  }
}

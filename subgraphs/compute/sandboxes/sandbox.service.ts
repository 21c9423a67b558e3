import type { RequestContext } from '../../../core/context';
import { requireWorkspaceRole, selectWorkspaceId } from '../../../core/access';
import type { ComputeConfig } from '../../../core/config';
import { ConflictError, InvalidStateError, NotFoundError, ValidationError } from '../../../core/errors';
import { ID_PREFIX, hasPrefix, newId } from '../../../core/ids';
import type { Logger } from '../../../core/logger';
import { pageResult, toPage, type PageResult } from '../../../core/pagination';
import type { WorkspaceRole } from '../../../core/principal';
import type { ContainerRuntime } from '../../../worker/runtime/types';
import type { ComputeJobs } from '../compute-jobs';
import { toLifecycleEvent, toSandbox, toSnapshot } from '../compute.mapper';
import { IMAGE_REF, VOLUME_NAME, ENV_NAME, absolutePath, intInRange, requireName, stringMap } from '../compute.validation';
import type { ConcurrencyLimits } from '../limits';
import { mapRuntimeErrors } from '../runtime-errors';
import { snapshotImageRef, type SnapshotRepository } from '../snapshots/snapshot.repository';
import type { SnapshotEntity } from '../snapshots/snapshot.entity';
import type { SandboxWithSnapshot } from '../snapshots/snapshot.types';
import type { SandboxEntity, SecretRef, VolumeMount } from './sandbox.entity';
import type { SandboxRepository, TransitionRequest } from './sandbox.repository';
import { ALLOWED_FROM, SANDBOX_STATUSES, TTL_ACTIONS, type SandboxOperation, type SandboxStatus, type TtlAction } from './sandbox.states';
import type { CreateSandboxArgs, ExtendTtlArgs, LifecycleArgs, ListSandboxesArgs, Sandbox, SandboxLifecycleList, SnapshotSandboxArgs, StartFromSnapshotArgs, UpdateSandboxArgs } from './sandbox.types';

export interface SandboxServiceOptions {
  sandboxes: SandboxRepository;
  snapshots: SnapshotRepository;
  jobs: ComputeJobs;
  runtime: ContainerRuntime;
  limits: ConcurrencyLimits;
  config: ComputeConfig;
  logger: Logger;
}

/**
 * Sandbox lifecycle: validates, applies the state machine's transition and queues the worker's
 * job. Reading needs the viewer role in the sandbox's workspace, changing the member role; a
 * sandbox of a workspace the caller is not in is 404.
 */
export class SandboxService {
  constructor(private readonly o: SandboxServiceOptions) {}

  async list(ctx: RequestContext, args: ListSandboxesArgs): Promise<PageResult<Sandbox>> {
    const workspaceId = selectWorkspaceId(ctx, args.workspaceId);
    requireWorkspaceRole(ctx, workspaceId, 'viewer');
    const page = toPage(args);
    if (args.status && !(SANDBOX_STATUSES as readonly string[]).includes(args.status)) {
      throw new ValidationError(`status must be one of ${SANDBOX_STATUSES.join(', ')}`, { field: 'status' });
    }
    const [rows, total] = await this.o.sandboxes.listByWorkspace(workspaceId, page, { status: args.status as SandboxStatus | undefined, name: args.name ?? undefined });
    return pageResult(rows.map(toSandbox), total, page);
  }

  async get(ctx: RequestContext, id: string): Promise<Sandbox> {
    return toSandbox(await this.load(ctx, id, 'viewer'));
  }

  async create(ctx: RequestContext, args: CreateSandboxArgs): Promise<Sandbox> {
    const principal = requireWorkspaceRole(ctx, args.workspaceId, 'member');
    const name = requireName(args.name);
    const hasImage = args.image !== null && args.image !== undefined && args.image !== '';
    const hasSnapshot = args.snapshotId !== null && args.snapshotId !== undefined && args.snapshotId !== '';
    if (hasImage === hasSnapshot) throw new ValidationError('Give exactly one of image and snapshotId', { field: hasImage ? 'snapshotId' : 'image' });

    const cpuMillis = intInRange(args.cpuMillis, 'cpuMillis', 100, 64_000);
    const memoryMb = intInRange(args.memoryMb, 'memoryMb', 16, 262_144);
    const { gpuCount, gpuType } = this.parseGpus(args.gpuCount, args.gpuType);
    const env = stringMap(args.env, 'env', { keyPattern: ENV_NAME });
    const labels = stringMap(args.labels, 'labels', { maxEntries: 64, maxValueLength: 1024 });
    const argv = this.parseArgs(args.args);
    const secretRefs = this.parseSecretRefs(args.secretRefs);
    const volumeMounts = this.parseVolumeMounts(args.volumeMounts);
    const maxLifetimeSeconds = intInRange(args.maxLifetimeSeconds, 'maxLifetimeSeconds', 1, this.o.config.maxLifetimeSeconds);
    const onTtlExpire = this.parseTtlPolicy(args.onTtlExpire, maxLifetimeSeconds);

    let image: string;
    let snapshot: SnapshotEntity | null = null;
    if (hasSnapshot) {
      snapshot = await this.readySnapshot(args.workspaceId, args.snapshotId!, 'boot a sandbox from');
      image = snapshot.imageRef;
    } else {
      image = args.image!;
      if (!IMAGE_REF.test(image)) throw new ValidationError('image is not a valid image reference', { field: 'image' });
      // Answered now, not as a failed sandbox a second later: a typo is the caller's to fix.
      const info = await mapRuntimeErrors('new', () => this.o.runtime.imageInfo(image));
      if (!info) throw new ValidationError(`Image ${image} is not available on the engine`, { field: 'image' });
    }

    await this.checkConcurrency(ctx, args.workspaceId);

    const now = new Date();
    const sandbox: SandboxEntity = {
      id: newId(ID_PREFIX.sandbox),
      workspaceId: args.workspaceId,
      name,
      status: 'pending',
      statusReason: 'created',
      image,
      sourceSnapshotId: snapshot?.id ?? null,
      bootSnapshotId: null,
      cpuMillis,
      memoryMb,
      gpuCount,
      gpuType,
      env,
      args: argv,
      secretRefs,
      volumeMounts,
      labels,
      maxLifetimeSeconds,
      onTtlExpire: maxLifetimeSeconds ? { action: onTtlExpire } : null,
      expiresAt: maxLifetimeSeconds ? new Date(now.getTime() + maxLifetimeSeconds * 1000) : null,
      containerId: null,
      opSeq: 0,
      createdByUserId: principal.userId ?? null,
      createdAt: now,
      updatedAt: now,
      statusChangedAt: now,
      startedAt: null,
      stoppedAt: null,
      deletedAt: null,
    };
    await this.o.sandboxes.insert(sandbox, snapshot ? `created from snapshot ${snapshot.id}` : 'created', this.actor(ctx));
    await this.o.jobs.start(sandbox);
    if (sandbox.expiresAt) await this.o.jobs.ttlExpire(sandbox, sandbox.expiresAt);
    return toSandbox(sandbox);
  }

  async update(ctx: RequestContext, args: UpdateSandboxArgs): Promise<Sandbox> {
    const sandbox = await this.load(ctx, args.id, 'member');
    this.requireState(sandbox, 'update');
    const patch: Partial<SandboxEntity> = {};
    if (args.name !== null && args.name !== undefined) patch.name = requireName(args.name);
    if (args.labels !== null && args.labels !== undefined) patch.labels = stringMap(args.labels, 'labels', { maxEntries: 64, maxValueLength: 1024 });
    if (!Object.keys(patch).length) throw new ValidationError('Give name and/or labels', { field: 'name' });
    await this.o.sandboxes.patch(sandbox.id, patch);
    return toSandbox(Object.assign(sandbox, patch, { updatedAt: new Date() }));
  }

  async delete(ctx: RequestContext, id: string): Promise<Sandbox> {
    const sandbox = await this.transition(ctx, id, 'delete', { to: 'deleting', reason: 'delete requested' });
    await this.o.jobs.delete(sandbox);
    return toSandbox(sandbox);
  }

  async start(ctx: RequestContext, id: string): Promise<Sandbox> {
    const current = await this.load(ctx, id, 'member');
    this.requireState(current, 'start');
    await this.checkConcurrency(ctx, current.workspaceId);
    const sandbox = await this.transition(ctx, id, 'start', { to: 'starting', reason: 'start requested', patch: { bootSnapshotId: null } }, current);
    await this.o.jobs.start(sandbox);
    return toSandbox(sandbox);
  }

  async stop(ctx: RequestContext, id: string): Promise<Sandbox> {
    const sandbox = await this.transition(ctx, id, 'stop', { to: 'stopping', reason: 'stop requested' });
    await this.o.jobs.stop(sandbox);
    return toSandbox(sandbox);
  }

  async startFromLatest(ctx: RequestContext, id: string): Promise<Sandbox> {
    const current = await this.load(ctx, id, 'member');
    this.requireState(current, 'startFromSnapshot');
    const latest = await this.o.snapshots.latestReadyOf(current.id);
    if (!latest) throw new ConflictError(`Sandbox ${current.id} has no ready snapshot to start from`, { sandboxId: current.id });
    return this.bootFromSnapshot(ctx, current, latest, `start requested from latest snapshot ${latest.id}`);
  }

  async startFromSnapshot(ctx: RequestContext, args: StartFromSnapshotArgs): Promise<Sandbox> {
    const current = await this.load(ctx, args.id, 'member');
    this.requireState(current, 'startFromSnapshot');
    const snapshot = await this.readySnapshot(current.workspaceId, args.snapshotId, 'start a sandbox from');
    return this.bootFromSnapshot(ctx, current, snapshot, `start requested from snapshot ${snapshot.id}`);
  }

  /** Used by POST /snapshots/{id}/restore as well. */
  async bootFromSnapshot(ctx: RequestContext, current: SandboxEntity, snapshot: SnapshotEntity, reason: string): Promise<Sandbox> {
    await this.checkConcurrency(ctx, current.workspaceId);
    const sandbox = await this.transition(ctx, current.id, 'startFromSnapshot', { to: 'starting', reason, patch: { bootSnapshotId: snapshot.id } }, current);
    await this.o.jobs.start(sandbox);
    return toSandbox(sandbox);
  }

  async snapshot(ctx: RequestContext, args: SnapshotSandboxArgs): Promise<SandboxWithSnapshot> {
    const current = await this.load(ctx, args.id, 'member');
    this.requireState(current, 'snapshot');
    const snapshot = this.newSnapshotRow(ctx, current, args);
    const resumeStatus = current.status as 'running' | 'stopped';
    const sandbox = await this.transition(ctx, current.id, 'snapshot', { to: 'snapshotting', reason: `snapshot ${snapshot.id} requested` }, current);
    await this.o.snapshots.insert(snapshot);
    await this.o.jobs.snapshot(sandbox, snapshot.id, resumeStatus);
    return { sandbox: toSandbox(sandbox), snapshot: toSnapshot(snapshot) };
  }

  async stopWithSnapshot(ctx: RequestContext, args: SnapshotSandboxArgs): Promise<SandboxWithSnapshot> {
    const current = await this.load(ctx, args.id, 'member');
    this.requireState(current, 'stopWithSnapshot');
    const snapshot = this.newSnapshotRow(ctx, current, args);
    const sandbox = await this.transition(ctx, current.id, 'stopWithSnapshot', { to: 'stopping', reason: `stop with snapshot ${snapshot.id} requested` }, current);
    await this.o.snapshots.insert(snapshot);
    await this.o.jobs.stop(sandbox, snapshot.id);
    return { sandbox: toSandbox(sandbox), snapshot: toSnapshot(snapshot) };
  }

  async extendTtl(ctx: RequestContext, args: ExtendTtlArgs): Promise<Sandbox> {
    const sandbox = await this.load(ctx, args.id, 'member');
    this.requireState(sandbox, 'extendTtl');
    if (!sandbox.expiresAt) throw new ConflictError(`Sandbox ${sandbox.id} has no lifetime to extend (create it with maxLifetimeSeconds)`, { sandboxId: sandbox.id });
    const seconds = intInRange(args.seconds, 'seconds', 1, this.o.config.maxLifetimeSeconds)!;
    const base = Math.max(sandbox.expiresAt.getTime(), Date.now());
    const expiresAt = new Date(base + seconds * 1000);
    const lifetime = Math.ceil((expiresAt.getTime() - sandbox.createdAt.getTime()) / 1000);
    if (lifetime > this.o.config.maxLifetimeSeconds) {
      throw new ValidationError(`A sandbox lives at most ${this.o.config.maxLifetimeSeconds} s; this would make it ${lifetime} s`, { field: 'seconds' });
    }
    await this.o.sandboxes.patch(sandbox.id, { expiresAt, maxLifetimeSeconds: lifetime });
    const updated = Object.assign(sandbox, { expiresAt, maxLifetimeSeconds: lifetime, updatedAt: new Date() });
    await this.o.jobs.ttlExpire(updated, expiresAt);
    return toSandbox(updated);
  }

  async lifecycle(ctx: RequestContext, args: LifecycleArgs): Promise<SandboxLifecycleList> {
    const sandbox = await this.load(ctx, args.id, 'viewer');
    const page = toPage({ page: args.page, limit: args.limit ?? 100 });
    const [rows, total] = await this.o.sandboxes.events(sandbox.id, page);
    return pageResult(rows.map(toLifecycleEvent), total, page);
  }

  /** The sandbox, if the caller holds `role` in its workspace; 404 otherwise (existence not disclosed). */
  async load(ctx: RequestContext, id: string, role: WorkspaceRole): Promise<SandboxEntity> {
    const sandbox = hasPrefix(id, ID_PREFIX.sandbox) ? await this.o.sandboxes.findById(id) : null;
    if (!sandbox || !ctx.principal?.memberships[sandbox.workspaceId]) throw new NotFoundError('Sandbox', id);
    requireWorkspaceRole(ctx, sandbox.workspaceId, role);
    return sandbox;
  }

  /**
   * The sandbox if it belongs to `workspaceId`; 404 otherwise, the same answer as for one that
   * does not exist. For the platform's own callers (a workflow step), which carry no principal:
   * their route has already been reached with the internal signature.
   */
  async loadInWorkspace(workspaceId: string, id: string): Promise<SandboxEntity> {
    const sandbox = hasPrefix(id, ID_PREFIX.sandbox) ? await this.o.sandboxes.findById(id) : null;
    if (!sandbox || sandbox.workspaceId !== workspaceId) throw new NotFoundError('Sandbox', id);
    return sandbox;
  }

  requireState(sandbox: SandboxEntity, operation: SandboxOperation): void {
    if (!(ALLOWED_FROM[operation] as readonly string[]).includes(sandbox.status)) {
      throw new InvalidStateError(`sandbox ${sandbox.id}`, sandbox.status, OPERATION_WORDS[operation] ?? operation);
    }
  }

  async readySnapshot(workspaceId: string, snapshotId: string, purpose: string): Promise<SnapshotEntity> {
    const snapshot = hasPrefix(snapshotId, ID_PREFIX.snapshot) ? await this.o.snapshots.findById(snapshotId) : null;
    if (!snapshot || snapshot.workspaceId !== workspaceId) throw new NotFoundError('Snapshot', snapshotId);
    if (snapshot.status !== 'ready') throw new InvalidStateError(`snapshot ${snapshot.id}`, snapshot.status, purpose);
    return snapshot;
  }

  private async transition(ctx: RequestContext, id: string, operation: SandboxOperation, request: Omit<TransitionRequest, 'from' | 'actor'>, loaded?: SandboxEntity): Promise<SandboxEntity> {
    const current = loaded ?? (await this.load(ctx, id, 'member'));
    this.requireState(current, operation);
    const result = await this.o.sandboxes.transition(current.id, { ...request, from: ALLOWED_FROM[operation], actor: this.actor(ctx), bumpOp: true });
    if (!result.applied) {
      // Another request changed the state between the read and the update.
      const state = result.current?.status ?? 'deleted';
      throw new InvalidStateError(`sandbox ${current.id}`, state, OPERATION_WORDS[operation] ?? operation);
    }
    return result.sandbox;
  }

  private newSnapshotRow(ctx: RequestContext, sandbox: SandboxEntity, args: SnapshotSandboxArgs): SnapshotEntity {
    const id = newId(ID_PREFIX.snapshot);
    const now = new Date();
    return {
      id,
      workspaceId: sandbox.workspaceId,
      name: args.name ? requireName(args.name) : `${sandbox.name} ${now.toISOString()}`,
      description: args.description ?? null,
      labels: stringMap(args.labels, 'labels', { maxEntries: 64, maxValueLength: 1024 }),
      status: 'creating',
      statusReason: null,
      sourceSandboxId: sandbox.id,
      sourceImage: sandbox.image,
      imageRef: snapshotImageRef(sandbox.workspaceId, id).ref,
      sizeBytes: null,
      createdByUserId: ctx.principal?.userId ?? null,
      createdAt: now,
      updatedAt: now,
      readyAt: null,
    };
  }

  /** Creating or starting takes a slot of the workspace's concurrent-sandbox limit (429 when none is free). */
  private async checkConcurrency(ctx: RequestContext, workspaceId: string): Promise<void> {
    await this.o.limits.checkSandboxes(workspaceId, await this.o.sandboxes.countActive(workspaceId), ctx);
  }

  private actor(ctx: RequestContext): string {
    return ctx.principal?.userId ?? 'platform';
  }

  private parseGpus(count: number | null | undefined, type: string | null | undefined): { gpuCount: number; gpuType: string | null } {
    const gpuCount = intInRange(count, 'gpuCount', 0, 16) ?? 0;
    if (gpuCount === 0) {
      if (type) throw new ValidationError('gpuType needs gpuCount of at least 1', { field: 'gpuCount' });
      return { gpuCount, gpuType: null };
    }
    const inventory = this.o.config.gpuInventory;
    const types = Object.keys(inventory);
    const gpuType = (type ?? (types.length === 1 ? types[0] : '')).toLowerCase();
    if (!gpuType) throw new ValidationError(`gpuType is required; the inventory has ${types.join(', ') || 'no GPUs'}`, { field: 'gpuType' });
    const devices = inventory[gpuType];
    if (!devices) throw new ValidationError(`No GPUs of type ${gpuType} in the inventory (${types.join(', ') || 'none configured'})`, { field: 'gpuType' });
    if (gpuCount > devices.length) throw new ValidationError(`The inventory has ${devices.length} GPUs of type ${gpuType}; ${gpuCount} can never be satisfied`, { field: 'gpuCount' });
    return { gpuCount, gpuType };
  }

  private parseArgs(args: string[] | null | undefined): string[] | null {
    if (args === null || args === undefined) return null;
    if (args.length === 0 || args.length > 256) throw new ValidationError('args must hold 1 to 256 strings', { field: 'args' });
    if (args.some((a) => a.length > 32_768 || a.includes('\0'))) throw new ValidationError('args holds an invalid argument', { field: 'args' });
    return args;
  }

  private parseSecretRefs(refs: Array<{ secretKey: string; envVar: string }> | null | undefined): SecretRef[] {
    if (!refs) return [];
    if (refs.length > 100) throw new ValidationError('At most 100 secretRefs', { field: 'secretRefs' });
    const seen = new Set<string>();
    return refs.map((ref, i) => {
      if (!ENV_NAME.test(ref.envVar)) throw new ValidationError(`secretRefs[${i}].envVar is not a valid variable name`, { field: `secretRefs.${i}.envVar` });
      if (!ref.secretKey || ref.secretKey.length > 256) throw new ValidationError(`secretRefs[${i}].secretKey is required`, { field: `secretRefs.${i}.secretKey` });
      if (seen.has(ref.envVar)) throw new ValidationError(`secretRefs: ${ref.envVar} is given twice`, { field: `secretRefs.${i}.envVar` });
      seen.add(ref.envVar);
      return { secretKey: ref.secretKey, envVar: ref.envVar };
    });
  }

  private parseVolumeMounts(mounts: Array<{ volume: string; mountPath: string; readOnly?: boolean }> | null | undefined): VolumeMount[] {
    if (!mounts) return [];
    if (mounts.length > 16) throw new ValidationError('At most 16 volumeMounts', { field: 'volumeMounts' });
    const paths = new Set<string>();
    return mounts.map((m, i) => {
      if (!VOLUME_NAME.test(m.volume)) throw new ValidationError(`volumeMounts[${i}].volume must be lowercase letters, digits, ".", "_" or "-" (up to 63)`, { field: `volumeMounts.${i}.volume` });
      const mountPath = absolutePath(m.mountPath, `volumeMounts.${i}.mountPath`).replace(/\/+$/, '');
      if (!mountPath) throw new ValidationError(`volumeMounts[${i}].mountPath must not be /`, { field: `volumeMounts.${i}.mountPath` });
      if (paths.has(mountPath)) throw new ValidationError(`volumeMounts: ${mountPath} is mounted twice`, { field: `volumeMounts.${i}.mountPath` });
      paths.add(mountPath);
      return { volume: m.volume, mountPath, readOnly: Boolean(m.readOnly) };
    });
  }

  private parseTtlPolicy(policy: { action: string } | null | undefined, maxLifetimeSeconds: number | null): TtlAction {
    if (!policy) return 'delete';
    if (!maxLifetimeSeconds) throw new ValidationError('onTtlExpire needs maxLifetimeSeconds', { field: 'onTtlExpire' });
    if (!(TTL_ACTIONS as readonly string[]).includes(policy.action)) {
      throw new ValidationError(`onTtlExpire.action must be one of ${TTL_ACTIONS.join(', ')}`, { field: 'onTtlExpire.action' });
    }
    return policy.action as TtlAction;
  }
}

/** How an operation reads in "Cannot <op> sandbox X while it is <state>". */
const OPERATION_WORDS: Partial<Record<SandboxOperation, string>> = {
  update: 'update',
  start: 'start',
  startFromSnapshot: 'start from a snapshot',
  stop: 'stop',
  stopWithSnapshot: 'stop with a snapshot',
  snapshot: 'snapshot',
  delete: 'delete',
  extendTtl: 'extend the lifetime of',
  exec: 'run a command in',
  files: 'reach the files of',
  ports: 'reach the ports of',
  logs: 'read the logs of',
};

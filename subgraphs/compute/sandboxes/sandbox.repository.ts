import { In, type DataSource, type EntityManager, type Repository } from 'typeorm';
import type { Page } from '../../../core/pagination';
import { TOPICS, type PlatformPubSub, type SandboxStatusEvent } from '../../../core/pubsub';
import { usageKeys } from '../../../core/rate-limits';
import type { Redis } from '../../../core/redis';
import { SandboxEntity, SandboxEventEntity, SandboxPortEntity, SandboxStatsEntity } from './sandbox.entity';
import { ACTIVE_STATUSES, type SandboxStatus } from './sandbox.states';

export interface TransitionRequest {
  /** States the transition applies from; any other current state refuses it. */
  from: readonly SandboxStatus[];
  to: SandboxStatus;
  reason: string;
  /** User id, or `platform`. */
  actor: string;
  /** Columns changed together with the status. */
  patch?: Partial<Omit<SandboxEntity, 'id' | 'workspaceId' | 'status' | 'opSeq'>>;
  /** Increments op_seq: the transition queues a job whose id carries the new value. */
  bumpOp?: boolean;
}

export type TransitionResult = { applied: true; sandbox: SandboxEntity; fromStatus: SandboxStatus } | { applied: false; current: SandboxEntity | null };

export interface SandboxRepositoryOptions {
  pubsub?: PlatformPubSub;
  /** With both, the workspace's running-sandbox count in Redis follows every transition (billing's rate-limit usage reads it). */
  redis?: Redis;
  redisPrefix?: string;
}

/**
 * The only code that touches the sandbox tables; the compute subgraph and the worker tier share
 * it, so every status change goes through `transition` (conditional, logged, published).
 */
export class SandboxRepository {
  readonly rows: Repository<SandboxEntity>;

  constructor(
    readonly dataSource: DataSource,
    private readonly options: SandboxRepositoryOptions = {},
  ) {
    this.rows = dataSource.getRepository(SandboxEntity);
  }

  /** Inserts a new sandbox with its first lifecycle event. */
  async insert(sandbox: SandboxEntity, reason: string, actor: string): Promise<SandboxEntity> {
    await this.dataSource.transaction(async (manager) => {
      await manager.insert(SandboxEntity, sandbox);
      await this.logEvent(manager, sandbox, null, reason, actor);
    });
    await this.afterTransition(sandbox, null, reason);
    return sandbox;
  }

  /**
   * Moves the sandbox to `to` when its current state is one of `from`, in one transaction with
   * its lifecycle event (row lock, so racing transitions serialise and only one applies).
   */
  async transition(id: string, request: TransitionRequest): Promise<TransitionResult> {
    const result = await this.dataSource.transaction(async (manager): Promise<TransitionResult> => {
      const current = await manager.findOne(SandboxEntity, { where: { id }, lock: { mode: 'pessimistic_write' } });
      if (!current || !request.from.includes(current.status)) return { applied: false, current };
      const fromStatus = current.status;
      const now = new Date();
      const changes: Partial<SandboxEntity> = {
        ...request.patch,
        status: request.to,
        statusReason: request.reason,
        updatedAt: now,
        ...(fromStatus !== request.to ? { statusChangedAt: now } : {}),
        ...(request.bumpOp ? { opSeq: current.opSeq + 1 } : {}),
      };
      await manager.update(SandboxEntity, { id }, changes);
      const sandbox = Object.assign(current, changes);
      await this.logEvent(manager, sandbox, fromStatus, request.reason, request.actor);
      return { applied: true, sandbox, fromStatus };
    });
    if (result.applied) await this.afterTransition(result.sandbox, result.fromStatus, request.reason);
    return result;
  }

  /** Columns that change without a status change (name, labels, TTL, container id). */
  async patch(id: string, patch: Partial<Omit<SandboxEntity, 'id' | 'workspaceId' | 'status'>>): Promise<void> {
    await this.rows.update({ id }, { ...patch, updatedAt: new Date() });
  }

  findById(id: string): Promise<SandboxEntity | null> {
    return this.rows.findOne({ where: { id } });
  }

  findByIds(ids: readonly string[]): Promise<SandboxEntity[]> {
    return ids.length ? this.rows.find({ where: { id: In([...ids]) } }) : Promise.resolve([]);
  }

  /** Newest first. Deleted sandboxes are listed only when asked for by status. */
  listByWorkspace(workspaceId: string, page: Page, filter: { status?: SandboxStatus; name?: string } = {}): Promise<[SandboxEntity[], number]> {
    const qb = this.rows.createQueryBuilder('s').where('s.workspace_id = :workspaceId', { workspaceId });
    if (filter.status) qb.andWhere('s.status = :status', { status: filter.status });
    else qb.andWhere(`s.status <> 'deleted'`);
    if (filter.name) qb.andWhere('s.name = :name', { name: filter.name });
    return qb.orderBy('s.created_at', 'DESC').addOrderBy('s.id', 'ASC').skip(page.offset).take(page.limit).getManyAndCount();
  }

  /** Sandboxes holding a slot of the workspace's concurrent-sandbox limit. */
  countActive(workspaceId: string): Promise<number> {
    return this.rows.count({ where: { workspaceId, status: In([...ACTIVE_STATUSES]) } });
  }

  /** Sandboxes in the given states whose status changed before `before` (the reconciler's candidates). */
  findInStatesSince(states: readonly SandboxStatus[], before: Date): Promise<SandboxEntity[]> {
    return this.rows.createQueryBuilder('s').where('s.status IN (:...states)', { states }).andWhere('s.status_changed_at < :before', { before }).orderBy('s.status_changed_at', 'ASC').limit(500).getMany();
  }

  findByStatus(states: readonly SandboxStatus[], limit = 1000): Promise<SandboxEntity[]> {
    return this.rows.find({ where: { status: In([...states]) }, take: limit, order: { createdAt: 'ASC' } });
  }

  /** Lifecycle log, oldest first. */
  events(sandboxId: string, page: Page): Promise<[SandboxEventEntity[], number]> {
    return this.dataSource.getRepository(SandboxEventEntity).findAndCount({ where: { sandboxId }, order: { id: 'ASC' }, skip: page.offset, take: page.limit });
  }

  ports(sandboxId: string): Promise<SandboxPortEntity[]> {
    return this.dataSource.getRepository(SandboxPortEntity).find({ where: { sandboxId }, order: { port: 'ASC' } });
  }

  findPort(sandboxId: string, port: number): Promise<SandboxPortEntity | null> {
    return this.dataSource.getRepository(SandboxPortEntity).findOne({ where: { sandboxId, port } });
  }

  /** Adds or updates a port (adding one again changes its `public` flag). */
  async upsertPort(port: SandboxPortEntity): Promise<SandboxPortEntity> {
    await this.dataSource.getRepository(SandboxPortEntity).upsert(port, ['sandboxId', 'port']);
    return (await this.findPort(port.sandboxId, port.port))!;
  }

  deletePorts(sandboxId: string): Promise<unknown> {
    return this.dataSource.getRepository(SandboxPortEntity).delete({ sandboxId });
  }

  /** Samples in [from, to], oldest first, at most `limit`. */
  stats(sandboxId: string, from: Date, to: Date, limit: number): Promise<SandboxStatsEntity[]> {
    return this.dataSource
      .getRepository(SandboxStatsEntity)
      .createQueryBuilder('st')
      .where('st.sandbox_id = :sandboxId', { sandboxId })
      .andWhere('st.at BETWEEN :from AND :to', { from, to })
      .orderBy('st.at', 'DESC')
      .limit(limit)
      .getMany()
      .then((rows) => rows.reverse());
  }

  private async logEvent(manager: EntityManager, sandbox: SandboxEntity, fromStatus: SandboxStatus | null, reason: string, actor: string): Promise<void> {
    await manager.insert(SandboxEventEntity, { sandboxId: sandbox.id, workspaceId: sandbox.workspaceId, fromStatus, toStatus: sandbox.status, reason, actor, at: new Date() });
  }

  private async afterTransition(sandbox: SandboxEntity, fromStatus: SandboxStatus | null, reason: string): Promise<void> {
    const { pubsub, redis, redisPrefix } = this.options;
    if (pubsub) {
      const event: SandboxStatusEvent = { sandboxId: sandbox.id, workspaceId: sandbox.workspaceId, fromStatus, toStatus: sandbox.status, reason, at: new Date().toISOString() };
      pubsub.publish(TOPICS.sandboxStatus, event, sandbox.id);
    }
    const wasActive = fromStatus !== null && ACTIVE_STATUSES.includes(fromStatus);
    const isActive = ACTIVE_STATUSES.includes(sandbox.status);
    if (redis && redisPrefix && wasActive !== isActive) {
      // Set from the database, not INCR/DECR: a crash between the two can never leave it drifting.
      await this.syncActiveCount(sandbox.workspaceId);
    }
  }

  /** Writes the workspace's active-sandbox count to the key billing's rate-limit usage reads. */
  async syncActiveCount(workspaceId: string): Promise<number> {
    const count = await this.countActive(workspaceId);
    const { redis, redisPrefix } = this.options;
    if (redis && redisPrefix) await redis.set(usageKeys(redisPrefix, workspaceId).concurrentSandboxes, String(count));
    return count;
  }
}

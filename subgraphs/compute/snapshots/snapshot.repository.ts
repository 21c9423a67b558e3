import { In, type DataSource, type Repository } from 'typeorm';
import type { Page } from '../../../core/pagination';
import { SnapshotEntity } from './snapshot.entity';

/** The only code that touches `compute.snapshots`. */
export class SnapshotRepository {
  readonly rows: Repository<SnapshotEntity>;

  constructor(readonly dataSource: DataSource) {
    this.rows = dataSource.getRepository(SnapshotEntity);
  }

  insert(snapshot: SnapshotEntity): Promise<unknown> {
    return this.rows.insert(snapshot);
  }

  findById(id: string): Promise<SnapshotEntity | null> {
    return this.rows.findOne({ where: { id } });
  }

  findByIds(ids: readonly string[]): Promise<SnapshotEntity[]> {
    return ids.length ? this.rows.find({ where: { id: In([...ids]) } }) : Promise.resolve([]);
  }

  listByWorkspace(workspaceId: string, page: Page, filter: { sandboxId?: string } = {}): Promise<[SnapshotEntity[], number]> {
    return this.rows.findAndCount({
      where: { workspaceId, ...(filter.sandboxId ? { sourceSandboxId: filter.sandboxId } : {}) },
      order: { createdAt: 'DESC', id: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
  }

  /** The newest ready snapshot taken of a sandbox (start-from-latest). */
  latestReadyOf(sandboxId: string): Promise<SnapshotEntity | null> {
    return this.rows.findOne({ where: { sourceSandboxId: sandboxId, status: 'ready' }, order: { createdAt: 'DESC', id: 'DESC' } });
  }

  /** Marks a snapshot ready (or failed) once the engine has its image. */
  async complete(id: string, outcome: { status: 'ready'; sizeBytes: number } | { status: 'failed'; reason: string }): Promise<void> {
    const now = new Date();
    if (outcome.status === 'ready') await this.rows.update({ id, status: 'creating' }, { status: 'ready', sizeBytes: String(outcome.sizeBytes), readyAt: now, updatedAt: now, statusReason: null });
    else await this.rows.update({ id, status: 'creating' }, { status: 'failed', statusReason: outcome.reason, updatedAt: now });
  }

  async update(id: string, patch: Partial<Pick<SnapshotEntity, 'name' | 'description' | 'labels'>>): Promise<void> {
    await this.rows.update({ id }, { ...patch, updatedAt: new Date() });
  }

  async delete(id: string): Promise<void> {
    await this.rows.delete({ id });
  }
}

/** Engine reference of a snapshot's image: one repository per workspace, the snapshot id as tag. */
export function snapshotImageRef(workspaceId: string, snapshotId: string): { repository: string; tag: string; ref: string } {
  const repository = `platform-snapshots/${workspaceId.toLowerCase()}`;
  return { repository, tag: snapshotId, ref: `${repository}:${snapshotId}` };
}

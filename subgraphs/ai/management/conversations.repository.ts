import type { DataSource, Repository } from 'typeorm';
import type { Page } from '../../../core/pagination';
import { ConversationEntity, UsageEntity } from '../model/entities';

/** Reads of `ai.conversations` (written by the proxy) and the usage row of a request. */
export class ConversationRepository {
  private readonly rows: Repository<ConversationEntity>;
  private readonly usage: Repository<UsageEntity>;

  constructor(dataSource: DataSource) {
    this.rows = dataSource.getRepository(ConversationEntity);
    this.usage = dataSource.getRepository(UsageEntity);
  }

  /** Newest first, bodies left out. */
  listByWorkspace(workspaceId: string, page: Page, filter: { keyId?: string } = {}): Promise<[ConversationEntity[], number]> {
    return this.rows.findAndCount({
      select: { requestId: true, workspaceId: true, keyId: true, poolId: true, model: true, status: true, createdAt: true },
      where: { workspaceId, ...(filter.keyId ? { keyId: filter.keyId } : {}) },
      order: { createdAt: 'DESC', requestId: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
  }

  findByRequestId(requestId: string): Promise<ConversationEntity | null> {
    return this.rows.findOne({ where: { requestId } });
  }

  usageOf(requestId: string): Promise<UsageEntity | null> {
    return this.usage.findOne({ where: { requestId } });
  }
}

import { In, type DataSource, type Repository } from 'typeorm';
import type { Page } from '../../../core/pagination';
import { UpstreamEntity } from '../model/entities';

export type UpstreamPatch = Partial<
  Pick<UpstreamEntity, 'name' | 'baseUrl' | 'authKind' | 'credentialCiphertext' | 'refreshTokenCiphertext' | 'credentialExpiresAt' | 'models' | 'modelMap' | 'weight' | 'timeoutMs' | 'enabled'>
>;

/**
 * The only code that touches `ai.upstreams`. Reads select the credential's ciphertext (for its
 * hint and the live test); the refresh token's only when asked for.
 */
export class UpstreamRepository {
  private readonly rows: Repository<UpstreamEntity>;

  constructor(dataSource: DataSource) {
    this.rows = dataSource.getRepository(UpstreamEntity);
  }

  async insert(row: UpstreamEntity): Promise<void> {
    await this.rows.insert(row);
  }

  findById(id: string, options: { withRefreshToken?: boolean } = {}): Promise<UpstreamEntity | null> {
    const query = this.rows.createQueryBuilder('u').addSelect('u.credentialCiphertext').where('u.id = :id', { id });
    if (options.withRefreshToken) query.addSelect('u.refreshTokenCiphertext');
    return query.getOne();
  }

  findByIds(ids: readonly string[]): Promise<UpstreamEntity[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.rows.createQueryBuilder('u').addSelect('u.credentialCiphertext').where({ id: In([...ids]) }).getMany();
  }

  /** Newest first; `id` breaks ties of the same instant so pages are stable. */
  listByWorkspace(workspaceId: string, page: Page): Promise<[UpstreamEntity[], number]> {
    return this.rows
      .createQueryBuilder('u')
      .addSelect('u.credentialCiphertext')
      .where('u.workspaceId = :workspaceId', { workspaceId })
      .orderBy('u.createdAt', 'DESC')
      .addOrderBy('u.id', 'ASC')
      .skip(page.offset)
      .take(page.limit)
      .getManyAndCount();
  }

  async update(id: string, patch: UpstreamPatch, updatedAt: Date): Promise<void> {
    await this.rows.update({ id }, { ...patch, updatedAt });
  }

  /** Pool memberships go with it (ON DELETE CASCADE). */
  async delete(id: string): Promise<boolean> {
    const result = await this.rows.delete({ id });
    return (result.affected ?? 0) > 0;
  }
}

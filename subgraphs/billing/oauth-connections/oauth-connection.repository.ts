import type { DataSource, EntityManager, Repository } from 'typeorm';
import type { IdpName } from '../../../core/config';
import type { Page } from '../../../core/pagination';
import { OAuthConnectionEntity } from './oauth-connection.entity';

/** First half of the advisory lock that serialises saves of one (workspace, provider, account). */
const SAVE_LOCK_CLASS = 724_007;
const TOKEN_COLUMNS = ['connection.accessTokenCiphertext', 'connection.refreshTokenCiphertext'];

/** The columns a token refresh writes. */
export type OAuthConnectionTokenPatch = Pick<OAuthConnectionEntity, 'accessTokenCiphertext' | 'refreshTokenCiphertext' | 'accessTokenExpiresAt' | 'scopes' | 'lastRefreshedAt' | 'updatedAt'>;

/** A connection row held under `SELECT … FOR UPDATE` until the callback returns. */
export interface LockedOAuthConnection {
  /** The row with its token ciphertexts; null when it does not exist (or no longer does). */
  row: OAuthConnectionEntity | null;
  saveTokens(patch: OAuthConnectionTokenPatch): Promise<void>;
  markReauthorizationRequired(at: Date): Promise<void>;
}

/** The only code that touches `billing.oauth_connections`. */
export class OAuthConnectionRepository {
  private readonly rows: Repository<OAuthConnectionEntity>;

  constructor(private readonly dataSource: DataSource) {
    this.rows = dataSource.getRepository(OAuthConnectionEntity);
  }

  /** Newest first; `id` breaks ties of the same instant so pages are stable. */
  async listByWorkspace(workspaceId: string, provider: IdpName, page: Page): Promise<[OAuthConnectionEntity[], number]> {
    return this.rows.findAndCount({
      where: { workspaceId, provider },
      order: { createdAt: 'DESC', id: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
  }

  /** The row with its token ciphertexts (the reads that select them: access-token, delete). */
  async findWithTokens(workspaceId: string, id: string, provider?: IdpName): Promise<OAuthConnectionEntity | null> {
    return this.rows
      .createQueryBuilder('connection')
      .addSelect(TOKEN_COLUMNS)
      .where({ workspaceId, id, ...(provider ? { provider } : {}) })
      .getOne();
  }

  /**
   * Inserts the connection of (workspace, provider, subject), or updates the one already there
   * (a re-connection keeps its id, creator and creation time). `build` receives the id the row
   * will have, so the caller can bind ciphertexts to it. An advisory lock on the triple makes
   * two concurrent exchanges of one account update one row instead of racing the unique key.
   */
  async saveBySubject(
    key: { workspaceId: string; provider: IdpName; subject: string },
    newId: string,
    build: (id: string, existing: OAuthConnectionEntity | null) => OAuthConnectionEntity,
  ): Promise<{ row: OAuthConnectionEntity; created: boolean }> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [SAVE_LOCK_CLASS, `${key.workspaceId} ${key.provider} ${key.subject}`]);
      const existing = await manager.findOne(OAuthConnectionEntity, { where: key, lock: { mode: 'pessimistic_write' } });
      const row = build(existing?.id ?? newId, existing);
      if (existing) await manager.update(OAuthConnectionEntity, { id: existing.id }, row);
      else await manager.insert(OAuthConnectionEntity, row);
      return { row, created: !existing };
    });
  }

  /**
   * Runs `work` while holding the row `FOR UPDATE` in a transaction, so concurrent refreshes of
   * one connection run one after another (refresh tokens are often single-use). Whatever `work`
   * saves commits when it returns; a throw rolls back.
   */
  async withLockedRow<T>(workspaceId: string, id: string, work: (locked: LockedOAuthConnection) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (manager: EntityManager) => {
      const row = await manager
        .createQueryBuilder(OAuthConnectionEntity, 'connection')
        .addSelect(TOKEN_COLUMNS)
        .where({ workspaceId, id })
        .setLock('pessimistic_write')
        .getOne();
      return work({
        row,
        saveTokens: async (patch) => void (await manager.update(OAuthConnectionEntity, { id }, patch)),
        markReauthorizationRequired: async (at) => void (await manager.update(OAuthConnectionEntity, { id }, { status: 'reauthorization_required', updatedAt: at })),
      });
    });
  }

  /** @returns the deleted row with its token ciphertexts (to revoke them), or null when there was none. */
  async deleteReturningTokens(workspaceId: string, provider: IdpName, id: string): Promise<OAuthConnectionEntity | null> {
    return this.dataSource.transaction(async (manager) => {
      const row = await manager
        .createQueryBuilder(OAuthConnectionEntity, 'connection')
        .addSelect(TOKEN_COLUMNS)
        .where({ workspaceId, provider, id })
        .setLock('pessimistic_write')
        .getOne();
      if (!row) return null;
      await manager.delete(OAuthConnectionEntity, { id });
      return row;
    });
  }
}

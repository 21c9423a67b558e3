import type { DataSource, Repository } from 'typeorm';
import { ID_PREFIX, newId } from '../../../core/ids';
import { UserEntity } from './user.entity';

export interface NewUser {
  username: string;
  passwordHash: string;
  isAdmin: boolean;
}

export class UserRepository {
  private readonly rows: Repository<UserEntity>;

  constructor(private readonly dataSource: DataSource) {
    this.rows = dataSource.getRepository(UserEntity);
  }

  /** One `WHERE id = ANY($1)` query for any number of ids; DataLoaders wrap it. */
  findByIds(ids: readonly string[]): Promise<UserEntity[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.rows.createQueryBuilder('u').where('u.id = ANY(:ids)', { ids: [...ids] }).getMany();
  }

  findById(id: string): Promise<UserEntity | null> {
    return this.rows.findOneBy({ id });
  }

  /** Usernames are unique regardless of case. */
  findByUsername(username: string): Promise<UserEntity | null> {
    return this.rows.createQueryBuilder('u').where('lower(u.username) = lower(:username)', { username }).getOne();
  }

  /**
   * Creates the user with a personal workspace it owns, in one transaction. Returns null when
   * the username is taken (INSERT ... ON CONFLICT DO NOTHING, so two processes creating the
   * same user at once cannot both succeed nor fail with an error).
   */
  async createWithPersonalWorkspace(input: NewUser): Promise<UserEntity | null> {
    return this.dataSource.transaction(async (manager) => {
      const userId = newId(ID_PREFIX.user);
      const workspaceId = newId(ID_PREFIX.workspace);
      await manager.query(`INSERT INTO "identity"."workspaces" ("id", "name", "personal") VALUES ($1, $2, true)`, [
        workspaceId,
        `${input.username}'s workspace`,
      ]);
      const inserted: unknown[] = await manager.query(
        `INSERT INTO "identity"."users" ("id", "username", "password_hash", "is_admin", "default_workspace_id")
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING "id"`,
        [userId, input.username, input.passwordHash, input.isAdmin, workspaceId],
      );
      if (!inserted.length) {
        // Taken: undo the workspace too. Throwing rolls the transaction back.
        throw new UsernameTaken();
      }
      await manager.query(
        `INSERT INTO "identity"."workspace_members" ("id", "workspace_id", "user_id", "role") VALUES ($1, $2, $3, 'owner')`,
        [newId(ID_PREFIX.workspaceMember), workspaceId, userId],
      );
      return manager.getRepository(UserEntity).findOneByOrFail({ id: userId });
    }).catch((err: unknown) => {
      if (err instanceof UsernameTaken) return null;
      throw err;
    });
  }
}

class UsernameTaken extends Error {}

import type { DataSource, EntityManager, Repository } from 'typeorm';
import { ID_PREFIX, newId } from '../../../core/ids';
import { UserEntity } from './user.entity';

export interface NewUser {
  username: string;
  passwordHash: string;
  isAdmin: boolean;
  /** An email an identity provider vouched for (stored with email_verified_at); never an unverified one. */
  verifiedEmail?: string;
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

  /** The user whose verified email this is, regardless of case. */
  findByVerifiedEmail(email: string): Promise<UserEntity | null> {
    return this.rows.createQueryBuilder('u').where('lower(u.email) = lower(:email) AND u.emailVerifiedAt IS NOT NULL', { email }).getOne();
  }

  /**
   * Creates the user with a personal workspace it owns, in one transaction. Returns null when
   * the username is taken (INSERT ... ON CONFLICT DO NOTHING, so two processes creating the
   * same user at once cannot both succeed nor fail with an error). `within` adds rows of the
   * caller's in the same transaction (an identity-provider link); a verified email already
   * taken, or anything `within` throws, rolls everything back and is thrown.
   */
  async createWithPersonalWorkspace(input: NewUser, within?: (manager: EntityManager, userId: string) => Promise<void>): Promise<UserEntity | null> {
    return this.dataSource.transaction(async (manager) => {
      const userId = newId(ID_PREFIX.user);
      const workspaceId = newId(ID_PREFIX.workspace);
      await manager.query(`INSERT INTO "identity"."workspaces" ("id", "name", "personal") VALUES ($1, $2, true)`, [
        workspaceId,
        `${input.username}'s workspace`,
      ]);
      const inserted: unknown[] = await manager.query(
        `INSERT INTO "identity"."users" ("id", "username", "password_hash", "is_admin", "default_workspace_id", "email", "email_verified_at")
         VALUES ($1, $2, $3, $4, $5, $6::text, CASE WHEN $6::text IS NULL THEN NULL ELSE now() END)
         ON CONFLICT (lower("username")) DO NOTHING RETURNING "id"`,
        [userId, input.username, input.passwordHash, input.isAdmin, workspaceId, input.verifiedEmail ?? null],
      );
      if (!inserted.length) {
        // Taken: undo the workspace too. Throwing rolls the transaction back.
        throw new UsernameTaken();
      }
      await manager.query(
        `INSERT INTO "identity"."workspace_members" ("id", "workspace_id", "user_id", "role") VALUES ($1, $2, $3, 'owner')`,
        [newId(ID_PREFIX.workspaceMember), workspaceId, userId],
      );
      await within?.(manager, userId);
      return manager.getRepository(UserEntity).findOneByOrFail({ id: userId });
    }).catch((err: unknown) => {
      if (err instanceof UsernameTaken) return null;
      throw err;
    });
  }
}

class UsernameTaken extends Error {}

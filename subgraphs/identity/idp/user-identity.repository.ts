import type { DataSource, EntityManager, Repository } from 'typeorm';
import { UserIdentityEntity } from './user-identity.entity';

export interface NewUserIdentity {
  provider: string;
  subject: string;
  userId: string;
  email: string | null;
}

/** The `user_identities` table. Inserts throw PostgreSQL's 23505 when (provider, subject) is taken. */
export class UserIdentityRepository {
  private readonly rows: Repository<UserIdentityEntity>;

  constructor(dataSource: DataSource) {
    this.rows = dataSource.getRepository(UserIdentityEntity);
  }

  find(provider: string, subject: string): Promise<UserIdentityEntity | null> {
    return this.rows.findOneBy({ provider, subject });
  }

  /** Links an identity to a user; `manager` puts it in the caller's transaction. */
  async insert(row: NewUserIdentity, manager?: EntityManager): Promise<void> {
    const now = new Date();
    await (manager ?? this.rows.manager).insert(UserIdentityEntity, { ...row, createdAt: now, lastLoginAt: now });
  }

  /** Records a sign-in through an existing identity (and the email the provider gave this time). */
  async recordLogin(provider: string, subject: string, email: string | null): Promise<void> {
    await this.rows.update({ provider, subject }, { lastLoginAt: new Date(), email });
  }
}

/** True for PostgreSQL's unique violation (a concurrent sign-in created the same row first). */
export function isUniqueViolation(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const { code, driverError } = err as { code?: string; driverError?: { code?: string } };
  return (code ?? driverError?.code) === '23505';
}

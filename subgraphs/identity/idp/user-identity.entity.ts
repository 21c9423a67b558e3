import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A user's account at an identity provider: who `subject` at `provider` is here. */
@Entity({ name: 'user_identities' })
export class UserIdentityEntity {
  /** `idp-a` or `idp-b`. */
  @PrimaryColumn({ type: 'text' })
  provider: string;

  /** The provider's stable id of the account (`sub`). */
  @PrimaryColumn({ type: 'text' })
  subject: string;

  @Column({ type: 'text', name: 'user_id' })
  userId: string;

  /** The email the provider gave at the last sign-in, verified or not (informational only). */
  @Column({ type: 'text', nullable: true })
  email: string | null;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @Column({ type: 'timestamptz', name: 'last_login_at' })
  lastLoginAt: Date;
}

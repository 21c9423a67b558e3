import { Column, Entity, PrimaryColumn, type ValueTransformer } from 'typeorm';

/** bigint comes back from pg as a string; time steps (about 5.9e7 today) fit a number exactly. */
const stepTransformer: ValueTransformer = {
  to: (value: number | null) => value,
  from: (value: string | null) => (value === null ? null : Number(value)),
};

/**
 * A user's TOTP enrolment: the pending secret of a setup not yet confirmed, and the enrolled
 * secret once a code has confirmed it. Both are AES-256-GCM ciphertexts bound to the user.
 */
@Entity({ name: 'user_totp' })
export class UserTotpEntity {
  @PrimaryColumn({ type: 'text', name: 'user_id' })
  userId: string;

  /** The enrolled secret (encrypted); null while TOTP is off. */
  @Column({ type: 'text', name: 'secret_encrypted', nullable: true })
  secretEncrypted: string | null;

  @Column({ type: 'timestamptz', name: 'enabled_at', nullable: true })
  enabledAt: Date | null;

  /** Time step of the last accepted code; codes of this step or an earlier one are refused. */
  @Column({ type: 'bigint', name: 'last_used_step', nullable: true, transformer: stepTransformer })
  lastUsedStep: number | null;

  /** The secret of a setup awaiting its first code (encrypted). */
  @Column({ type: 'text', name: 'pending_secret_encrypted', nullable: true })
  pendingSecretEncrypted: string | null;

  @Column({ type: 'timestamptz', name: 'pending_expires_at', nullable: true })
  pendingExpiresAt: Date | null;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @Column({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}

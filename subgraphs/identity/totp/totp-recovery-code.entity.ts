import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A recovery code of a user's TOTP enrolment: shown once, stored only as a hash, single use. */
@Entity({ name: 'totp_recovery_codes' })
export class TotpRecoveryCodeEntity {
  @PrimaryColumn({ type: 'text', name: 'user_id' })
  userId: string;

  /** See hashRecoveryCode: sha256 over the user id and the normalised code. */
  @PrimaryColumn({ type: 'text', name: 'code_hash' })
  codeHash: string;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  /** Set when the code is spent. */
  @Column({ type: 'timestamptz', name: 'used_at', nullable: true })
  usedAt: Date | null;
}

import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One refresh token. Tokens issued from one login form a family; rotating marks the old token
 * rotated and issues the next one in the family, so presenting a rotated token again reveals
 * theft and revokes the whole family.
 */
@Entity({ name: 'refresh_tokens' })
export class RefreshTokenEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ type: 'text', name: 'user_id' })
  userId: string;

  @Column({ type: 'text', name: 'family_id' })
  familyId: string;

  /** sha256 of the secret part; the secret itself is never stored. */
  @Column({ type: 'text', name: 'secret_hash' })
  secretHash: string;

  @Column({ type: 'timestamptz', name: 'expires_at' })
  expiresAt: Date;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @Column({ type: 'timestamptz', name: 'rotated_at', nullable: true })
  rotatedAt: Date | null;

  @Column({ type: 'timestamptz', name: 'revoked_at', nullable: true })
  revokedAt: Date | null;
}

import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * A workspace secret as stored: the value only as AES-256-GCM ciphertext whose AAD is the
 * secret's id. Indexes and constraints live in the migration (`CreateSecrets`).
 */
@Entity({ name: 'secrets' })
export class SecretEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId: string;

  @Column({ name: 'key', type: 'text' })
  key: string;

  /** Never selected unless asked for by name: only the internal resolve route needs it. */
  @Column({ name: 'value_ciphertext', type: 'text', select: false })
  valueCiphertext: string;

  @Column({ name: 'created_by_user_id', type: 'text' })
  createdByUserId: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { IdpName } from '../../../core/config';

/** `active`: tokens usable (refreshed when due). `reauthorization_required`: the provider refused a refresh; connect again. */
export type OAuthConnectionStatus = 'active' | 'reauthorization_required';

/**
 * A workspace's connection to an identity provider account, as stored: the account in the
 * clear, the tokens only as AES-256-GCM ciphertext bound to the row id and the token kind.
 * Indexes and constraints live in the migration (`CreateOAuthConnections`).
 */
@Entity({ name: 'oauth_connections' })
export class OAuthConnectionEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId: string;

  @Column({ name: 'provider', type: 'text' })
  provider: IdpName;

  @Column({ name: 'status', type: 'text' })
  status: OAuthConnectionStatus;

  /** The provider's account id (`sub`); with workspace and provider, it identifies the row. */
  @Column({ name: 'subject', type: 'text' })
  subject: string;

  @Column({ name: 'email', type: 'text', nullable: true })
  email: string | null;

  @Column({ name: 'name', type: 'text', nullable: true })
  name: string | null;

  /** Scopes the provider granted (or, when it does not say, the ones asked for). */
  @Column({ name: 'scopes', type: 'text', array: true })
  scopes: string[];

  /** Never selected unless asked for by name: only the access-token route and delete need it. */
  @Column({ name: 'access_token_ciphertext', type: 'text', select: false })
  accessTokenCiphertext: string;

  /** Null when the provider issued no refresh token (then the connection lasts as long as its access token). */
  @Column({ name: 'refresh_token_ciphertext', type: 'text', nullable: true, select: false })
  refreshTokenCiphertext: string | null;

  /** Null when the provider gave no lifetime. */
  @Column({ name: 'access_token_expires_at', type: 'timestamptz', nullable: true })
  accessTokenExpiresAt: Date | null;

  @Column({ name: 'created_by_user_id', type: 'text' })
  createdByUserId: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'last_refreshed_at', type: 'timestamptz', nullable: true })
  lastRefreshedAt: Date | null;
}


import { requireWorkspaceRole } from '../../../core/access';
import { IDP_NAMES, type IdpName } from '../../../core/config';
import type { RequestContext } from '../../../core/context';
import { decrypt, encrypt } from '../../../core/crypto';
import { BadRequestError, InvalidStateError, NotFoundError, ValidationError } from '../../../core/errors';
import { hasPrefix, ID_PREFIX, newId } from '../../../core/ids';
import type { Logger } from '../../../core/logger';
import { newAuthorizationSecrets } from '../../../core/oauth-client';
import { pageResult, toPage, type PageResult } from '../../../core/pagination';
import type { OAuthConnectionEntity } from './oauth-connection.entity';
import { REFRESH_MARGIN_SECONDS, validateCallbackParam, validateRedirectUri, validateScopes } from './oauth-connection.limits';
import { toDeletedOAuthConnection, toOAuthConnection } from './oauth-connection.mapper';
import type { OAuthConnectionProviders } from './oauth-connection.provider';
import type { OAuthConnectionRepository, OAuthConnectionTokenPatch } from './oauth-connection.repository';
import type { OAuthConnectionStateStore } from './oauth-connection.state';
import type { DeletedOAuthConnection, OAuthAuthorizationUrl, OAuthConnection } from './oauth-connection.types';

export interface ListOAuthConnectionsInput {
  workspaceId: string;
  /** @defaultValue idp-a */
  provider?: IdpName | null;
  page?: number | null;
  limit?: number | null;
}

export interface CreateAuthorizationUrlInput {
  workspaceId: string;
  /** @defaultValue idp-a */
  provider?: IdpName | null;
  /** @defaultValue the provider's configured connectionRedirectUri */
  redirectUri?: string | null;
  /** @defaultValue the provider's configured connectionScopes */
  scopes?: string[] | null;
}

export interface ExchangeCodeInput {
  workspaceId: string;
  /** @defaultValue idp-a */
  provider?: IdpName | null;
  code: string;
  state: string;
  /** The redirect's `iss` (RFC 9207); checked when given. */
  iss?: string | null;
}

export interface OAuthConnectionRefInput {
  workspaceId: string;
  /** @defaultValue idp-a */
  provider?: IdpName | null;
  connectionId: string;
}

/** What the internal access-token route answers. */
export interface IssuedAccessToken {
  accessToken: string;
  /** ISO 8601; null when the provider gave no lifetime. */
  expiresAt: string | null;
}

export interface OAuthConnectionServiceOptions {
  repository: OAuthConnectionRepository;
  states: OAuthConnectionStateStore;
  providers: OAuthConnectionProviders;
  /** 32-byte AES-256-GCM key (config.secretsEncryptionKey). */
  encryptionKey: Buffer;
  logger: Logger;
}

type TokenKind = 'access_token' | 'refresh_token';

/** What happened under the row lock of a refresh; acted on after the transaction commits. */
type LockedOutcome =
  | { kind: 'missing' }
  | { kind: 'current'; row: OAuthConnectionEntity }
  | { kind: 'refreshed'; row: OAuthConnectionEntity; accessToken: string }
  | { kind: 'reauthorization_required'; row: OAuthConnectionEntity; reason: string };

/**
 * Workspace connections to identity-provider accounts: the authorization-code flow with PKCE
 * (auth-url, then exchange), the list, removal, and access tokens for other domains, refreshed
 * before they expire. Tokens go in encrypted (AES-256-GCM, AAD `<connection id>:<token kind>`)
 * and come out only through `issueAccessToken` (the internal route). Listing needs the viewer
 * role, everything else the admin role; non-members see 404.
 */
export class OAuthConnectionService {
  private readonly repository: OAuthConnectionRepository;
  private readonly states: OAuthConnectionStateStore;
  private readonly providers: OAuthConnectionProviders;
  private readonly encryptionKey: Buffer;
  private readonly logger: Logger;

  constructor(options: OAuthConnectionServiceOptions) {
    this.repository = options.repository;
    this.states = options.states;
    this.providers = options.providers;
    this.encryptionKey = options.encryptionKey;
    this.logger = options.logger;
  }

  async list(ctx: RequestContext, input: ListOAuthConnectionsInput): Promise<PageResult<OAuthConnection>> {
    requireWorkspaceRole(ctx, input.workspaceId, 'viewer');
    const provider = parseProvider(input.provider);
    const page = toPage(input);
    const [rows, total] = await this.repository.listByWorkspace(input.workspaceId, provider, page);
    return pageResult(rows.map(toOAuthConnection), total, page);
  }

  async createAuthorizationUrl(ctx: RequestContext, input: CreateAuthorizationUrlInput): Promise<OAuthAuthorizationUrl> {
    const principal = requireWorkspaceRole(ctx, input.workspaceId, 'admin');
    const provider = parseProvider(input.provider);
    const config = this.providers.config(provider);
    const redirectUri = input.redirectUri != null ? validateRedirectUri(input.redirectUri) : config.connectionRedirectUri;
    if (!redirectUri) {
      throw new ValidationError(`redirectUri is required: this platform has no default connection redirect URI for ${provider}`, { field: 'redirectUri' });
    }
    const scopes = input.scopes != null ? validateScopes(input.scopes) : config.connectionScopes;
    const { state, nonce, codeVerifier, codeChallenge } = newAuthorizationSecrets();
    const url = await this.providers.authorizationUrl(provider, { redirectUri, scopes, state, nonce, codeChallenge });
    const expiresAt = await this.states.save(state, { workspaceId: input.workspaceId, provider, userId: principal.userId, codeVerifier, nonce, redirectUri, scopes });
    this.logger.info('oauth connection authorization started', { workspaceId: input.workspaceId, provider, userId: principal.userId });
    return { url, state, redirectUri, scopes, expiresAt: expiresAt.toISOString() };
  }

  /**
   * Takes the state (single use, whatever happens next), exchanges the code and stores the
   * connection; the same account connected again updates its row.
   */
  async exchangeCode(ctx: RequestContext, input: ExchangeCodeInput): Promise<OAuthConnection> {
    const principal = requireWorkspaceRole(ctx, input.workspaceId, 'admin');
    const provider = parseProvider(input.provider);
    const code = validateCallbackParam('code', input.code);
    const state = validateCallbackParam('state', input.state);
    const iss = input.iss == null ? null : validateCallbackParam('iss', input.iss);
    this.providers.config(provider); // 503 before the state is spent

    const pending = await this.states.take(state);
    if (!pending) throw new BadRequestError('Unknown, expired or already used state: start again with auth-url', { field: 'state' });
    if (pending.workspaceId !== input.workspaceId || pending.provider !== provider) {
      throw new BadRequestError('This state was issued for another workspace or provider: start again with auth-url', { field: 'state' });
    }
    if (pending.userId !== principal.userId) {
      throw new BadRequestError('This state was issued to another user: the user who asked for the authorization URL must exchange the code', { field: 'state' });
    }

    const { tokens, account } = await this.providers.exchangeCode(pending, { code, state, iss });
    const now = new Date();
    const { row, created } = await this.repository.saveBySubject(
      { workspaceId: input.workspaceId, provider, subject: account.subject },
      newId(ID_PREFIX.oauthConnection),
      (id, existing) => ({
        id,
        workspaceId: input.workspaceId,
        provider,
        status: 'active',
        subject: account.subject,
        email: account.email,
        name: account.name,
        scopes: tokens.scopes ?? pending.scopes,
        accessTokenCiphertext: this.seal(id, 'access_token', tokens.accessToken),
        refreshTokenCiphertext: tokens.refreshToken ? this.seal(id, 'refresh_token', tokens.refreshToken) : null,
        accessTokenExpiresAt: tokens.expiresAt,
        createdByUserId: existing?.createdByUserId ?? principal.userId,
        createdAt: existing?.createdAt ?? now,
        updatedAt: now,
        lastRefreshedAt: existing?.lastRefreshedAt ?? null,
      }),
    );
    this.logger.info(created ? 'oauth connection created' : 'oauth connection re-authorised', {
      connectionId: row.id,
      workspaceId: row.workspaceId,
      provider,
      userId: principal.userId,
      hasRefreshToken: tokens.refreshToken !== null,
    });
    return toOAuthConnection(row);
  }

  /** Deletes the row, then revokes its tokens at the provider (best effort: the row is gone either way). */
  async delete(ctx: RequestContext, input: OAuthConnectionRefInput): Promise<DeletedOAuthConnection> {
    const principal = requireWorkspaceRole(ctx, input.workspaceId, 'admin');
    const provider = parseProvider(input.provider);
    const row = hasPrefix(input.connectionId, ID_PREFIX.oauthConnection) ? await this.repository.deleteReturningTokens(input.workspaceId, provider, input.connectionId) : null;
    if (!row) throw new NotFoundError('OAuth connection', input.connectionId);

    const tokens: Array<{ token: string; hint: TokenKind }> = [];
    try {
      // The refresh token first: revoking it ends the grant, and with it the access tokens, at most providers.
      if (row.refreshTokenCiphertext) tokens.push({ token: this.open(row, 'refresh_token'), hint: 'refresh_token' });
      tokens.push({ token: this.open(row, 'access_token'), hint: 'access_token' });
    } catch {
      // open() logged it; the connection is deleted all the same.
    }
    const revoked = tokens.length ? await this.providers.revoke(provider, tokens, row.id) : false;
    this.logger.info('oauth connection deleted', { connectionId: row.id, workspaceId: row.workspaceId, provider, userId: principal.userId, revoked });
    return toDeletedOAuthConnection(row.id);
  }

  /**
   * A usable access token of a connection, for other domains (the internal route). A token
   * expiring within REFRESH_MARGIN_SECONDS is refreshed first, under a row lock, so concurrent
   * callers refresh once: a caller that finds, under the lock, a token replaced or refreshed
   * since its own request began answers that token instead of spending the refresh token again
   * (this also covers callers that first read the row just after another's refresh, when the
   * provider's token lifetime is shorter than the margin). A refresh the provider refuses marks
   * the connection `reauthorization_required` (409).
   *
   * An envelope that carries a user must be a member of the workspace; one without a user is
   * the platform itself (a worker acting on a job its service already authorised).
   */
  async issueAccessToken(ctx: RequestContext, body: unknown): Promise<IssuedAccessToken> {
    const startedAt = new Date();
    const input = parseAccessTokenInput(body);
    if (ctx.principal) requireWorkspaceRole(ctx, input.workspaceId, 'member');
    const seen = hasPrefix(input.connectionId, ID_PREFIX.oauthConnection) ? await this.repository.findWithTokens(input.workspaceId, input.connectionId) : null;
    if (!seen) throw new NotFoundError('OAuth connection', input.connectionId);
    if (seen.status !== 'active') throw reauthorizationRequired(seen);
    if (!isDue(seen, new Date())) return this.issued(seen, this.open(seen, 'access_token'), ctx);

    const outcome = await this.repository.withLockedRow<LockedOutcome>(input.workspaceId, input.connectionId, async (locked) => {
      const row = locked.row;
      const now = new Date();
      if (!row) return { kind: 'missing' };
      if (row.status !== 'active') return { kind: 'reauthorization_required', row, reason: 'already marked' };
      // Replaced (refresh or re-connection) by someone else since this request began: share that token.
      const replaced = row.accessTokenCiphertext !== seen.accessTokenCiphertext || (row.lastRefreshedAt !== null && row.lastRefreshedAt >= startedAt);
      if (replaced && !isExpired(row, now)) return { kind: 'current', row };
      if (!isDue(row, now)) return { kind: 'current', row };
      if (!row.refreshTokenCiphertext) {
        if (!isExpired(row, now)) return { kind: 'current', row }; // nothing to refresh with, but still valid
        await locked.markReauthorizationRequired(now);
        return { kind: 'reauthorization_required', row, reason: 'expired without a refresh token' };
      }
      const result = await this.providers.refresh(row.provider, this.open(row, 'refresh_token'));
      const at = new Date();
      if (result.kind === 'refused') {
        await locked.markReauthorizationRequired(at);
        return { kind: 'reauthorization_required', row, reason: `refresh refused (${result.error})` };
      }
      const { tokens } = result;
      const patch: OAuthConnectionTokenPatch = {
        accessTokenCiphertext: this.seal(row.id, 'access_token', tokens.accessToken),
        // A provider that does not rotate refresh tokens answers none: the old one stays valid.
        refreshTokenCiphertext: tokens.refreshToken ? this.seal(row.id, 'refresh_token', tokens.refreshToken) : row.refreshTokenCiphertext,
        accessTokenExpiresAt: tokens.expiresAt,
        scopes: tokens.scopes ?? row.scopes,
        lastRefreshedAt: at,
        updatedAt: at,
      };
      await locked.saveTokens(patch);
      return { kind: 'refreshed', row: { ...row, ...patch }, accessToken: tokens.accessToken };
    });

    switch (outcome.kind) {
      case 'missing':
        throw new NotFoundError('OAuth connection', input.connectionId); // deleted meanwhile
      case 'reauthorization_required':
        this.logger.warn('oauth connection needs re-authorisation', { connectionId: outcome.row.id, workspaceId: outcome.row.workspaceId, provider: outcome.row.provider, reason: outcome.reason });
        throw reauthorizationRequired(outcome.row);
      case 'refreshed':
        this.logger.info('oauth connection access token refreshed', { connectionId: outcome.row.id, workspaceId: outcome.row.workspaceId, provider: outcome.row.provider });
        return this.issued(outcome.row, outcome.accessToken, ctx);
      case 'current':
        return this.issued(outcome.row, this.open(outcome.row, 'access_token'), ctx);
    }
  }

  private issued(row: OAuthConnectionEntity, accessToken: string, ctx: RequestContext): IssuedAccessToken {
    this.logger.debug('oauth connection access token issued', { connectionId: row.id, workspaceId: row.workspaceId, userId: ctx.principal?.userId ?? null });
    return { accessToken, expiresAt: row.accessTokenExpiresAt?.toISOString() ?? null };
  }

  /** The AAD binds a ciphertext to its row and to its kind: it cannot be moved to another row, or swapped with the other token. */
  private seal(connectionId: string, kind: TokenKind, token: string): string {
    return encrypt(this.encryptionKey, token, `${connectionId}:${kind}`);
  }

  private open(row: OAuthConnectionEntity, kind: TokenKind): string {
    const stored = kind === 'access_token' ? row.accessTokenCiphertext : row.refreshTokenCiphertext;
    try {
      return decrypt(this.encryptionKey, stored ?? '', `${row.id}:${kind}`).toString('utf8');
    } catch {
      // Tampered, moved or encrypted under another key. Said without the ciphertext.
      this.logger.error('oauth connection token failed to decrypt', { connectionId: row.id, workspaceId: row.workspaceId, kind });
      throw new Error(`The ${kind} of OAuth connection ${row.id} could not be decrypted`);
    }
  }
}

/** Due for a refresh: it expires within the margin. A token without an expiry never is. */
function isDue(row: OAuthConnectionEntity, now: Date): boolean {
  return row.accessTokenExpiresAt !== null && row.accessTokenExpiresAt.getTime() - now.getTime() <= REFRESH_MARGIN_SECONDS * 1000;
}

function isExpired(row: OAuthConnectionEntity, now: Date): boolean {
  return row.accessTokenExpiresAt !== null && row.accessTokenExpiresAt.getTime() <= now.getTime();
}

function reauthorizationRequired(row: OAuthConnectionEntity): InvalidStateError {
  // "Cannot issue an access token for OAuth connection oac_… while it is reauthorization_required"
  return new InvalidStateError(`OAuth connection ${row.id}`, 'reauthorization_required', 'issue an access token for');
}

/** GraphQL has checked the enum already; direct callers (tests, other services) get the same check. */
function parseProvider(provider: IdpName | null | undefined): IdpName {
  if (provider == null) return 'idp-a';
  if (!(IDP_NAMES as readonly string[]).includes(provider)) throw new ValidationError(`provider must be one of ${IDP_NAMES.join(', ')}`, { field: 'provider' });
  return provider;
}

function parseAccessTokenInput(body: unknown): { workspaceId: string; connectionId: string } {
  const { workspaceId, connectionId } = (body ?? {}) as { workspaceId?: unknown; connectionId?: unknown };
  if (typeof workspaceId !== 'string' || !workspaceId) throw new ValidationError('workspaceId is required', { field: 'workspaceId' });
  if (typeof connectionId !== 'string' || !connectionId) throw new ValidationError('connectionId is required', { field: 'connectionId' });
  return { workspaceId, connectionId };
}

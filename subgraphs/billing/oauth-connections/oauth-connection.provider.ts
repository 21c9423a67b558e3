import type { BaseClient, TokenSet, UserinfoResponse } from 'openid-client';
import type { IdentityProviderConfig, IdpName } from '../../../core/config';
import { BadRequestError, UnavailableError } from '../../../core/errors';
import type { Logger } from '../../../core/logger';
import type { OAuthClients } from '../../../core/oauth-client';
import { oauthErrorCode, providerError } from '../../../core/oauth-provider-errors';
import type { PendingConnection } from './oauth-connection.state';

/** Tokens a provider issued for a connection. */
export interface ConnectionTokens {
  accessToken: string;
  /** Null when the provider issued none (or, on refresh, did not rotate it). */
  refreshToken: string | null;
  /** Null when the provider gave no lifetime. */
  expiresAt: Date | null;
  /** Granted scopes, when the provider says. */
  scopes: string[] | null;
}

/** The provider account a connection acts as, for display and to recognise a re-connection. */
export interface ConnectedAccount {
  subject: string;
  email: string | null;
  name: string | null;
}

export type RefreshOutcome = { kind: 'refreshed'; tokens: ConnectionTokens } | { kind: 'refused'; error: string };

export interface AuthorizationRequest {
  redirectUri: string;
  scopes: string[];
  state: string;
  nonce: string;
  codeChallenge: string;
}

/** Refresh-token refusals that mean the grant is gone (revoked, expired, rotated away): connect again. */
const GRANT_GONE_ERRORS = new Set(['invalid_grant']);

/**
 * The protocol side of workspace connections, over openid-client: authorization URLs, the code
 * exchange, refresh and revocation. Every failure comes out as a domain error (400 for what the
 * caller can fix, 503 for the provider), never as an openid-client error.
 */
export class OAuthConnectionProviders {
  constructor(
    private readonly clients: OAuthClients,
    private readonly logger: Logger,
  ) {}

  /** The provider's configuration; 503 when this platform has none. */
  config(provider: IdpName): IdentityProviderConfig {
    return this.clients.providerConfig(provider);
  }

  async authorizationUrl(provider: IdpName, request: AuthorizationRequest): Promise<string> {
    const client = await this.clients.client(provider);
    return client.authorizationUrl({
      scope: request.scopes.join(' '),
      state: request.state,
      code_challenge: request.codeChallenge,
      code_challenge_method: 'S256',
      redirect_uri: request.redirectUri,
      // Providers issue refresh tokens (offline_access) only on an explicit consent.
      prompt: 'consent',
      ...(expectsIdToken(request.scopes) ? { nonce: request.nonce } : {}),
    });
  }

  /**
   * Exchanges the code (PKCE verifier, state and, for OIDC, the ID token's nonce, signature,
   * issuer and audience checked by openid-client) and reads the account it belongs to.
   * `iss` is the authorization response's issuer parameter (RFC 9207) when the caller passes it
   * on; without it the issuer the state was issued for stands in, since the state already binds
   * the provider.
   */
  async exchangeCode(pending: PendingConnection, params: { code: string; state: string; iss?: string | null }): Promise<{ tokens: ConnectionTokens; account: ConnectedAccount }> {
    const { provider } = pending;
    const client = await this.clients.client(provider);
    const callbackParams = { code: params.code, state: params.state, iss: params.iss ?? client.issuer.metadata.issuer };
    const checks = { state: params.state, code_verifier: pending.codeVerifier };
    let tokenSet: TokenSet;
    try {
      tokenSet = expectsIdToken(pending.scopes)
        ? await client.callback(pending.redirectUri, callbackParams, { ...checks, nonce: pending.nonce })
        : await client.oauthCallback(pending.redirectUri, callbackParams, checks);
    } catch (err) {
      throw providerError(err, provider, 'exchange the authorization code');
    }
    const tokens = tokensOf(tokenSet, provider);
    return { tokens, account: await this.accountOf(client, provider, tokenSet) };
  }

  /**
   * Trades a refresh token for fresh tokens. A refusal that means the grant is gone answers
   * `refused` (the connection needs re-authorisation); other failures throw 503.
   */
  async refresh(provider: IdpName, refreshToken: string): Promise<RefreshOutcome> {
    const client = await this.clients.client(provider);
    try {
      return { kind: 'refreshed', tokens: tokensOf(await client.refresh(refreshToken), provider) };
    } catch (err) {
      const code = oauthErrorCode(err);
      if (code && GRANT_GONE_ERRORS.has(code)) return { kind: 'refused', error: code };
      // The caller did not send the refresh token: anything but a gone grant is the provider's problem.
      throw toUnavailable(providerError(err, provider, 'refresh the access token'), provider);
    }
  }

  /**
   * Best effort: revokes the tokens at the provider when it has a revocation endpoint (RFC 7009);
   * failures are logged (without the tokens) and swallowed.
   */
  async revoke(provider: IdpName, tokens: Array<{ token: string; hint: 'access_token' | 'refresh_token' }>, connectionId: string): Promise<boolean> {
    let client: BaseClient;
    try {
      client = await this.clients.client(provider);
    } catch (err) {
      this.logger.warn('oauth connection tokens not revoked: provider unavailable', { connectionId, provider, err });
      return false;
    }
    if (!client.issuer.metadata.revocation_endpoint) return false;
    let revoked = true;
    for (const { token, hint } of tokens) {
      try {
        await client.revoke(token, hint);
      } catch (err) {
        revoked = false;
        this.logger.warn('oauth connection token not revoked', { connectionId, provider, hint, reason: err instanceof Error ? err.message : 'unknown' });
      }
    }
    return revoked;
  }

  /**
   * The account: the verified ID token's `sub` when there is one, the userinfo endpoint for the
   * rest (and for everything with plain OAuth 2). openid-client checks that userinfo's `sub`
   * matches the ID token's.
   */
  private async accountOf(client: BaseClient, provider: IdpName, tokenSet: TokenSet): Promise<ConnectedAccount> {
    const claims = tokenSet.id_token ? tokenSet.claims() : undefined;
    let info: UserinfoResponse | undefined;
    if (client.issuer.metadata.userinfo_endpoint) {
      try {
        info = await client.userinfo(tokenSet);
      } catch (err) {
        // With a verified ID token the account is known; userinfo only adds display fields.
        if (!claims) throw toUnavailable(providerError(err, provider, 'read the connected account'), provider);
        this.logger.warn('oauth connection userinfo failed; using the ID token claims', { provider, reason: err instanceof Error ? err.message : 'unknown' });
      }
    }
    const subject = stringClaim(claims?.sub) ?? stringClaim(info?.sub) ?? stringClaim((info as Record<string, unknown> | undefined)?.id);
    if (!subject) throw new UnavailableError(`Identity provider ${provider} did not say which account was connected (no sub)`, { provider });
    return {
      subject,
      email: stringClaim(info?.email) ?? stringClaim(claims?.email) ?? null,
      name: stringClaim(info?.name) ?? stringClaim(claims?.name) ?? null,
    };
  }
}

/** With `openid` among the scopes an OIDC provider answers an ID token, which is then verified. */
function expectsIdToken(scopes: string[]): boolean {
  return scopes.includes('openid');
}

function tokensOf(tokenSet: TokenSet, provider: IdpName): ConnectionTokens {
  if (!tokenSet.access_token) throw new UnavailableError(`Identity provider ${provider} answered no access token`, { provider });
  return {
    accessToken: tokenSet.access_token,
    refreshToken: tokenSet.refresh_token ?? null,
    expiresAt: typeof tokenSet.expires_at === 'number' ? new Date(tokenSet.expires_at * 1000) : null,
    scopes: typeof tokenSet.scope === 'string' ? tokenSet.scope.split(' ').filter(Boolean) : null,
  };
}

function stringClaim(value: unknown): string | undefined {
  if (typeof value === 'string' && value) return value;
  if (typeof value === 'number') return String(value);
  return undefined;
}

/** For calls that carry nothing of the caller's (refresh, userinfo after an exchange), a refusal is the provider's problem too. */
function toUnavailable(err: unknown, provider: IdpName): unknown {
  return err instanceof BadRequestError ? new UnavailableError(err.message, { ...err.details, provider }) : err;
}

import { errors, type BaseClient, type TokenSet, type UserinfoResponse } from 'openid-client';
import type { IdpName } from '../../../core/config';
import type { OAuthClients } from '../../../core/oauth-client';
import { providerError } from '../../../core/oauth-provider-errors';

/** Who the provider says signed in. */
export interface ProviderProfile {
  /** The provider's stable account id (`sub`; `id` for OAuth 2 userinfo without `sub`). */
  subject: string;
  email: string | null;
  /** True only when the provider said so explicitly (`email_verified === true`). */
  emailVerified: boolean;
  name: string | null;
}

/** What the authorization request committed to, checked against the callback. */
export interface CallbackChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
  redirectUri: string;
}

/**
 * The provider side of browser sign-in, through openid-client: the authorization URL, and the
 * callback turned into a verified profile. Every failure of the provider or of its answer
 * becomes a domain error (core/oauth-provider-errors: 400 the provider refused or its answer
 * failed verification, 503 it cannot be reached or failed), never a 500.
 */
export class ProviderSignIn {
  constructor(private readonly clients: OAuthClients) {}

  /** Throws 503 UNAVAILABLE when the provider is not configured. */
  protocolOf(provider: IdpName): 'oidc' | 'oauth2' {
    return this.clients.providerConfig(provider).protocol;
  }

  async authorizationUrl(provider: IdpName, request: { state: string; nonce: string; codeChallenge: string; redirectUri: string }): Promise<string> {
    const config = this.clients.providerConfig(provider);
    const client = await this.clients.client(provider);
    return client.authorizationUrl({
      scope: config.scopes.join(' '),
      state: request.state,
      // A nonce means something only to an ID token; plain OAuth 2 servers may reject unknown parameters.
      ...(config.protocol === 'oidc' ? { nonce: request.nonce } : {}),
      code_challenge: request.codeChallenge,
      code_challenge_method: 'S256',
      redirect_uri: request.redirectUri,
    });
  }

  /**
   * Exchanges the callback's code (PKCE verifier, state; nonce and ID token for `oidc`) and
   * answers who signed in. `oidc`: the ID token is verified by openid-client, and userinfo
   * fills in email and name when the ID token lacks them. `oauth2`: userinfo is the only source.
   */
  async profileFromCallback(provider: IdpName, callbackUrl: string, checks: CallbackChecks): Promise<ProviderProfile> {
    const protocol = this.protocolOf(provider);
    const client = await this.clients.client(provider);
    try {
      const params = client.callbackParams(callbackUrl);
      return protocol === 'oidc' ? await this.oidcProfile(client, params, checks) : await this.oauth2Profile(client, params, checks);
    } catch (err) {
      throw providerError(err, provider, 'sign in');
    }
  }

  private async oidcProfile(client: BaseClient, params: ReturnType<BaseClient['callbackParams']>, checks: CallbackChecks): Promise<ProviderProfile> {
    const tokens = await client.callback(checks.redirectUri, params, {
      state: checks.state,
      nonce: checks.nonce,
      code_verifier: checks.codeVerifier,
      response_type: 'code',
    });
    const claims = tokens.claims();
    if (typeof claims.email === 'string' || !client.issuer.metadata.userinfo_endpoint || !tokens.access_token) return profileOf(claims, claims.sub);
    const userinfo = await client.userinfo(tokens);
    // OIDC Core 5.3.2: userinfo about someone else than the ID token must not be used.
    if (userinfo.sub !== claims.sub) throw new errors.RPError('userinfo sub does not match the ID token');
    return profileOf({ ...userinfo, ...claims, ...pickEmail(userinfo) }, claims.sub);
  }

  /**
   * The code is exchanged with `client.grant` rather than `oauthCallback`: openid-client refuses a
   * token response carrying an ID token there, and an OIDC server configured as `oauth2` sends
   * one. An `oauth2` provider is trusted through userinfo alone, so its ID token is ignored. The
   * checks `oauthCallback` makes on the callback itself (state, `iss`) are made here.
   */
  private async oauth2Profile(client: BaseClient, params: ReturnType<BaseClient['callbackParams']>, checks: CallbackChecks): Promise<ProviderProfile> {
    if (params.state !== checks.state) throw new errors.RPError('state mismatch');
    if (params.iss !== undefined && params.iss !== client.issuer.metadata.issuer) throw new errors.RPError('iss mismatch');
    if (params.error) throw new errors.OPError({ error: params.error, error_description: params.error_description });
    if (!params.code) throw new errors.RPError('code missing from response');
    const tokens: TokenSet = await client.grant({ grant_type: 'authorization_code', code: params.code, redirect_uri: checks.redirectUri, code_verifier: checks.codeVerifier });
    if (!tokens.access_token) throw new errors.RPError('access_token missing from the token response');
    const userinfo: UserinfoResponse & { id?: unknown } = await client.userinfo(tokens.access_token);
    const subject = typeof userinfo.sub === 'string' && userinfo.sub ? userinfo.sub : typeof userinfo.id === 'string' || typeof userinfo.id === 'number' ? String(userinfo.id) : '';
    return profileOf(userinfo, subject);
  }
}

function pickEmail(source: UserinfoResponse): Record<string, unknown> {
  // Email and its verification travel together, from the same source.
  return { email: source.email, email_verified: source.email_verified };
}

function profileOf(claims: Record<string, unknown>, subject: unknown): ProviderProfile {
  if (typeof subject !== 'string' || !subject || subject.length > 255) throw new errors.RPError('the provider named no account (no subject)');
  const email = typeof claims.email === 'string' && claims.email.includes('@') && claims.email.length <= 320 ? claims.email : null;
  return {
    subject,
    email,
    emailVerified: email !== null && claims.email_verified === true,
    name: typeof claims.name === 'string' ? claims.name : null,
  };
}

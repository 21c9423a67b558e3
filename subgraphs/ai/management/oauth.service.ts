import { requireUser, requireWorkspaceRole, selectWorkspaceId } from '../../../core/access';
import type { AiConfig } from '../../../core/config';
import type { RequestContext } from '../../../core/context';
import { BadRequestError, DomainError, InvalidStateError, UnavailableError, ValidationError } from '../../../core/errors';
import type { Logger } from '../../../core/logger';
import { newAuthorizationSecrets } from '../../../core/oauth-client';
import type { CredentialVault } from './credentials';
import type { AiOAuthStart, CompleteAiOAuthArgs, RefreshAiOAuthArgs, StartAiOAuthArgs } from './oauth.types';
import { TokenEndpointRefusal, type AiOAuthStates, type VendorOAuthConfig, type VendorTokenClient } from './oauth.tokens';
import type { UpstreamService } from './upstreams.service';
import type { AiUpstream } from './upstreams.types';
import { parseBaseUrl, parseProvider, parseRedirectUri, PROVIDER_APIS, requireName, type ProviderToken } from './validation';

export interface AiOAuthServiceOptions {
  oauth: AiConfig['oauth'];
  states: AiOAuthStates;
  tokens: VendorTokenClient;
  upstreams: UpstreamService;
  vault: CredentialVault;
  logger: Logger;
}

/**
 * Upstream credentials by OAuth 2 (authorization code with PKCE S256): start remembers the
 * pending upstream under a single-use state, complete exchanges the code and creates the
 * upstream (authKind oauth), refresh trades the stored refresh token for new tokens. Member role
 * in the upstream's workspace; a provider without configuration is 503.
 */
export class AiOAuthService {
  constructor(private readonly o: AiOAuthServiceOptions) {}

  async start(ctx: RequestContext, args: StartAiOAuthArgs): Promise<AiOAuthStart> {
    const provider = parseProvider(args.provider);
    const workspaceId = selectWorkspaceId(ctx, args.workspaceId);
    const principal = requireWorkspaceRole(ctx, workspaceId, 'member');
    const config = this.configOf(provider);
    const name = requireName(args.name);
    const baseUrl = parseBaseUrl(args.baseUrl);
    const redirectUri = args.redirectUri != null ? parseRedirectUri(args.redirectUri) : config.redirectUri;
    if (!redirectUri) throw new ValidationError(`redirectUri is required: this platform has no default redirect URI for ${provider}`, { field: 'redirectUri' });
    const { state, codeVerifier, codeChallenge } = newAuthorizationSecrets();
    await this.o.states.save(state, { workspaceId, userId: principal.userId, provider, name, baseUrl, codeVerifier, redirectUri });
    const url = new URL(config.authorizationUrl);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', config.clientId);
    url.searchParams.set('redirect_uri', redirectUri);
    if (config.scopes.length) url.searchParams.set('scope', config.scopes.join(' '));
    url.searchParams.set('state', state);
    url.searchParams.set('code_challenge', codeChallenge);
    url.searchParams.set('code_challenge_method', 'S256');
    this.o.logger.info('ai oauth started', { workspaceId, provider, userId: principal.userId });
    return { authorizationUrl: url.toString(), state, expiresIn: this.o.states.ttlSeconds };
  }

  async complete(ctx: RequestContext, args: CompleteAiOAuthArgs): Promise<AiUpstream> {
    const provider = parseProvider(args.provider);
    const principal = requireUser(ctx);
    const config = this.configOf(provider);
    if (typeof args.code !== 'string' || !args.code || args.code.length > 4096) throw new ValidationError('code must be the code of the redirect', { field: 'code' });
    if (typeof args.state !== 'string' || !args.state || args.state.length > 512) throw new ValidationError('state must be the state of the redirect', { field: 'state' });
    // Another user's or provider's attempt must not burn the state: look first, take after.
    const seen = await this.o.states.peek(args.state);
    if (!seen || seen.userId !== principal.userId || seen.provider !== provider) throw invalidState();
    const pending = await this.o.states.take(args.state);
    if (!pending) throw invalidState();
    // Membership may have changed since start.
    requireWorkspaceRole(ctx, pending.workspaceId, 'member');
    const tokens = await this.o.tokens.exchangeCode(config, { code: args.code, codeVerifier: pending.codeVerifier, redirectUri: pending.redirectUri });
    this.o.logger.info('ai oauth completed', { workspaceId: pending.workspaceId, provider, userId: principal.userId });
    return this.o.upstreams.createFromOAuth({
      workspaceId: pending.workspaceId,
      userId: principal.userId,
      name: pending.name,
      provider,
      baseUrl: pending.baseUrl,
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
      expiresAt: tokens.expiresAt,
    });
  }

  async refresh(ctx: RequestContext, args: RefreshAiOAuthArgs): Promise<AiUpstream> {
    const provider = parseProvider(args.provider);
    const row = await this.o.upstreams.load(ctx, args.upstreamId, 'member', { withRefreshToken: true });
    if (PROVIDER_APIS[provider] !== row.api) throw new ValidationError(`Upstream ${row.id} is not a ${provider} upstream`, { field: 'provider' });
    if (row.authKind !== 'oauth') throw new InvalidStateError(`upstream ${row.id}`, 'authorized by API key', 'refresh');
    if (!row.refreshTokenCiphertext) throw new InvalidStateError(`upstream ${row.id}`, 'without a refresh token', 'refresh');
    const config = this.configOf(provider);
    let refreshToken: string;
    try {
      refreshToken = this.o.vault.open(row.id, row.refreshTokenCiphertext, 'refresh_token');
    } catch {
      this.o.logger.error('ai upstream refresh token failed to decrypt', { upstreamId: row.id });
      throw new InvalidStateError(`upstream ${row.id}`, 'holding a refresh token that cannot be read', 'refresh');
    }
    let tokens;
    try {
      tokens = await this.o.tokens.refresh(config, refreshToken);
    } catch (err) {
      if (err instanceof TokenEndpointRefusal) {
        this.o.logger.warn('ai oauth refresh refused', { upstreamId: row.id, providerError: err.providerError });
        throw new DomainError('INVALID_STATE', `The provider refused to refresh upstream ${row.id} (${err.providerError}): authorize it again`, { upstreamId: row.id, providerError: err.providerError });
      }
      throw err;
    }
    this.o.logger.info('ai oauth refreshed', { upstreamId: row.id, workspaceId: row.workspaceId });
    return this.o.upstreams.applyPatch(row, {
      credentialCiphertext: this.o.vault.seal(row.id, tokens.accessToken),
      // A provider that does not rotate refresh tokens answers none: the old one stays.
      ...(tokens.refreshToken ? { refreshTokenCiphertext: this.o.vault.seal(row.id, tokens.refreshToken, 'refresh_token') } : {}),
      credentialExpiresAt: tokens.expiresAt,
    });
  }

  private configOf(provider: ProviderToken): VendorOAuthConfig {
    const config = this.o.oauth[provider];
    if (!config) throw new UnavailableError(`OAuth for ${provider} is not configured on this platform`);
    return config;
  }
}

function invalidState(): BadRequestError {
  return new BadRequestError('Unknown, expired or already used state', { field: 'state' });
}

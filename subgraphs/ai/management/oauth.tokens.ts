import type { AiConfig, PlatformConfig } from '../../../core/config';
import { BadRequestError, UnavailableError } from '../../../core/errors';
import { OneTimeValues } from '../../../core/one-time-values';
import type { Redis } from '../../../core/redis';
import { PROVIDER_TOKENS, type ProviderToken } from './validation';

/** Every call to a token endpoint gives up after this long. */
export const TOKEN_TIMEOUT_MS = 10_000;

export type VendorOAuthConfig = NonNullable<AiConfig['oauth'][ProviderToken]>;

/** What startAiOAuth remembers until the caller comes back with the code. */
export interface PendingAiOAuth {
  workspaceId: string;
  /** Only they may complete it. */
  userId: string;
  provider: ProviderToken;
  name: string;
  baseUrl: string;
  codeVerifier: string;
  redirectUri: string;
}

/** Pending authorizations under `ai-oauth-state:<sha256(state)>`, single use (GETDEL). */
export class AiOAuthStates {
  private readonly values: OneTimeValues;

  constructor(
    redis: Redis,
    private readonly config: Pick<PlatformConfig, 'redisPrefix' | 'oauthStateTtlSeconds'>,
  ) {
    this.values = new OneTimeValues(redis, config.redisPrefix, 'ai-oauth-state');
  }

  get ttlSeconds(): number {
    return this.config.oauthStateTtlSeconds;
  }

  async save(state: string, pending: PendingAiOAuth): Promise<void> {
    await this.values.put(state, JSON.stringify(pending), this.config.oauthStateTtlSeconds);
  }

  /** Looks without taking, so that another user's attempt does not burn the owner's state. */
  async peek(state: string): Promise<PendingAiOAuth | null> {
    return parsePending(await this.values.peek(state));
  }

  async take(state: string): Promise<PendingAiOAuth | null> {
    return parsePending(await this.values.take(state));
  }
}

function parsePending(raw: string | null): PendingAiOAuth | null {
  if (raw === null) return null;
  try {
    const value = JSON.parse(raw) as Partial<PendingAiOAuth>;
    const strings = [value.workspaceId, value.userId, value.name, value.baseUrl, value.codeVerifier, value.redirectUri];
    if (!strings.every((s) => typeof s === 'string') || !(PROVIDER_TOKENS as unknown[]).includes(value.provider)) return null;
    return value as PendingAiOAuth;
  } catch {
    return null;
  }
}

export interface TokenSet {
  accessToken: string;
  refreshToken: string | null;
  expiresAt: Date | null;
}

/** The provider refused the grant (`error` of RFC 6749 §5.2), as opposed to not answering. */
export class TokenEndpointRefusal extends BadRequestError {
  override name = 'TokenEndpointRefusal';

  constructor(
    readonly providerError: string,
    description: string | undefined,
  ) {
    super(`The provider refused the request: ${providerError}${description ? ` (${description.slice(0, 200)})` : ''}`, { providerError });
  }
}

/**
 * A vendor's OAuth 2 token endpoint: form POSTs with the client's id (and secret, when it has
 * one, in the body), PKCE verifier and redirect URI. A refusal is TokenEndpointRefusal (400);
 * no answer, or one that is not a token response, is 503 UNAVAILABLE. Tokens are never logged.
 */
export class VendorTokenClient {
  async exchangeCode(config: VendorOAuthConfig, input: { code: string; codeVerifier: string; redirectUri: string }): Promise<TokenSet> {
    return this.post(config, { grant_type: 'authorization_code', code: input.code, code_verifier: input.codeVerifier, redirect_uri: input.redirectUri });
  }

  async refresh(config: VendorOAuthConfig, refreshToken: string): Promise<TokenSet> {
    return this.post(config, { grant_type: 'refresh_token', refresh_token: refreshToken });
  }

  private async post(config: VendorOAuthConfig, params: Record<string, string>): Promise<TokenSet> {
    const form = new URLSearchParams({ ...params, client_id: config.clientId, ...(config.clientSecret ? { client_secret: config.clientSecret } : {}) });
    let response: Response;
    let text: string;
    try {
      response = await fetch(config.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form,
        redirect: 'manual',
        signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
      });
      text = await response.text();
    } catch (err) {
      const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
      throw new UnavailableError(timedOut ? `The provider's token endpoint did not answer within ${TOKEN_TIMEOUT_MS / 1000} s` : "The provider's token endpoint cannot be reached");
    }
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      /* judged below */
    }
    if (!response.ok || typeof body.error === 'string') {
      if (typeof body.error === 'string') throw new TokenEndpointRefusal(body.error.slice(0, 100), typeof body.error_description === 'string' ? body.error_description : undefined);
      throw new UnavailableError(`The provider's token endpoint answered ${response.status}`);
    }
    if (typeof body.access_token !== 'string' || !body.access_token) throw new UnavailableError("The provider's token endpoint answered no access_token");
    const expiresIn = typeof body.expires_in === 'number' ? body.expires_in : typeof body.expires_in === 'string' ? Number(body.expires_in) : NaN;
    return {
      accessToken: body.access_token,
      refreshToken: typeof body.refresh_token === 'string' && body.refresh_token ? body.refresh_token : null,
      expiresAt: Number.isFinite(expiresIn) && expiresIn > 0 ? new Date(Date.now() + expiresIn * 1000) : null,
    };
  }
}

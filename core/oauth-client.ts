import { Issuer, custom, generators, type BaseClient } from 'openid-client';
import type { IdentityProviderConfig, IdpName, PlatformConfig } from './config';
import { UnavailableError } from './errors';

/** Every call to a provider gives up after this long, so a slow provider never hangs a request. */
const PROVIDER_TIMEOUT_MS = 5_000;
custom.setHttpOptionsDefaults({ timeout: PROVIDER_TIMEOUT_MS });

/**
 * openid-client `Client`s of the configured identity providers, built once per provider (a
 * discovery document is fetched on first use and kept; a failed discovery is retried on the
 * next call). Used by identity (browser sign-in) and billing (workspace connections).
 */
export class OAuthClients {
  private readonly clients = new Map<IdpName, Promise<BaseClient>>();

  constructor(private readonly config: Pick<PlatformConfig, 'identityProviders'>) {}

  /** The provider's configuration; 503 UNAVAILABLE when it is not configured. */
  providerConfig(name: IdpName): IdentityProviderConfig {
    const provider = this.config.identityProviders[name];
    if (!provider) throw new UnavailableError(`Identity provider ${name} is not configured on this platform`);
    return provider;
  }

  async client(name: IdpName): Promise<BaseClient> {
    const provider = this.providerConfig(name);
    let pending = this.clients.get(name);
    if (!pending) {
      pending = buildClient(provider);
      this.clients.set(name, pending);
      pending.catch(() => this.clients.delete(name));
    }
    try {
      return await pending;
    } catch (err) {
      throw new UnavailableError(`Identity provider ${name} cannot be reached (${err instanceof Error ? err.message : 'discovery failed'})`);
    }
  }
}

async function buildClient(provider: IdentityProviderConfig): Promise<BaseClient> {
  const issuer = provider.authorizationUrl
    ? new Issuer({
        // A plain OAuth 2 provider has no issuer identifier; its authorization server's origin stands in.
        issuer: provider.issuer ?? new URL(provider.authorizationUrl).origin,
        authorization_endpoint: provider.authorizationUrl,
        token_endpoint: provider.tokenUrl,
        userinfo_endpoint: provider.userinfoUrl,
        jwks_uri: provider.jwksUrl,
      })
    : await Issuer.discover(provider.issuer!);
  return new issuer.Client({
    client_id: provider.clientId,
    client_secret: provider.clientSecret,
    response_types: ['code'],
    token_endpoint_auth_method: provider.clientSecret ? 'client_secret_basic' : 'none',
  });
}

/** Fresh state, nonce and PKCE verifier for one authorization request. */
export function newAuthorizationSecrets(): { state: string; nonce: string; codeVerifier: string; codeChallenge: string } {
  const codeVerifier = generators.codeVerifier();
  return { state: generators.state(), nonce: generators.nonce(), codeVerifier, codeChallenge: generators.codeChallenge(codeVerifier) };
}

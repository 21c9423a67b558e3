import { BrowserLike, type OidcTestAccount, type OidcTestProvider } from './oidc-provider';

/** What the provider's final redirect carried to the redirect URI. */
export interface AuthorizationRedirect {
  code: string;
  state: string;
  /** RFC 9207 issuer parameter, when the provider sends one. */
  iss: string | null;
  /** Every URL the browser visited, the redirect URI last. */
  chain: string[];
}

/**
 * Plays the user's browser through an authorization URL: `account` signs in (the stand-in
 * provider consents on its own) and the walk stops at the redirect URI, whose code and state
 * are read there, as the application behind the redirect URI would.
 */
export async function authorizeInBrowser(provider: OidcTestProvider, url: string, redirectUri: string, account: OidcTestAccount): Promise<AuthorizationRedirect> {
  await provider.setAccount(account);
  const target = new URL(redirectUri);
  const atRedirect = (location: URL) => location.origin === target.origin && location.pathname === target.pathname;
  const { chain } = await new BrowserLike().walk(url, (location) => !atRedirect(location), 20);
  const last = new URL(chain[chain.length - 1]);
  if (!atRedirect(last)) throw new Error(`the provider did not redirect to ${redirectUri}: ${chain.join(' -> ')}`);
  const code = last.searchParams.get('code');
  const state = last.searchParams.get('state');
  if (!code || !state) throw new Error(`redirect without code or state: ${last.search} (${last.searchParams.get('error_description') ?? ''})`);
  return { code, state, iss: last.searchParams.get('iss'), chain };
}

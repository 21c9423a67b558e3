import { freePort } from '../core/ports';
import { startTestPlatform, type TestPlatform } from './harness';
import { gql } from './helpers';
import { BrowserLike, startOidcProvider, type OidcTestAccount, type OidcTestProvider } from './oidc-provider';

/*
 * Browser sign-in through identity providers, end to end: a real OpenID Connect server
 * (oidc-provider) stands in for idp-a (OIDC, by discovery) and idp-b (plain OAuth 2 with explicit
 * endpoints and userinfo); a BrowserLike walks every redirect with its cookies.
 *
 * The provider must know the redirect URIs before the platform listens, so the platform gets a
 * port chosen up front (a free one from the OS) and no PUBLIC_URL: redirect URIs are built from
 * the gateway's own listening URL. If that port is taken in the meantime, both start again.
 */

const CONSOLE = 'http://console.test';
const CLIENTS = { 'idp-a': { id: 'platform-idp-a', secret: 'idp-a-client-secret-0123456789' }, 'idp-b': { id: 'platform-idp-b', secret: 'idp-b-client-secret-0123456789' } };
type Provider = keyof typeof CLIENTS;

const EXCHANGE = `mutation($code: String!) {
  exchangeLoginHandoff(code: $code) { accessToken refreshToken tokenType mfaRequired user { id username } }
}`;

async function startWithProvider(): Promise<{ platform: TestPlatform; idp: OidcTestProvider }> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const edge = `http://127.0.0.1:${port}`;
    const idp = await startOidcProvider({
      clients: (Object.keys(CLIENTS) as Provider[]).map((name) => ({
        client_id: CLIENTS[name].id,
        client_secret: CLIENTS[name].secret,
        redirect_uris: [`${edge}/v1/auth/${name}/callback`],
      })),
    });
    try {
      const platform = await startTestPlatform({
        services: ['identity', 'gateway'],
        overrides: { port },
        env: {
          CONSOLE_URL: CONSOLE,
          IDP_A_ISSUER: idp.issuer,
          IDP_A_CLIENT_ID: CLIENTS['idp-a'].id,
          IDP_A_CLIENT_SECRET: CLIENTS['idp-a'].secret,
          IDP_B_AUTHORIZATION_URL: `${idp.issuer}/auth`,
          IDP_B_TOKEN_URL: `${idp.issuer}/token`,
          IDP_B_USERINFO_URL: `${idp.issuer}/me`,
          IDP_B_CLIENT_ID: CLIENTS['idp-b'].id,
          IDP_B_CLIENT_SECRET: CLIENTS['idp-b'].secret,
          // The stand-in answers userinfo only to tokens with the openid scope.
          IDP_B_SCOPES: 'openid email profile',
        },
      });
      return { platform, idp };
    } catch (err) {
      await idp.stop();
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 3) throw err;
    }
  }
}

describe('sign-in through identity providers (GET /v1/auth/idp-a, /v1/auth/idp-b)', () => {
  let platform: TestPlatform;
  let idp: OidcTestProvider;

  beforeAll(async () => {
    ({ platform, idp } = await startWithProvider());
  }, 120_000);
  afterAll(async () => {
    await platform?.stop();
    await idp?.stop();
  });

  const startUrl = (provider: Provider, returnTo?: string) => `${platform.restUrl}/auth/${provider}${returnTo === undefined ? '' : `?returnTo=${encodeURIComponent(returnTo)}`}`;
  const isCallback = (url: URL) => /\/v1\/auth\/idp-[ab]\/callback$/.test(url.pathname);
  const gatewayHost = () => new URL(platform.baseUrl).host;

  /** Signs `account` in at the provider and walks to the gateway's callback URL without requesting it. */
  async function toCallback(provider: Provider, account: OidcTestAccount, browser = new BrowserLike()): Promise<{ browser: BrowserLike; callbackUrl: string; chain: string[] }> {
    await idp.setAccount(account);
    const { response, chain } = await browser.walk(startUrl(provider), (next) => !isCallback(next), 20);
    const callbackUrl = chain[chain.length - 1];
    if (!isCallback(new URL(callbackUrl))) throw new Error(`did not reach the callback (${response.status}): ${chain.join(' → ')} ${await response.text()}`);
    return { browser, callbackUrl, chain };
  }

  /** The whole flow, stopping at the console: answers the console URL and the handoff code. */
  async function signIn(provider: Provider, account: OidcTestAccount, returnTo?: string): Promise<{ consoleUrl: URL; code: string; callbackUrl: string; browser: BrowserLike }> {
    await idp.setAccount(account);
    const browser = new BrowserLike();
    const { response, chain } = await browser.walk(startUrl(provider, returnTo), (next) => next.origin !== CONSOLE, 20);
    const consoleUrl = new URL(chain[chain.length - 1]);
    if (consoleUrl.origin !== CONSOLE) throw new Error(`sign-in did not reach the console (${response.status}): ${chain.join(' → ')} ${await response.text()}`);
    const code = new URLSearchParams(consoleUrl.hash.slice(1)).get('handoff');
    if (!code) throw new Error(`no handoff code in ${consoleUrl}`);
    return { consoleUrl, code, callbackUrl: chain.find((url) => isCallback(new URL(url)))!, browser };
  }

  async function exchange(code: string) {
    return gql(platform, EXCHANGE, { code });
  }

  async function signInUser(provider: Provider, account: OidcTestAccount): Promise<{ id: string; username: string; accessToken: string }> {
    const { code } = await signIn(provider, account);
    const result = await exchange(code);
    if (!result.data) throw new Error(`exchange failed: ${JSON.stringify(result.errors)}`);
    return { ...result.data.exchangeLoginHandoff.user, accessToken: result.data.exchangeLoginHandoff.accessToken };
  }

  async function profileOf(accessToken: string) {
    const response = await fetch(`${platform.restUrl}/auth/profile`, { headers: { authorization: `Bearer ${accessToken}` } });
    return { status: response.status, body: await response.json() };
  }

  async function errorOf(response: Response) {
    const body = await response.json();
    expect(body).toEqual({ error: expect.objectContaining({ code: expect.any(String), message: expect.any(String), requestId: expect.any(String) }) });
    return body.error as { code: string; message: string; details?: Record<string, unknown> };
  }

  const emailOf = async (userId: string): Promise<string | null> =>
    (await platform.subgraphs.identity!.dataSource.query(`SELECT "email" FROM "identity"."users" WHERE "id" = $1`, [userId]))[0].email;

  it('signs in through idp-a (OIDC): provider redirect with state, nonce and PKCE, binding cookie, console handoff, working tokens', async () => {
    await idp.setAccount({ sub: 'alice-a', email: 'alice@example.test', email_verified: true, name: 'Alice' });
    const browser = new BrowserLike();

    // First hop by hand: the redirect to the provider and the binding cookie.
    const start = await browser.get(startUrl('idp-a', '/projects/42?tab=runs'));
    expect(start.status).toBe(302);
    expect(start.headers.get('cache-control')).toBe('no-store');
    const authorization = new URL(start.headers.get('location')!);
    expect(authorization.origin + authorization.pathname).toBe(`${idp.issuer}/auth`);
    expect(Object.fromEntries(authorization.searchParams)).toMatchObject({
      client_id: CLIENTS['idp-a'].id,
      response_type: 'code',
      scope: 'openid email profile',
      redirect_uri: `${platform.baseUrl}/v1/auth/idp-a/callback`,
      code_challenge_method: 'S256',
      state: expect.any(String),
      nonce: expect.any(String),
      code_challenge: expect.any(String),
    });
    const setCookie = start.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^wcp_idp_binding=[A-Za-z0-9_-]{40,};/);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Lax');
    expect(setCookie).toContain('Path=/v1/auth');
    expect(setCookie).toContain('Max-Age=600');
    expect(setCookie).not.toContain('Secure');
    expect(browser.cookie(gatewayHost(), 'wcp_idp_binding')).toBeDefined();

    // The rest of the way, as a browser would.
    const { chain } = await browser.walk(authorization.toString(), (next) => next.origin !== CONSOLE, 20);
    const consoleUrl = new URL(chain[chain.length - 1]);
    expect(consoleUrl.origin + consoleUrl.pathname + consoleUrl.search).toBe(`${CONSOLE}/projects/42?tab=runs`);
    const code = new URLSearchParams(consoleUrl.hash.slice(1)).get('handoff')!;
    expect(code).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    // No token in any URL of the flow; the binding cookie is gone.
    expect(chain.join(' ')).not.toMatch(/access_token|refresh_token|rt_/);
    expect(browser.cookie(gatewayHost(), 'wcp_idp_binding')).toBeUndefined();

    const exchanged = await exchange(code);
    expect(exchanged.errors).toBeUndefined();
    const result = exchanged.data.exchangeLoginHandoff;
    expect(result).toMatchObject({ accessToken: expect.any(String), refreshToken: expect.any(String), tokenType: 'Bearer', mfaRequired: false, user: { username: 'alice' } });

    const profile = await profileOf(result.accessToken);
    expect(profile.status).toBe(200);
    expect(profile.body).toMatchObject({ id: result.user.id, username: 'alice', isAdmin: false });
    expect(await emailOf(result.user.id)).toBe('alice@example.test');
    const identities = await platform.subgraphs.identity!.dataSource.query(`SELECT "provider", "subject", "user_id", "email" FROM "identity"."user_identities" WHERE "user_id" = $1`, [result.user.id]);
    expect(identities).toEqual([{ provider: 'idp-a', subject: 'alice-a', user_id: result.user.id, email: 'alice@example.test' }]);
  });

  it('signs in through idp-b (plain OAuth 2 + userinfo), without a nonce', async () => {
    await idp.setAccount({ sub: 'bob-b', email: 'bob@example.test', email_verified: true, name: 'Bob' });
    const browser = new BrowserLike();
    const start = await browser.get(startUrl('idp-b'));
    expect(start.status).toBe(302);
    const authorization = new URL(start.headers.get('location')!);
    expect(authorization.searchParams.get('client_id')).toBe(CLIENTS['idp-b'].id);
    expect(authorization.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorization.searchParams.has('nonce')).toBe(false);

    const { chain } = await browser.walk(authorization.toString(), (next) => next.origin !== CONSOLE, 20);
    const consoleUrl = new URL(chain[chain.length - 1]);
    expect(`${consoleUrl.origin}${consoleUrl.pathname}`).toBe(`${CONSOLE}/`);
    const exchanged = await exchange(new URLSearchParams(consoleUrl.hash.slice(1)).get('handoff')!);
    expect(exchanged.errors).toBeUndefined();
    const { user, accessToken } = exchanged.data.exchangeLoginHandoff;
    expect(user.username).toBe('bob');
    expect((await profileOf(accessToken)).body.id).toBe(user.id);
    expect(await emailOf(user.id)).toBe('bob@example.test');
  });

  it('signs the same provider account in as the same user the second time', async () => {
    const first = await signInUser('idp-a', { sub: 'carol-a', email: 'carol@example.test', email_verified: true });
    const second = await signInUser('idp-a', { sub: 'carol-a', email: 'carol@example.test', email_verified: true });
    expect(second.id).toBe(first.id);
    // Another subject with a taken username local part gets a new, unique username.
    const other = await signInUser('idp-a', { sub: 'carol-other', email: 'carol@elsewhere.test', email_verified: true });
    expect(other.id).not.toBe(first.id);
    expect(other.username).not.toBe(first.username);
    expect(other.username).toMatch(/^carol-/);
  });

  it('links a provider-verified email to the existing user, and never an unverified one', async () => {
    const owner = await signInUser('idp-a', { sub: 'dave-a', email: 'dave@example.test', email_verified: true });
    // Another provider, another subject, the same verified email (any case): the same user.
    const linked = await signInUser('idp-b', { sub: 'dave-b', email: 'DAVE@example.test', email_verified: true });
    expect(linked.id).toBe(owner.id);
    const links = await platform.subgraphs.identity!.dataSource.query(`SELECT "provider", "subject" FROM "identity"."user_identities" WHERE "user_id" = $1 ORDER BY "provider"`, [owner.id]);
    expect(links).toEqual([
      { provider: 'idp-a', subject: 'dave-a' },
      { provider: 'idp-b', subject: 'dave-b' },
    ]);

    // The same email, unverified: a new user, which does not get the email either.
    const stranger = await signInUser('idp-b', { sub: 'mallory-b', email: 'dave@example.test', email_verified: false });
    expect(stranger.id).not.toBe(owner.id);
    expect(stranger.username).toBe('idp-b-mallory-b');
    expect(await emailOf(stranger.id)).toBeNull();
    // And no email claim at all: a new user as well.
    const anonymous = await signInUser('idp-a', { sub: 'no-email-a' });
    expect(anonymous.username).toBe('idp-a-no-email-a');
  });

  it('accepts a handoff code once', async () => {
    const { code } = await signIn('idp-a', { sub: 'erin-a', email: 'erin@example.test', email_verified: true });
    const first = await exchange(code);
    expect(first.errors).toBeUndefined();
    const second = await exchange(code);
    expect(second.errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
    expect(second.errors?.[0].message).toMatch(/handoff code is invalid, expired or already used/);
    const garbage = await exchange('not-a-code');
    expect(garbage.errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('refuses a callback whose state was tampered with (400)', async () => {
    const { browser, callbackUrl } = await toCallback('idp-a', { sub: 'frank-a' });
    const tampered = new URL(callbackUrl);
    tampered.searchParams.set('state', `${tampered.searchParams.get('state')}x`);
    const response = await browser.get(tampered.toString());
    expect(response.status).toBe(400);
    expect(await errorOf(response)).toMatchObject({ code: 'BAD_REQUEST', message: expect.stringMatching(/Sign-in state is invalid or expired/) });
  });

  it('refuses a callback without the binding cookie, or with another browser’s (400)', async () => {
    const withoutCookie = await toCallback('idp-a', { sub: 'grace-a' });
    const bare = await fetch(withoutCookie.callbackUrl, { redirect: 'manual' });
    expect(bare.status).toBe(400);
    expect((await errorOf(bare)).message).toMatch(/started in another browser/);

    const otherBrowser = await toCallback('idp-a', { sub: 'grace-a' });
    const wrong = await fetch(otherBrowser.callbackUrl, { redirect: 'manual', headers: { cookie: 'wcp_idp_binding=someone-elses-binding-value' } });
    expect(wrong.status).toBe(400);
    expect((await errorOf(wrong)).code).toBe('BAD_REQUEST');
    // The state is spent by that attempt: the right browser cannot finish it now either.
    const late = await otherBrowser.browser.get(otherBrowser.callbackUrl);
    expect(late.status).toBe(400);
  });

  it('rejects a replayed callback URL and a replayed authorization code', async () => {
    const first = await signIn('idp-a', { sub: 'heidi-a', email: 'heidi@example.test', email_verified: true });
    // The same callback again, in the same browser: the state is spent.
    const replay = await first.browser.get(first.callbackUrl);
    expect(replay.status).toBe(400);
    expect((await errorOf(replay)).message).toMatch(/Sign-in state is invalid or expired/);

    // The spent code under a fresh state and cookie: the provider refuses it.
    const fresh = await toCallback('idp-a', { sub: 'heidi-a' });
    const spliced = new URL(fresh.callbackUrl);
    spliced.searchParams.set('code', new URL(first.callbackUrl).searchParams.get('code')!);
    const response = await fresh.browser.get(spliced.toString());
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
    expect((await errorOf(response)).message).toMatch(/invalid_grant/);
  });

  it('rejects an ID token carrying another nonce (400)', async () => {
    await idp.setAccount({ sub: 'ivan-a', email: 'ivan@example.test', email_verified: true });
    const browser = new BrowserLike();
    const { chain } = await browser.walk(startUrl('idp-a'), () => false);
    const authorization = new URL(chain[1]);
    authorization.searchParams.set('nonce', 'a-nonce-the-platform-never-issued');
    const { response, chain: rest } = await browser.walk(authorization.toString(), (next) => next.origin !== CONSOLE, 20);
    expect(rest.some((url) => isCallback(new URL(url)))).toBe(true);
    expect(response.status).toBe(400);
    expect(await errorOf(response)).toMatchObject({ code: 'BAD_REQUEST', message: expect.stringMatching(/nonce mismatch/), details: { provider: 'idp-a', error: 'invalid_response' } });
  });

  it('answers the provider’s refusal (error=access_denied) with 400 and its error code', async () => {
    const browser = new BrowserLike();
    const start = await browser.get(startUrl('idp-a'));
    const state = new URL(start.headers.get('location')!).searchParams.get('state')!;
    const response = await browser.get(`${platform.restUrl}/auth/idp-a/callback?error=access_denied&error_description=${encodeURIComponent('The user said no')}&state=${state}`);
    expect(response.status).toBe(400);
    expect(await errorOf(response)).toMatchObject({ code: 'BAD_REQUEST', message: expect.stringMatching(/access_denied: The user said no/), details: { provider: 'idp-a', error: 'access_denied' } });
  });

  it('refuses a returnTo that is not a path of the console (no open redirect)', async () => {
    for (const returnTo of ['https://evil.example', '//evil.example/x', '/\\evil.example', 'evil.example', '/path#fragment', 'javascript:alert(1)']) {
      const response = await fetch(startUrl('idp-a', returnTo), { redirect: 'manual' });
      expect({ returnTo, status: response.status }).toEqual({ returnTo, status: 400 });
      expect(response.headers.get('location')).toBeNull();
      expect(response.headers.get('set-cookie')).toBeNull();
      expect((await errorOf(response)).details).toEqual({ field: 'returnTo' });
    }
  });

  it('refuses a disabled user (403) at the callback', async () => {
    const user = await signInUser('idp-a', { sub: 'judy-a', email: 'judy@example.test', email_verified: true });
    await platform.subgraphs.identity!.dataSource.query(`UPDATE "identity"."users" SET "disabled_at" = now() WHERE "id" = $1`, [user.id]);
    const { browser, callbackUrl } = await toCallback('idp-a', { sub: 'judy-a', email: 'judy@example.test', email_verified: true });
    const response = await browser.get(callbackUrl);
    expect(response.status).toBe(403);
    expect((await errorOf(response)).code).toBe('FORBIDDEN');
    // Nor may the verified email link another provider's account to the disabled user.
    const viaEmail = await toCallback('idp-b', { sub: 'judy-b', email: 'judy@example.test', email_verified: true });
    expect((await viaEmail.browser.get(viaEmail.callbackUrl)).status).toBe(403);
  });
});

describe('sign-in through an identity provider that is not configured', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startTestPlatform({ services: ['identity', 'gateway'] });
  }, 120_000);
  afterAll(() => platform?.stop());

  it('answers 503 UNAVAILABLE with the platform error shape', async () => {
    for (const path of ['/auth/idp-a', '/auth/idp-b', '/auth/idp-b/callback?code=x&state=y']) {
      const response = await fetch(`${platform.restUrl}${path}`, { redirect: 'manual' });
      expect({ path, status: response.status }).toEqual({ path, status: 503 });
      const body = await response.json();
      expect(body).toEqual({ error: { code: 'UNAVAILABLE', message: expect.stringMatching(/not configured/), requestId: expect.any(String) } });
      expect(response.headers.get('x-request-id')).toBe(body.error.requestId);
    }
  });
});

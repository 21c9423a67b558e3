import { Client } from 'pg';
import { decrypt } from '../core/crypto';
import { ENVELOPE_HEADER, signEnvelope } from '../core/principal';
import { startTestPlatform, type TestPlatform } from './harness';
import { createUserAndLogin, gql, loginAdmin, rest as restCall } from './helpers';
import { authorizeInBrowser } from './oauth-authorize';
import { startOidcProvider, type OidcTestProvider } from './oidc-provider';

/**
 * Workspace OAuth connections to idp-a end to end: REST → gateway → billing, against a real
 * OpenID provider (oidc-provider) whose access tokens live 30 s, less than billing's 60 s
 * refresh margin. The browser part stops at the redirect URI and reads code and state there.
 */

const REDIRECT_URI = 'http://127.0.0.1:9/oauth/callback';
const CLIENT = { client_id: 'platform-e2e', client_secret: 'e2e-secret-0123456789abcdefghij', redirect_uris: [REDIRECT_URI] };
const ACCOUNT = { sub: 'e2e-account-1', email: 'ops@example.test', email_verified: true, name: 'Ops Account' };

type Auth = Record<string, string>;

describe('workspace OAuth connections over REST (idp-a)', () => {
  let idp: OidcTestProvider;
  let platform: TestPlatform;
  let pg: Client;
  let admin: { auth: Auth; userId: string; workspaceId: string };
  let otherWorkspaceOfAdmin: string;
  let other: { auth: Auth; workspaceId: string };
  let viewer: { auth: Auth };

  beforeAll(async () => {
    idp = await startOidcProvider({ clients: [CLIENT], accessTokenTtlSeconds: 30 });
    platform = await startTestPlatform({
      services: ['identity', 'billing', 'gateway'],
      env: { IDP_A_ISSUER: idp.issuer, IDP_A_CLIENT_ID: CLIENT.client_id, IDP_A_CLIENT_SECRET: CLIENT.client_secret, IDP_A_CONNECTION_REDIRECT_URI: REDIRECT_URI },
    });
    pg = new Client({ connectionString: platform.databaseUrl });
    await pg.connect();
    const adminLogin = await loginAdmin(platform);
    const created = await gql(platform, 'mutation { createWorkspace(name: "oauth-second") { id } }', {}, adminLogin.auth);
    expect(created.errors).toBeUndefined();
    otherWorkspaceOfAdmin = created.data.createWorkspace.id;
    admin = { auth: adminLogin.auth, userId: adminLogin.userId, workspaceId: adminLogin.defaultWorkspaceId };

    const otherLogin = await createUserAndLogin(platform, admin.auth, 'oauth-other');
    other = { auth: otherLogin.auth, workspaceId: otherLogin.defaultWorkspaceId };
    const viewerUser = await createUserAndLogin(platform, admin.auth, 'oauth-viewer');
    const added = await gql(platform, 'mutation($w: ID!, $u: ID!) { addWorkspaceMember(workspaceId: $w, userId: $u, role: viewer) { id } }', { w: admin.workspaceId, u: viewerUser.userId }, admin.auth);
    expect(added.errors).toBeUndefined();
    viewer = { auth: viewerUser.auth };
  });

  afterAll(async () => {
    await pg?.end();
    await platform?.stop();
    await idp?.stop();
  });

  const rest = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => restCall(platform, method, path, body, headers);

  const base = (workspaceId: string) => `/workspaces/${workspaceId}/oauth-connections/idp-a`;

  /** POST auth-url, then the browser through the provider to the redirect URI. */
  async function authorize(auth: Auth, workspaceId: string) {
    const res = await rest('POST', `${base(workspaceId)}/auth-url`, {}, auth);
    expect(res.status).toBe(200);
    const started = await res.json();
    return authorizeInBrowser(idp, started.url, REDIRECT_URI, ACCOUNT);
  }

  /** Billing's internal route, as a worker calls it (signed envelope, no user). */
  function accessToken(workspaceId: string, connectionId: unknown, signed = true) {
    const envelope = signEnvelope(platform.config.internalSigningSecret, { principal: null, requestId: 'test', clientIp: '127.0.0.1', iat: Math.floor(Date.now() / 1000) });
    return fetch(platform.subgraphs.billing!.url.replace(/\/graphql$/, '/internal/oauth-connections/access-token'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(signed ? { [ENVELOPE_HEADER]: envelope } : {}) },
      body: JSON.stringify({ workspaceId, connectionId }),
    });
  }

  async function storedTokens(id: string): Promise<{ access: string; refresh: string; accessCiphertext: string; refreshCiphertext: string }> {
    const { rows } = await pg.query('SELECT access_token_ciphertext, refresh_token_ciphertext FROM billing.oauth_connections WHERE id = $1', [id]);
    const key = platform.config.secretsEncryptionKey;
    return {
      access: decrypt(key, rows[0].access_token_ciphertext, `${id}:access_token`).toString(),
      refresh: decrypt(key, rows[0].refresh_token_ciphertext, `${id}:refresh_token`).toString(),
      accessCiphertext: rows[0].access_token_ciphertext,
      refreshCiphertext: rows[0].refresh_token_ciphertext,
    };
  }

  const refreshCalls = async () => (await idp.tokenCalls()).filter((c) => c.grantType === 'refresh_token').length;

  it('connects an account, lists it without tokens, hands out a refreshed token once for concurrent callers, and deletes it', async () => {
    const started = await rest('POST', `${base(admin.workspaceId)}/auth-url`, {}, admin.auth);
    expect(started.status).toBe(200);
    const authUrl = await started.json();
    expect(authUrl).toMatchObject({ url: expect.stringContaining(`${idp.issuer}/auth?`), state: expect.any(String), redirectUri: REDIRECT_URI, expiresAt: expect.any(String) });
    const redirect = await authorizeInBrowser(idp, authUrl.url, REDIRECT_URI, ACCOUNT);
    expect(redirect.state).toBe(authUrl.state);

    const exchanged = await rest('POST', `${base(admin.workspaceId)}/exchange`, { code: redirect.code, state: redirect.state }, admin.auth);
    const exchangedText = await exchanged.text();
    expect(exchanged.status).toBe(201);
    const connection = JSON.parse(exchangedText);
    expect(connection).toMatchObject({
      id: expect.stringMatching(/^oac_/),
      workspaceId: admin.workspaceId,
      provider: 'IDP_A',
      status: 'active',
      subject: ACCOUNT.sub,
      email: ACCOUNT.email,
      name: ACCOUNT.name,
      scopes: expect.arrayContaining(['openid', 'offline_access']),
      accessTokenExpiresAt: expect.any(String),
      lastRefreshedAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });

    const listed = await rest('GET', base(admin.workspaceId), undefined, admin.auth);
    expect(listed.status).toBe(200);
    const listedText = await listed.text();
    expect(JSON.parse(listedText)).toMatchObject({ total: 1, page: 1, limit: 20, data: [{ id: connection.id, subject: ACCOUNT.sub }] });
    expect(listedText).not.toMatch(/"(accessToken|refreshToken|access_token|refresh_token)"/);

    // At rest: ciphertext only; and no response carried either token.
    const stored = await storedTokens(connection.id);
    expect(stored.accessCiphertext).not.toContain(stored.access);
    expect(stored.refreshCiphertext).not.toContain(stored.refresh);
    for (const text of [exchangedText, listedText]) {
      expect(text).not.toContain(stored.access);
      expect(text).not.toContain(stored.refresh);
    }

    // The token lives 30 s, inside the 60 s margin: the internal route refreshes before answering.
    const refreshesBefore = await refreshCalls();
    const issuedRes = await accessToken(admin.workspaceId, connection.id);
    expect(issuedRes.status).toBe(200);
    const issued = (await issuedRes.json()).data;
    expect(issued).toEqual({ accessToken: expect.any(String), expiresAt: expect.any(String) });
    expect(issued.accessToken).not.toBe(stored.access);
    expect(await refreshCalls()).toBe(refreshesBefore + 1);
    expect((await storedTokens(connection.id)).access).toBe(issued.accessToken);

    // Two at once: one refresh, one token for both.
    const pair = await Promise.all([accessToken(admin.workspaceId, connection.id), accessToken(admin.workspaceId, connection.id)]);
    const [first, second] = await Promise.all(pair.map(async (res) => (await res.json()).data));
    expect(pair.map((res) => res.status)).toEqual([200, 200]);
    expect(await refreshCalls()).toBe(refreshesBefore + 2);
    expect(first.accessToken).toBe(second.accessToken);
    expect(first.accessToken).not.toBe(issued.accessToken);

    const afterRefresh = await (await rest('GET', base(admin.workspaceId), undefined, viewer.auth)).text();
    expect(JSON.parse(afterRefresh).data[0].lastRefreshedAt).toEqual(expect.any(String));
    for (const token of [stored.access, stored.refresh, issued.accessToken, first.accessToken]) expect(afterRefresh).not.toContain(token);

    const deleted = await rest('DELETE', `${base(admin.workspaceId)}/${connection.id}`, undefined, admin.auth);
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({ id: connection.id, deleted: true });
    expect(await (await rest('GET', base(admin.workspaceId), undefined, admin.auth)).json()).toMatchObject({ total: 0, data: [] });
    expect((await accessToken(admin.workspaceId, connection.id)).status).toBe(404);
  });

  it('refuses replayed, tampered and cross-workspace states with 400, and bad inputs with 400 VALIDATION_FAILED', async () => {
    const redirect = await authorize(admin.auth, admin.workspaceId);
    const ok = await rest('POST', `${base(admin.workspaceId)}/exchange`, { code: redirect.code, state: redirect.state }, admin.auth);
    expect(ok.status).toBe(201);
    const connection = await ok.json();

    const replay = await rest('POST', `${base(admin.workspaceId)}/exchange`, { code: redirect.code, state: redirect.state }, admin.auth);
    expect(replay.status).toBe(400);
    expect((await replay.json()).error).toMatchObject({ code: 'BAD_REQUEST', message: expect.stringContaining('state'), requestId: expect.any(String) });

    const tampered = await authorize(admin.auth, admin.workspaceId);
    const tamperedRes = await rest('POST', `${base(admin.workspaceId)}/exchange`, { code: tampered.code, state: `${tampered.state.slice(0, -2)}zz` }, admin.auth);
    expect(tamperedRes.status).toBe(400);
    expect((await tamperedRes.json()).error.code).toBe('BAD_REQUEST');

    // A state of the admin's first workspace, used on their second one.
    const fromA = await authorize(admin.auth, admin.workspaceId);
    const crossed = await rest('POST', `${base(otherWorkspaceOfAdmin)}/exchange`, { code: fromA.code, state: fromA.state }, admin.auth);
    expect(crossed.status).toBe(400);
    expect((await crossed.json()).error).toMatchObject({ code: 'BAD_REQUEST', message: expect.stringContaining('another workspace') });

    for (const body of [{ state: 'only-state' }, { code: 'only-code' }, { code: 42, state: 's' }, { code: 'c', state: ['s'] }, {}]) {
      const res = await rest('POST', `${base(admin.workspaceId)}/exchange`, body, admin.auth);
      expect(res.status).toBe(400);
      expect((await res.json()).error.code).toBe('VALIDATION_FAILED');
    }
    for (const scopes of [['has space'], [42], []]) {
      const badScopes = await rest('POST', `${base(admin.workspaceId)}/auth-url`, { scopes }, admin.auth);
      expect(badScopes.status).toBe(400);
      expect((await badScopes.json()).error.code).toBe('VALIDATION_FAILED');
    }
    const badRedirect = await rest('POST', `${base(admin.workspaceId)}/auth-url`, { redirectUri: 'javascript:alert(1)' }, admin.auth);
    expect(badRedirect.status).toBe(400);
    expect((await badRedirect.json()).error).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'redirectUri' } });
    // The path names the provider: a request may not switch it to another one.
    for (const [method, path, body] of [
      ['POST', `${base(admin.workspaceId)}/auth-url`, { provider: 'IDP_B' }],
      ['GET', `${base(admin.workspaceId)}?provider=IDP_B`, undefined],
    ] as const) {
      const switched = await rest(method, path, body, admin.auth);
      expect(switched.status).toBe(400);
      expect((await switched.json()).error).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'provider' } });
    }
    expect((await rest('DELETE', `${base(admin.workspaceId)}/oac_doesnotexist0000000`, undefined, admin.auth)).status).toBe(404);
    expect((await accessToken(admin.workspaceId, 12)).status).toBe(400);
    expect((await accessToken(admin.workspaceId, connection.id, false)).status).toBe(401);

    await rest('DELETE', `${base(admin.workspaceId)}/${connection.id}`, undefined, admin.auth);
  });

  it("keeps workspaces apart (404), needs the admin role to connect or remove (403), and credentials (401)", async () => {
    const redirect = await authorize(admin.auth, admin.workspaceId);
    const connection = await (await rest('POST', `${base(admin.workspaceId)}/exchange`, { code: redirect.code, state: redirect.state }, admin.auth)).json();
    const pending = await authorize(admin.auth, admin.workspaceId);

    const outsider = [
      await rest('GET', base(admin.workspaceId), undefined, other.auth),
      await rest('POST', `${base(admin.workspaceId)}/auth-url`, {}, other.auth),
      await rest('POST', `${base(admin.workspaceId)}/exchange`, { code: pending.code, state: pending.state }, other.auth),
      await rest('DELETE', `${base(admin.workspaceId)}/${connection.id}`, undefined, other.auth),
      // Their own workspace with the admin's connection id.
      await rest('DELETE', `${base(other.workspaceId)}/${connection.id}`, undefined, other.auth),
    ];
    for (const res of outsider) {
      expect(res.status).toBe(404);
      const text = await res.text();
      expect(JSON.parse(text).error.code).toBe('NOT_FOUND');
      expect(text).not.toContain(ACCOUNT.email);
    }
    // The outsider's attempt did not spend the admin's state.
    const finished = await rest('POST', `${base(admin.workspaceId)}/exchange`, { code: pending.code, state: pending.state }, admin.auth);
    expect(finished.status).toBe(201);
    expect((await finished.json()).id).toBe(connection.id); // same account: the same row

    const viewerList = await rest('GET', base(admin.workspaceId), undefined, viewer.auth);
    expect(viewerList.status).toBe(200);
    expect((await viewerList.json()).data.map((c: { id: string }) => c.id)).toEqual([connection.id]);
    for (const res of [
      await rest('POST', `${base(admin.workspaceId)}/auth-url`, {}, viewer.auth),
      await rest('POST', `${base(admin.workspaceId)}/exchange`, { code: 'c', state: 's' }, viewer.auth),
      await rest('DELETE', `${base(admin.workspaceId)}/${connection.id}`, undefined, viewer.auth),
    ]) {
      expect(res.status).toBe(403);
      expect((await res.json()).error.code).toBe('FORBIDDEN');
    }

    expect((await rest('GET', base(admin.workspaceId))).status).toBe(401);
    expect((await rest('POST', `${base(admin.workspaceId)}/auth-url`, {})).status).toBe(401);
    // Still there after all of it.
    expect((await (await rest('GET', base(admin.workspaceId), undefined, admin.auth)).json()).total).toBe(1);

    // GraphQL callers name the provider; REST's path is idp-a.
    const viaGraph = await gql(platform, 'query($w: ID!) { oauthConnections(workspaceId: $w, provider: IDP_A) { total data { provider createdBy { id } } } }', { w: admin.workspaceId }, admin.auth);
    expect(viaGraph.data.oauthConnections).toEqual({ total: 1, data: [{ provider: 'IDP_A', createdBy: { id: admin.userId } }] });
    const idpB = await gql(platform, 'mutation($w: ID!) { createOAuthConnectionUrl(workspaceId: $w, provider: IDP_B) { url } }', { w: admin.workspaceId }, admin.auth);
    expect(idpB.errors?.[0].extensions?.code).toBe('UNAVAILABLE');
  });
});

describe('workspace OAuth connections without idp-a configured', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startTestPlatform({ services: ['identity', 'billing', 'gateway'] });
  });
  afterAll(() => platform?.stop());

  it('answers 503 to auth-url and exchange, and an empty list', async () => {
    const { auth, defaultWorkspaceId } = await loginAdmin(platform);
    const base = `${platform.restUrl}/workspaces/${defaultWorkspaceId}/oauth-connections/idp-a`;
    const post = (path: string, body: unknown) => fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: JSON.stringify(body) });
    for (const res of [await post('/auth-url', {}), await post('/exchange', { code: 'c', state: 's' })]) {
      expect(res.status).toBe(503);
      expect((await res.json()).error).toMatchObject({ code: 'UNAVAILABLE', message: expect.stringContaining('not configured') });
    }
    const list = await fetch(base, { headers: auth });
    expect(list.status).toBe(200);
    expect(await list.json()).toMatchObject({ total: 0, data: [] });
  });
});

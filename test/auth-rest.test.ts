import { startTestPlatform, type TestPlatform } from './harness';
import { createUserAndLogin, eventually, gql, loginAdmin, rest as restCall } from './helpers';

/** The Authentication routes end to end: REST → gateway → identity. */
describe('authentication over REST', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startTestPlatform({ services: ['identity', 'billing', 'gateway'] });
  });
  afterAll(() => platform?.stop());

  const rest = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => restCall(platform, method, path, body, headers);

  it('logs in, reads the profile with the bearer token, refreshes with rotation', async () => {
    const login = await rest('POST', '/auth/login', { username: platform.config.adminUsername, password: platform.config.adminPassword });
    expect(login.status).toBe(200);
    const tokens = await login.json();
    expect(tokens).toMatchObject({ accessToken: expect.any(String), refreshToken: expect.any(String), user: { username: platform.config.adminUsername, isAdmin: true } });
    expect(JSON.stringify(tokens.user)).not.toMatch(/password|hash/i);

    const profile = await rest('GET', '/auth/profile', undefined, { authorization: `Bearer ${tokens.accessToken}` });
    expect(profile.status).toBe(200);
    expect((await profile.json()).username).toBe(platform.config.adminUsername);

    const refreshed = await rest('POST', '/auth/refresh', { refreshToken: tokens.refreshToken });
    expect(refreshed.status).toBe(200);
    const next = await refreshed.json();
    expect(next.accessToken).toEqual(expect.any(String));
    expect(next.refreshToken).not.toBe(tokens.refreshToken);

    // Reuse of the rotated token revokes the family: the newest token dies with it.
    const reuse = await rest('POST', '/auth/refresh', { refreshToken: tokens.refreshToken });
    expect(reuse.status).toBe(401);
    expect((await reuse.json()).error.code).toBe('UNAUTHENTICATED');
    const afterReuse = await rest('POST', '/auth/refresh', { refreshToken: next.refreshToken });
    expect(afterReuse.status).toBe(401);
  });

  it('rejects bad logins with one message and bad bodies with 400', async () => {
    const wrong = await rest('POST', '/auth/login', { username: platform.config.adminUsername, password: 'wrong-password' });
    expect(wrong.status).toBe(401);
    const unknown = await rest('POST', '/auth/login', { username: 'nobody-here', password: 'wrong-password' });
    expect(unknown.status).toBe(401);
    const [a, b] = [await wrong.json(), await unknown.json()];
    expect(a.error.message).toBe(b.error.message);
    expect(a.error.requestId).toEqual(expect.any(String));

    expect((await rest('POST', '/auth/login', '{"username": ')).status).toBe(400);
    expect((await rest('POST', '/auth/login', { username: 'x' })).status).toBe(400);
    expect((await rest('POST', '/auth/login', { username: 5, password: true })).status).toBe(400);
    expect((await rest('POST', '/auth/refresh', { refreshToken: 'rt_garbage' })).status).toBe(401);
  });

  it('creates an API key shown once, accepts it, and refuses it at once after revocation', async () => {
    const admin = await loginAdmin(platform);
    const created = await rest('POST', '/auth/api-keys', { name: 'ci' }, admin.auth);
    expect(created.status).toBe(201);
    const key = await created.json();
    expect(key.key).toMatch(/^wcp_key_/);

    const viaKey = await rest('GET', '/auth/profile', undefined, { 'x-api-key': key.key });
    expect(viaKey.status).toBe(200);
    expect((await viaKey.json()).id).toBe(admin.userId);

    const listed = await gql(platform, '{ apiKeys { id name prefix } }', {}, admin.auth);
    expect(JSON.stringify(listed.data)).not.toContain(key.key);
    expect(listed.data.apiKeys.map((k: any) => k.id)).toContain(key.id);

    const revoked = await gql(platform, 'mutation($id: ID!) { revokeApiKey(id: $id) { id } }', { id: key.id }, admin.auth);
    expect(revoked.errors).toBeUndefined();
    await eventually(async () => (await rest('GET', '/auth/profile', undefined, { 'x-api-key': key.key })).status === 401, 2000, 'the revoked key to be refused');
  });

  it('answers 401 on protected routes without credentials and with broken ones', async () => {
    const none = await rest('GET', '/auth/profile');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect((await rest('GET', '/auth/profile', undefined, { authorization: 'Bearer abc.def.ghi' })).status).toBe(401);
    expect((await rest('GET', '/auth/profile', undefined, { 'x-api-key': 'wcp_key_unknown' })).status).toBe(401);
  });

  it('refuses oversized bodies with 413 and never echoes a mistyped secret value', async () => {
    const admin = await loginAdmin(platform);
    const big = await rest('POST', '/auth/login', { username: 'x', password: 'y'.repeat(platform.config.maxBodyBytes) });
    expect(big.status).toBe(413);
    expect((await big.json()).error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', requestId: expect.any(String) });
    const typed = await rest('POST', `/workspaces/${admin.defaultWorkspaceId}/secrets`, { key: 'PIN', value: 987654321 }, admin.auth);
    expect(typed.status).toBe(400);
    const text = await typed.text();
    expect(JSON.parse(text).error).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'value' } });
    expect(text).not.toContain('987654321');
    const list = await rest('GET', `/workspaces/${admin.defaultWorkspaceId}/secrets`, undefined, admin.auth);
    expect((await list.json()).total).toBe(0);
  });

  it('keeps workspaces apart: a user cannot add members to a workspace they do not belong to', async () => {
    const admin = await loginAdmin(platform);
    const alice = await createUserAndLogin(platform, admin.auth, 'alice-ws');
    const mallory = await createUserAndLogin(platform, admin.auth, 'mallory-ws');
    const attempt = await gql(
      platform,
      'mutation($ws: ID!, $u: ID!) { addWorkspaceMember(workspaceId: $ws, userId: $u, role: owner) { id } }',
      { ws: alice.defaultWorkspaceId, u: mallory.userId },
      mallory.auth,
    );
    expect(attempt.errors?.[0].extensions?.code).toBe('NOT_FOUND');
    const seen = await gql(platform, 'query($id: ID!) { workspace(id: $id) { id } }', { id: alice.defaultWorkspaceId }, mallory.auth);
    expect(seen.errors?.[0].extensions?.code).toBe('NOT_FOUND');
    const mine = await gql(platform, '{ workspaces { id } }', {}, mallory.auth);
    expect(mine.data.workspaces.map((w: any) => w.id)).not.toContain(alice.defaultWorkspaceId);
  });
});

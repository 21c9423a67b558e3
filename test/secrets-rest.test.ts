import { randomBytes } from 'node:crypto';
import { ENVELOPE_HEADER, signEnvelope } from '../core/principal';
import { startTestPlatform, type TestPlatform } from './harness';
import { gql, rest as restCall } from './helpers';

/**
 * Workspace secrets end to end: REST → gateway → billing (and identity for users and the
 * createdBy reference), with two users who must not see each other's workspaces.
 */
describe('workspace secrets over REST', () => {
  let platform: TestPlatform;
  let admin: { auth: Record<string, string>; userId: string; workspaceId: string };
  let other: { auth: Record<string, string>; userId: string; workspaceId: string };
  const adminValue = `admin-secret-${randomBytes(12).toString('hex')}`;

  beforeAll(async () => {
    platform = await startTestPlatform({ services: ['identity', 'billing', 'gateway'] });
    admin = await restLogin(platform.config.adminUsername, platform.config.adminPassword);
    const created = await gql(platform, 'mutation($u: String!, $p: String!) { createUser(username: $u, password: $p) { id } }', { u: 'secrets-other', p: 'correct horse battery' }, admin.auth);
    expect(created.errors).toBeUndefined();
    other = await restLogin('secrets-other', 'correct horse battery');
    expect(other.userId).toBe(created.data.createUser.id);
    expect(other.workspaceId).not.toBe(admin.workspaceId);
  });
  afterAll(() => platform?.stop());

  const rest = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => restCall(platform, method, path, body, headers);

  async function restLogin(username: string, password: string) {
    const res = await fetch(`${platform.restUrl}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, password }),
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    const auth = { authorization: `Bearer ${body.accessToken}` };
    const profile = await gql(platform, '{ profile { id defaultWorkspaceId } }', {}, auth);
    return { auth, userId: profile.data.profile.id as string, workspaceId: profile.data.profile.defaultWorkspaceId as string };
  }

  /** The stored value, read the way a worker would: billing's internal route with a signed envelope. */
  async function storedValue(workspaceId: string, key: string): Promise<string> {
    const envelope = signEnvelope(platform.config.internalSigningSecret, { principal: null, requestId: 'test', clientIp: '127.0.0.1', iat: Math.floor(Date.now() / 1000) });
    const res = await fetch(platform.subgraphs.billing!.url.replace(/\/graphql$/, '/internal/secrets/resolve'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', [ENVELOPE_HEADER]: envelope },
      body: JSON.stringify({ workspaceId, keys: [key] }),
    });
    expect(res.status).toBe(200);
    return (await res.json()).data.values[key];
  }

  it('creates, lists, reads, updates and deletes a secret, never answering its value', async () => {
    const base = `/workspaces/${admin.workspaceId}/secrets`;
    const value = `crud-${randomBytes(8).toString('hex')}`;
    const created = await rest('POST', base, { key: 'CRUD_TOKEN', value }, admin.auth);
    expect(created.status).toBe(201);
    const createdText = await created.text();
    expect(createdText).not.toContain(value);
    const secret = JSON.parse(createdText);
    expect(secret).toMatchObject({ id: expect.stringMatching(/^sec_/), key: 'CRUD_TOKEN', workspaceId: admin.workspaceId, createdAt: expect.any(String), updatedAt: expect.any(String) });
    expect(secret).not.toHaveProperty('value');

    const list = await rest('GET', `${base}?page=1&limit=10`, undefined, admin.auth);
    expect(list.status).toBe(200);
    const listed = await list.json();
    expect(listed).toMatchObject({ page: 1, limit: 10, total: expect.any(Number) });
    expect(listed.data.map((s: { id: string }) => s.id)).toContain(secret.id);
    expect(JSON.stringify(listed)).not.toContain(value);

    const one = await rest('GET', `${base}/${secret.id}`, undefined, admin.auth);
    expect(one.status).toBe(200);
    expect(await one.json()).toMatchObject({ id: secret.id, key: 'CRUD_TOKEN' });

    // createdBy is identity's User, fetched by the gateway through the federated reference.
    const viaGraph = await gql(platform, 'query($w: ID!, $s: ID!) { secret(workspaceId: $w, secretId: $s) { createdBy { id username } } }', { w: admin.workspaceId, s: secret.id }, admin.auth);
    expect(viaGraph.data.secret.createdBy).toEqual({ id: admin.userId, username: platform.config.adminUsername });

    const newValue = `rotated-${randomBytes(8).toString('hex')}`;
    const patched = await rest('PATCH', `${base}/${secret.id}`, { key: 'CRUD_TOKEN_2', value: newValue }, admin.auth);
    expect(patched.status).toBe(200);
    const patchedText = await patched.text();
    expect(patchedText).not.toContain(newValue);
    expect(JSON.parse(patchedText)).toMatchObject({ id: secret.id, key: 'CRUD_TOKEN_2' });
    expect(await storedValue(admin.workspaceId, 'CRUD_TOKEN_2')).toBe(newValue);

    const deleted = await rest('DELETE', `${base}/${secret.id}`, undefined, admin.auth);
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({ id: secret.id, deleted: true });
    const gone = await rest('GET', `${base}/${secret.id}`, undefined, admin.auth);
    expect(gone.status).toBe(404);
    expect((await gone.json()).error).toMatchObject({ code: 'NOT_FOUND', requestId: expect.any(String) });
  });

  it('answers 400, 409 and 401 with the platform error body, without the value', async () => {
    const base = `/workspaces/${admin.workspaceId}/secrets`;
    const value = `bad-${randomBytes(8).toString('hex')}`;
    const badKey = await rest('POST', base, { key: '9 lives', value }, admin.auth);
    expect(badKey.status).toBe(400);
    const badKeyBody = await badKey.json();
    expect(badKeyBody.error).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'key' } });
    expect(JSON.stringify(badKeyBody)).not.toContain(value);

    expect((await rest('POST', base, { key: 'EMPTY', value: '' }, admin.auth)).status).toBe(400);
    expect((await rest('POST', base, { key: 'HUGE', value: 'x'.repeat(65_537) }, admin.auth)).status).toBe(400);
    expect((await rest('GET', `${base}?limit=101`, undefined, admin.auth)).status).toBe(400);

    expect((await rest('POST', base, { key: 'TWICE', value }, admin.auth)).status).toBe(201);
    const dup = await rest('POST', base, { key: 'TWICE', value }, admin.auth);
    expect(dup.status).toBe(409);
    const dupBody = await dup.json();
    expect(dupBody.error.code).toBe('CONFLICT');
    expect(JSON.stringify(dupBody)).not.toContain(value);

    expect((await rest('GET', base)).status).toBe(401);
    expect((await rest('POST', base, { key: 'ANON', value })).status).toBe(401);
  });

  it("isolates workspaces: another user gets 404 on the first user's secrets, cannot join, and changes nothing", async () => {
    const base = `/workspaces/${admin.workspaceId}/secrets`;
    const created = await rest('POST', base, { key: 'ISOLATED_TOKEN', value: adminValue }, admin.auth);
    expect(created.status).toBe(201);
    const secret = await created.json();
    const listBefore = await (await rest('GET', `${base}?limit=100`, undefined, admin.auth)).json();

    const attempts = [
      await rest('GET', base, undefined, other.auth),
      await rest('GET', `${base}/${secret.id}`, undefined, other.auth),
      await rest('PATCH', `${base}/${secret.id}`, { key: 'STOLEN', value: 'overwritten-by-other' }, other.auth),
      await rest('DELETE', `${base}/${secret.id}`, undefined, other.auth),
      await rest('POST', base, { key: 'PLANTED', value: 'planted-by-other' }, other.auth),
      // The other user's own workspace with the first user's secret id.
      await rest('GET', `/workspaces/${other.workspaceId}/secrets/${secret.id}`, undefined, other.auth),
      await rest('PATCH', `/workspaces/${other.workspaceId}/secrets/${secret.id}`, { value: 'overwritten-by-other' }, other.auth),
      await rest('DELETE', `/workspaces/${other.workspaceId}/secrets/${secret.id}`, undefined, other.auth),
    ];
    for (const res of attempts) {
      expect(res.status).toBe(404);
      const text = await res.text();
      expect(JSON.parse(text).error.code).toBe('NOT_FOUND');
      expect(text).not.toContain('ISOLATED_TOKEN');
      expect(text).not.toContain(adminValue);
    }

    const join = await gql(
      platform,
      'mutation($w: ID!, $u: ID!) { addWorkspaceMember(workspaceId: $w, userId: $u, role: owner) { role } }',
      { w: admin.workspaceId, u: other.userId },
      other.auth,
    );
    expect(join.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    // Still locked out after the attempt to join.
    expect((await rest('GET', base, undefined, other.auth)).status).toBe(404);

    const after = await rest('GET', `${base}/${secret.id}`, undefined, admin.auth);
    expect(after.status).toBe(200);
    expect(await after.json()).toEqual(secret);
    const listAfter = await (await rest('GET', `${base}?limit=100`, undefined, admin.auth)).json();
    expect(listAfter).toEqual(listBefore);
    expect(await storedValue(admin.workspaceId, 'ISOLATED_TOKEN')).toBe(adminValue);

    // The other user's own workspace works, and the same key there is a different secret.
    const own = await rest('POST', `/workspaces/${other.workspaceId}/secrets`, { key: 'ISOLATED_TOKEN', value: 'other-own-value' }, other.auth);
    expect(own.status).toBe(201);
    const ownList = await (await rest('GET', `/workspaces/${other.workspaceId}/secrets`, undefined, other.auth)).json();
    expect(ownList.data.map((s: { key: string }) => s.key)).toEqual(['ISOLATED_TOKEN']);
    expect(await storedValue(admin.workspaceId, 'ISOLATED_TOKEN')).toBe(adminValue);
  });
});

import { DataSource } from 'typeorm';
import { decodeJwt } from 'jose';
import { createRedis } from '../../../core/redis';
import { startSubgraph } from '../../../core/subgraph';
import { identitySubgraph } from '..';
import { PASSWORD_HASH_PARAMS } from '../users/password';
import { createTestDatabase } from '../../../test/services';
import { codeOf, startIdentityHarness, type IdentityHarness } from '../testing/identity-harness';
import { purgeExpiredRefreshTokens } from './refresh-token.maintenance';

const LOGIN = `mutation($u: String!, $p: String!) {
  login(username: $u, password: $p) { accessToken refreshToken tokenType expiresIn user { id username isAdmin defaultWorkspaceId totpEnabled workspaces { workspaceId name role } } }
}`;
const REFRESH = `mutation($t: String!) { refresh(refreshToken: $t) { accessToken refreshToken user { id } } }`;
const LOGOUT = `mutation($t: String!) { logout(refreshToken: $t) }`;

describe('identity auth', () => {
  let h: IdentityHarness;

  beforeAll(async () => {
    h = await startIdentityHarness({ loginFailuresPerUsername: 3, loginFailuresPerAddress: 5, loginFailureWindowSeconds: 60 });
  });
  afterAll(async () => {
    await h?.stop();
  });

  const login = (u: string, p: string, clientIp = '10.0.0.1') => h.gql(LOGIN, { u, p }, { clientIp });

  it('refuses a request without the gateway signature (401)', async () => {
    const response = await h.gql('{ profile { id } }', {}, { unsigned: true });
    expect(response.status).toBe(401);
    expect(codeOf(response)).toBe('UNAUTHENTICATED');
  });

  it('creates the administrator on first boot, once, with a personal workspace', async () => {
    const rows: Array<{ username: string; is_admin: boolean; password_hash: string }> = await h.subgraph.dataSource.query(
      `SELECT "username", "is_admin", "password_hash" FROM "identity"."users"`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ username: 'admin', is_admin: true });
    const { memoryCost, timeCost, parallelism } = PASSWORD_HASH_PARAMS;
    expect(rows[0].password_hash).toMatch(/^\$argon2id\$v=19\$/);
    for (const param of [`m=${memoryCost}`, `t=${timeCost}`, `p=${parallelism}`]) expect(rows[0].password_hash).toContain(param);
  });

  it('bootstraps the administrator once when two processes start at once on a fresh database', async () => {
    const database = await createTestDatabase('identity_boot');
    const runtime = { ...h.runtime, databaseUrl: database.url, onQuery: undefined };
    try {
      const both = await Promise.all([startSubgraph(identitySubgraph, runtime, 0), startSubgraph(identitySubgraph, runtime, 0)]);
      const [{ users, workspaces }] = await both[0].dataSource.query(
        `SELECT (SELECT count(*)::int FROM "identity"."users") AS "users", (SELECT count(*)::int FROM "identity"."workspaces") AS "workspaces"`,
      );
      expect({ users, workspaces }).toEqual({ users: 1, workspaces: 1 });
      await Promise.all(both.map((s) => s.stop()));
    } finally {
      await database.drop();
    }
  });

  it('creates a user once when two bootstraps race (INSERT ... ON CONFLICT DO NOTHING)', async () => {
    const deps = { runtime: h.runtime, config: h.config, dataSource: h.subgraph.dataSource, redis: createRedis(h.runtime.redisUrl), pubsub: h.runtime.pubsub, logger: h.runtime.logger };
    try {
      const [a, b] = [identitySubgraph.createServices(deps), identitySubgraph.createServices(deps)];
      const input = { username: 'racing-admin', password: 'racing-admin-password' };
      await Promise.all([a.users.bootstrapAdmin(input), b.users.bootstrapAdmin(input), a.users.bootstrapAdmin(input)]);
      const rows = await h.subgraph.dataSource.query(`SELECT "id" FROM "identity"."users" WHERE "username" = 'racing-admin'`);
      expect(rows).toHaveLength(1);
      const orphans = await h.subgraph.dataSource.query(`SELECT "id" FROM "identity"."workspaces" WHERE "name" = 'racing-admin''s workspace'`);
      expect(orphans).toHaveLength(1);
    } finally {
      deps.redis.disconnect();
    }
  });

  it('logs in with the right password and answers tokens and the user', async () => {
    const response = await login('admin', h.config.adminPassword, '10.1.0.1');
    expect(response.errors).toBeUndefined();
    const payload = response.data!.login;
    expect(payload.tokenType).toBe('Bearer');
    expect(payload.expiresIn).toBe(h.config.accessTokenTtlSeconds);
    expect(payload.refreshToken).toMatch(/^rt_[0-9a-z]{20}\.[A-Za-z0-9_-]{43}$/);
    expect(payload.user).toMatchObject({ username: 'admin', isAdmin: true, totpEnabled: false });
    expect(payload.user.workspaces).toEqual([{ workspaceId: payload.user.defaultWorkspaceId, name: "admin's workspace", role: 'owner' }]);
    const claims = decodeJwt(payload.accessToken);
    expect(claims.sub).toBe(payload.user.id);
    expect(claims.fam).toMatch(/^rtf_/);
  });

  it('answers a wrong password and an unknown user alike', async () => {
    const wrong = await login('admin', 'not-the-password', '10.1.0.2');
    const unknown = await login('nobody-here', 'not-the-password', '10.1.0.2');
    for (const response of [wrong, unknown]) {
      expect(codeOf(response)).toBe('UNAUTHENTICATED');
      expect(response.errors![0].message).toBe('Invalid username or password');
    }
  });

  it('throttles failed logins per username, even with the right password afterwards', async () => {
    const user = await h.newUser('throttled-user', 'right-password-1');
    expect(user).toBeTruthy();
    for (let i = 0; i < 3; i++) {
      // Each failure from a different address: only the username counter can block.
      expect(codeOf(await login('throttled-user', 'wrong-password', `10.2.0.${i}`))).toBe('UNAUTHENTICATED');
    }
    const blocked = await login('throttled-user', 'right-password-1', '10.2.0.99');
    expect(codeOf(blocked)).toBe('RATE_LIMITED');
    expect(blocked.errors![0].extensions!.details!.retryAfterSeconds).toBeGreaterThan(0);
    // Another user is not affected.
    expect(codeOf(await login('admin', h.config.adminPassword, '10.2.0.98'))).toBeUndefined();
  });

  it('resets the username counter on success', async () => {
    await h.newUser('forgetful', 'right-password-2');
    for (let i = 0; i < 2; i++) await login('forgetful', 'wrong', `10.3.0.${i}`);
    expect(codeOf(await login('forgetful', 'right-password-2', '10.3.0.10'))).toBeUndefined();
    for (let i = 0; i < 2; i++) await login('forgetful', 'wrong', `10.3.0.${20 + i}`);
    expect(codeOf(await login('forgetful', 'right-password-2', '10.3.0.30'))).toBeUndefined();
  });

  it('throttles failed logins per client address across usernames', async () => {
    for (let i = 0; i < 5; i++) {
      expect(codeOf(await login(`guess-${i}`, 'wrong-password', '10.4.0.1'))).toBe('UNAUTHENTICATED');
    }
    expect(codeOf(await login('admin', h.config.adminPassword, '10.4.0.1'))).toBe('RATE_LIMITED');
    expect(codeOf(await login('admin', h.config.adminPassword, '10.4.0.2'))).toBeUndefined();
  });

  it('rotates refresh tokens within the family', async () => {
    const first = (await login('admin', h.config.adminPassword, '10.5.0.1')).data!.login;
    const second = await h.gql(REFRESH, { t: first.refreshToken });
    expect(second.errors).toBeUndefined();
    const next = second.data!.refresh;
    expect(next.refreshToken).not.toBe(first.refreshToken);
    expect(next.user.id).toBe(first.user.id);
    expect(decodeJwt(next.accessToken).fam).toBe(decodeJwt(first.accessToken).fam);
    // The new one works in turn.
    expect((await h.gql(REFRESH, { t: next.refreshToken })).errors).toBeUndefined();
  });

  it('revokes the whole family when a rotated token is presented again', async () => {
    const first = (await login('admin', h.config.adminPassword, '10.5.0.2')).data!.login;
    const rotated = (await h.gql(REFRESH, { t: first.refreshToken })).data!.refresh;
    const reuse = await h.gql(REFRESH, { t: first.refreshToken });
    expect(codeOf(reuse)).toBe('UNAUTHENTICATED');
    // The legitimate holder's newer token died with the family.
    expect(codeOf(await h.gql(REFRESH, { t: rotated.refreshToken }))).toBe('UNAUTHENTICATED');
  });

  it('lets exactly one of two concurrent refreshes of one token win', async () => {
    const first = (await login('admin', h.config.adminPassword, '10.5.0.3')).data!.login;
    const results = await Promise.all([h.gql(REFRESH, { t: first.refreshToken }), h.gql(REFRESH, { t: first.refreshToken })]);
    const winners = results.filter((r) => !r.errors);
    const losers = results.filter((r) => r.errors);
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(1);
    expect(codeOf(losers[0])).toBe('UNAUTHENTICATED');
    const issued: Array<{ n: number }> = await h.subgraph.dataSource.query(
      `SELECT count(*)::int AS n FROM "identity"."refresh_tokens" WHERE "family_id" = $1`,
      [decodeJwt(first.accessToken).fam],
    );
    expect(issued[0].n).toBe(2);
  });

  it('refuses malformed, unknown and expired refresh tokens', async () => {
    for (const t of ['nope', 'rt_aaaaaaaaaaaaaaaaaaaa.bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', '']) {
      expect(codeOf(await h.gql(REFRESH, { t }))).toBe('UNAUTHENTICATED');
    }
    const first = (await login('admin', h.config.adminPassword, '10.5.0.4')).data!.login;
    const [id, secret] = first.refreshToken.split('.');
    expect(codeOf(await h.gql(REFRESH, { t: `${id}.${secret.slice(0, -2)}xx` }))).toBe('UNAUTHENTICATED');
    await h.subgraph.dataSource.query(`UPDATE "identity"."refresh_tokens" SET "expires_at" = now() - interval '1 second' WHERE "id" = $1`, [id]);
    expect(codeOf(await h.gql(REFRESH, { t: first.refreshToken }))).toBe('UNAUTHENTICATED');
  });

  it('logs out by revoking the family', async () => {
    const first = (await login('admin', h.config.adminPassword, '10.5.0.5')).data!.login;
    const response = await h.gql(LOGOUT, { t: first.refreshToken });
    expect(response.data).toEqual({ logout: true });
    expect(codeOf(await h.gql(REFRESH, { t: first.refreshToken }))).toBe('UNAUTHENTICATED');
    expect((await h.gql(LOGOUT, { t: 'garbage' })).data).toEqual({ logout: false });
  });

  it('purges refresh tokens expired for more than a day', async () => {
    const first = (await login('admin', h.config.adminPassword, '10.5.0.6')).data!.login;
    const [id] = first.refreshToken.split('.');
    await h.subgraph.dataSource.query(`UPDATE "identity"."refresh_tokens" SET "expires_at" = now() - interval '25 hours' WHERE "id" = $1`, [id]);
    const dataSource = new DataSource({ type: 'postgres', url: h.runtime.databaseUrl, schema: 'identity' });
    await dataSource.initialize();
    try {
      expect(await purgeExpiredRefreshTokens(dataSource)).toBe(1);
      expect(await purgeExpiredRefreshTokens(dataSource)).toBe(0);
    } finally {
      await dataSource.destroy();
    }
  });
});

import { createSecretKey, generateKeyPairSync } from 'node:crypto';
import { SignJWT } from 'jose';
import { signAccessToken } from '../core/tokens';
import { startTestPlatform, type TestPlatform } from './harness';
import { createUserAndLogin, eventually, gql, loginAdmin } from './helpers';

/**
 * Forged, altered, expired and revoked credentials against the edge, on REST and GraphQL alike:
 * each is refused with 401 UNAUTHENTICATED in the platform's error shape, and none reaches a
 * subgraph as a principal.
 */
describe('credentials an attacker might present', () => {
  let platform: TestPlatform;
  let admin: Awaited<ReturnType<typeof loginAdmin>>;
  let bob: Awaited<ReturnType<typeof createUserAndLogin>>;

  beforeAll(async () => {
    platform = await startTestPlatform({ services: ['identity', 'billing', 'gateway'] });
    admin = await loginAdmin(platform);
    bob = await createUserAndLogin(platform, admin.auth, 'bob-token-tests');
  });
  afterAll(() => platform?.stop());

  const profile = (headers: Record<string, string>) => fetch(`${platform.restUrl}/auth/profile`, { headers });
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

  /** Both entrances refuse the bearer token with 401 UNAUTHENTICATED and say nothing more. */
  async function expectRefused(token: string, reason?: RegExp) {
    const viaRest = await profile({ authorization: `Bearer ${token}` });
    expect(viaRest.status).toBe(401);
    const body = await viaRest.json();
    expect(body.error).toMatchObject({ code: 'UNAUTHENTICATED', requestId: expect.any(String) });
    if (reason) expect(body.error.message).toMatch(reason);
    const viaGraphql = await gql(platform, '{ profile { id } }', {}, { authorization: `Bearer ${token}` });
    expect(viaGraphql.status).toBe(401);
    expect(viaGraphql.errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
    expect(viaGraphql.data).toBeUndefined();
  }

  it('accepts the genuine token (the baseline the forgeries are measured against)', async () => {
    const response = await profile(bob.auth);
    expect(response.status).toBe(200);
    expect((await response.json()).id).toBe(bob.userId);
  });

  it('refuses an expired token', async () => {
    const claims = { typ: 'access' };
    const expired = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(bob.userId)
      .setIssuer('platform')
      .setAudience('platform-api')
      .setIssuedAt(Math.floor(Date.now() / 1000) - 3600)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
      .sign(createSecretKey(Buffer.from(platform.config.jwtSecret)));
    await expectRefused(expired, /expired/i);
  });

  it('refuses a token whose payload was altered (another subject) under the original signature', async () => {
    const [header, payload, signature] = bob.accessToken.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    expect(claims.sub).toBe(bob.userId);
    await expectRefused(`${header}.${b64({ ...claims, sub: admin.userId })}.${signature}`);
    // A flipped signature byte alone is refused too.
    const flipped = signature.slice(0, -2) + (signature.at(-2) === 'A' ? 'B' : 'A') + signature.at(-1);
    await expectRefused(`${header}.${payload}.${flipped}`);
  });

  it('refuses alg "none" (unsigned) tokens, with or without a trailing signature', async () => {
    const [, payload] = bob.accessToken.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    for (const alg of ['none', 'None', 'NONE']) {
      const unsigned = `${b64({ alg, typ: 'JWT' })}.${b64({ ...claims, sub: admin.userId })}`;
      await expectRefused(`${unsigned}.`);
      await expectRefused(unsigned);
    }
  });

  it('refuses tokens signed with another key or another algorithm (key confusion)', async () => {
    await expectRefused(await signAccessToken('some-other-secret-0123456789-0123456789', { sub: admin.userId }, 600));
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const rs256 = await new SignJWT({ typ: 'access' })
      .setProtectedHeader({ alg: 'RS256' })
      .setSubject(admin.userId)
      .setIssuer('platform')
      .setAudience('platform-api')
      .setExpirationTime('10m')
      .sign(privateKey);
    await expectRefused(rs256);
    // HS512 with the platform's own secret is still not the one algorithm accepted.
    const hs512 = await new SignJWT({ typ: 'access' })
      .setProtectedHeader({ alg: 'HS512' })
      .setSubject(admin.userId)
      .setIssuer('platform')
      .setAudience('platform-api')
      .setExpirationTime('10m')
      .sign(createSecretKey(Buffer.from(platform.config.jwtSecret)));
    await expectRefused(hs512);
  });

  it('refuses a refresh token presented as an access token, and garbage', async () => {
    await expectRefused(bob.refreshToken);
    for (const junk of ['x', 'a.b.c', '....', 'Bearer', 'e30.e30.e30', 'ü'.repeat(10)]) await expectRefused(junk);
  });

  it('refuses a token of a user who no longer resolves (unknown subject)', async () => {
    await expectRefused(await signAccessToken(platform.config.jwtSecret, { sub: 'usr_doesnotexist' }, 600));
  });

  it('refuses a revoked API key at once, and an API key that was never issued', async () => {
    const created = await gql(platform, 'mutation { createApiKey(name: "revoke-me") { id key } }', {}, bob.auth);
    const key = created.data.createApiKey;
    expect((await profile({ 'x-api-key': key.key })).status).toBe(200);
    await gql(platform, 'mutation($id: ID!) { revokeApiKey(id: $id) { id } }', { id: key.id }, bob.auth);
    await eventually(async () => (await profile({ 'x-api-key': key.key })).status === 401, 2000, 'the revoked key to be refused');
    const forged = `${key.key.slice(0, -4)}AAAA`;
    const response = await profile({ 'x-api-key': forged });
    expect(response.status).toBe(401);
    expect((await response.json()).error.code).toBe('UNAUTHENTICATED');
  });

  it('revokes the whole refresh family when a spent refresh token is replayed', async () => {
    const session = await createUserAndLogin(platform, admin.auth, 'carol-token-tests');
    const refresh = (token: string) =>
      fetch(`${platform.restUrl}/auth/refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refreshToken: token }) });
    const first = await refresh(session.refreshToken);
    expect(first.status).toBe(200);
    const next = (await first.json()).refreshToken;
    const replay = await refresh(session.refreshToken);
    expect(replay.status).toBe(401);
    expect((await replay.json()).error.code).toBe('UNAUTHENTICATED');
    // The thief's replay also killed the legitimate holder's newer token.
    expect((await refresh(next)).status).toBe(401);
  });
});

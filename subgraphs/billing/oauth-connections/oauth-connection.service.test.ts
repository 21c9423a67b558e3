import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import type { PlatformConfig } from '../../../core/config';
import type { RequestContext } from '../../../core/context';
import { decrypt, encrypt } from '../../../core/crypto';
import { openSubgraphDatabase } from '../../../core/database';
import { BadRequestError, DomainError, ForbiddenError, NotFoundError, UnavailableError, ValidationError } from '../../../core/errors';
import type { Logger } from '../../../core/logger';
import { OAuthClients } from '../../../core/oauth-client';
import type { Principal } from '../../../core/principal';
import { createRedis, type Redis } from '../../../core/redis';
import { authorizeInBrowser } from '../../../test/oauth-authorize';
import { startOidcProvider, type OidcTestAccount, type OidcTestProvider } from '../../../test/oidc-provider';
import { createTestConfig, createTestDatabase, TEST_REDIS_URL, type TestDatabase } from '../../../test/services';
import { billingSubgraph } from '..';
import { REFRESH_MARGIN_SECONDS } from './oauth-connection.limits';
import { OAuthConnectionProviders } from './oauth-connection.provider';
import { OAuthConnectionRepository } from './oauth-connection.repository';
import { OAuthConnectionService } from './oauth-connection.service';
import { OAuthConnectionStateStore } from './oauth-connection.state';

/*
 * OAuthConnectionService against the real things: PostgreSQL (billing's migrations), Redis and
 * a real OpenID provider (oidc-provider in a child process) whose access tokens live 30 s, less
 * than the 60 s refresh margin, so every issued token is due for a refresh.
 */

const WS_A = 'ws_oauthalpha00000000001';
const WS_B = 'ws_oauthbravo00000000002';
const REDIRECT_URI = 'http://127.0.0.1:9/oauth/callback';
const CLIENT = { client_id: 'platform-connections', client_secret: 'connections-secret-0123456789abcdef', redirect_uris: [REDIRECT_URI] };
const ACCOUNT: OidcTestAccount = { sub: 'acct-1', email: 'ada@example.test', email_verified: true, name: 'Ada Lovelace' };

function principal(userId: string, memberships: Principal['memberships']): Principal {
  return { userId, username: userId, isAdmin: false, via: 'jwt', defaultWorkspaceId: Object.keys(memberships)[0], memberships };
}
function ctxOf(who: Principal | null): RequestContext {
  return { principal: who, requestId: 'req_oauth_unit', clientIp: '127.0.0.1' };
}

const owner = ctxOf(principal('usr_owner000000000000001', { [WS_A]: 'owner', [WS_B]: 'admin' }));
const coAdmin = ctxOf(principal('usr_coadmin0000000000002', { [WS_A]: 'admin' }));
const viewer = ctxOf(principal('usr_viewer00000000000003', { [WS_A]: 'viewer' }));
const outsider = ctxOf(principal('usr_outsider000000000004', { [WS_B]: 'owner' }));
const platform = ctxOf(null);

let database: TestDatabase;
let dataSource: DataSource;
let redis: Redis;
let pg: Client;
let idp: OidcTestProvider;
let config: PlatformConfig;
let service: OAuthConnectionService;
/** Every line the service logged; checked for tokens at the end. */
const logged: string[] = [];
/** Every token plaintext the tests saw. */
const tokensSeen: string[] = [];

function recordingLogger(): Logger {
  const write = (message: string, fields?: Record<string, unknown>) => void logged.push(JSON.stringify({ message, fields }, (_k, v) => (v instanceof Error ? v.message : v)));
  const logger: Logger = { debug: write, info: write, warn: write, error: write, child: () => logger };
  return logger;
}

function buildService(cfg: PlatformConfig): OAuthConnectionService {
  const logger = recordingLogger();
  return new OAuthConnectionService({
    repository: new OAuthConnectionRepository(dataSource),
    states: new OAuthConnectionStateStore(redis, cfg),
    providers: new OAuthConnectionProviders(new OAuthClients(cfg), logger),
    encryptionKey: cfg.secretsEncryptionKey,
    logger,
  });
}

beforeAll(async () => {
  database = await createTestDatabase('t_billing_oauth');
  idp = await startOidcProvider({ clients: [CLIENT], accessTokenTtlSeconds: 30 });
  config = createTestConfig({
    databaseUrl: database.url,
    prefix: database.name,
    env: { IDP_A_ISSUER: idp.issuer, IDP_A_CLIENT_ID: CLIENT.client_id, IDP_A_CLIENT_SECRET: CLIENT.client_secret, IDP_A_CONNECTION_REDIRECT_URI: REDIRECT_URI },
  });
  dataSource = await openSubgraphDatabase({ url: database.url, schema: 'billing', entities: billingSubgraph.entities, migrations: billingSubgraph.migrations });
  redis = createRedis(TEST_REDIS_URL);
  pg = new Client({ connectionString: database.url });
  await pg.connect();
  service = buildService(config);
});

afterAll(async () => {
  await pg?.end();
  await dataSource?.destroy();
  await redis?.quit();
  await idp?.stop();
  await database?.drop();
});

/** auth-url → the provider (sign-in and consent) → the redirect's code and state. */
async function authorize(ctx: RequestContext, workspaceId: string, account: OidcTestAccount = ACCOUNT, svc = service, provider = idp) {
  const started = await svc.createAuthorizationUrl(ctx, { workspaceId });
  const redirect = await authorizeInBrowser(provider, started.url, started.redirectUri, account);
  return { started, redirect };
}

async function connect(ctx: RequestContext, workspaceId: string, account: OidcTestAccount = ACCOUNT) {
  const { redirect } = await authorize(ctx, workspaceId, account);
  return service.exchangeCode(ctx, { workspaceId, code: redirect.code, state: redirect.state, iss: redirect.iss });
}

async function storedRow(id: string) {
  const { rows } = await pg.query('SELECT * FROM billing.oauth_connections WHERE id = $1', [id]);
  return rows[0];
}

function tokenOf(row: { id: string; access_token_ciphertext: string; refresh_token_ciphertext: string }, kind: 'access_token' | 'refresh_token'): string {
  const token = decrypt(config.secretsEncryptionKey, kind === 'access_token' ? row.access_token_ciphertext : row.refresh_token_ciphertext, `${row.id}:${kind}`).toString('utf8');
  tokensSeen.push(token);
  return token;
}

async function refreshCalls(): Promise<number> {
  return (await idp.tokenCalls()).filter((call) => call.grantType === 'refresh_token').length;
}

async function rejection(promise: Promise<unknown>): Promise<DomainError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof DomainError)) throw new Error(`expected a domain error, got ${String(err)}`);
  return err;
}

describe('authorization URL', () => {
  it('asks for the connection scopes with state, PKCE S256, nonce and consent, and keeps the verifier in Redis under the hashed state', async () => {
    const started = await service.createAuthorizationUrl(owner, { workspaceId: WS_A });
    const url = new URL(started.url);
    expect(url.origin).toBe(idp.issuer);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: CLIENT.client_id,
      response_type: 'code',
      redirect_uri: REDIRECT_URI,
      scope: 'openid email profile offline_access',
      state: started.state,
      code_challenge_method: 'S256',
      prompt: 'consent',
    });
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('nonce')).toBeTruthy();
    expect(started).toMatchObject({ redirectUri: REDIRECT_URI, scopes: ['openid', 'email', 'profile', 'offline_access'] });
    const ttl = (new Date(started.expiresAt).getTime() - Date.now()) / 1000;
    expect(ttl).toBeGreaterThan(config.oauthStateTtlSeconds - 5);
    expect(ttl).toBeLessThanOrEqual(config.oauthStateTtlSeconds);

    const keys = await redis.keys(`${config.redisPrefix}:oauth-connection-state:*`);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.join()).not.toContain(started.state);
    expect(await redis.ttl(keys[0])).toBeGreaterThan(0);
  });

  it('takes a redirect URI and scopes from the caller, validated', async () => {
    const started = await service.createAuthorizationUrl(owner, { workspaceId: WS_A, redirectUri: 'https://app.example.test/cb', scopes: ['openid', 'email', 'openid'] });
    expect(started.scopes).toEqual(['openid', 'email']);
    expect(new URL(started.url).searchParams.get('redirect_uri')).toBe('https://app.example.test/cb');
    for (const redirectUri of ['not a url', 'ftp://x.test/cb', 'https://x.test/cb#frag', 'javascript:alert(1)']) {
      expect(await rejection(service.createAuthorizationUrl(owner, { workspaceId: WS_A, redirectUri }))).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'redirectUri' } });
    }
    for (const scopes of [[], ['has space'], ['quote"d'], [42 as unknown as string]]) {
      expect(await rejection(service.createAuthorizationUrl(owner, { workspaceId: WS_A, scopes }))).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'scopes' } });
    }
  });

  it('needs a redirect URI from the caller when none is configured', async () => {
    const bare = buildService(createTestConfig({
      databaseUrl: database.url,
      prefix: database.name,
      env: { IDP_A_ISSUER: idp.issuer, IDP_A_CLIENT_ID: CLIENT.client_id, IDP_A_CLIENT_SECRET: CLIENT.client_secret },
    }));
    expect(await rejection(bare.createAuthorizationUrl(owner, { workspaceId: WS_A }))).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'redirectUri' } });
  });
});

describe('access', () => {
  it('answers 404 to a non-member and 403 to a viewer before any state is made or spent', async () => {
    const before = await redis.keys(`${config.redisPrefix}:oauth-connection-state:*`);
    const ref = { workspaceId: WS_A, connectionId: 'oac_x' };
    for (const call of [
      () => service.list(outsider, { workspaceId: WS_A }),
      () => service.createAuthorizationUrl(outsider, { workspaceId: WS_A }),
      () => service.exchangeCode(outsider, { workspaceId: WS_A, code: 'c', state: 's' }),
      () => service.delete(outsider, ref),
      () => service.issueAccessToken(outsider, ref),
    ]) {
      expect(await rejection(call())).toBeInstanceOf(NotFoundError);
    }
    for (const call of [
      () => service.createAuthorizationUrl(viewer, { workspaceId: WS_A }),
      () => service.exchangeCode(viewer, { workspaceId: WS_A, code: 'c', state: 's' }),
      () => service.delete(viewer, ref),
    ]) {
      expect(await rejection(call())).toBeInstanceOf(ForbiddenError);
    }
    await expect(service.list(viewer, { workspaceId: WS_A })).resolves.toMatchObject({ page: 1, limit: 20 });
    expect(await redis.keys(`${config.redisPrefix}:oauth-connection-state:*`)).toEqual(before);
  });

  it('checks the internal input: workspaceId and connectionId strings, an existing connection', async () => {
    expect(await rejection(service.issueAccessToken(platform, { connectionId: 'oac_x' }))).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'workspaceId' } });
    expect(await rejection(service.issueAccessToken(platform, { workspaceId: WS_A, connectionId: 7 }))).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'connectionId' } });
    expect(await rejection(service.issueAccessToken(platform, null))).toBeInstanceOf(ValidationError);
    expect(await rejection(service.issueAccessToken(platform, { workspaceId: WS_A, connectionId: 'oac_doesnotexist000000' }))).toBeInstanceOf(NotFoundError);
    expect(await rejection(service.issueAccessToken(platform, { workspaceId: WS_A, connectionId: 'sec_wrongprefix' }))).toBeInstanceOf(NotFoundError);
  });
});

describe('exchange', () => {
  it('stores the connection with the account and encrypted tokens, and a re-connection updates the same row', async () => {
    const connection = await connect(owner, WS_A);
    expect(connection).toMatchObject({
      id: expect.stringMatching(/^oac_/),
      workspaceId: WS_A,
      provider: 'idp-a',
      status: 'active',
      subject: ACCOUNT.sub,
      email: ACCOUNT.email,
      name: ACCOUNT.name,
      scopes: expect.arrayContaining(['openid', 'offline_access']),
      lastRefreshedAt: null,
      createdBy: { __typename: 'User', id: owner.principal!.userId },
    });
    expect(new Date(connection.accessTokenExpiresAt!).getTime()).toBeGreaterThan(Date.now());
    expect(Object.keys(connection).join()).not.toMatch(/token(?!ExpiresAt)/i);

    const row = await storedRow(connection.id);
    const accessToken = tokenOf(row, 'access_token');
    const refreshToken = tokenOf(row, 'refresh_token');
    expect(row.access_token_ciphertext).toMatch(/^v1\./);
    expect(row.access_token_ciphertext).not.toContain(accessToken);
    expect(row.refresh_token_ciphertext).not.toContain(refreshToken);
    expect(JSON.stringify(connection)).not.toContain(accessToken);
    // Bound to the row and the kind: the access token's ciphertext does not open as the refresh token.
    expect(() => decrypt(config.secretsEncryptionKey, row.access_token_ciphertext, `${row.id}:refresh_token`)).toThrow();

    // The same account again, by another admin: one row, same id and creator, new tokens.
    const again = await connect(coAdmin, WS_A);
    expect(again.id).toBe(connection.id);
    expect(again.createdBy.id).toBe(owner.principal!.userId);
    expect(tokenOf(await storedRow(connection.id), 'access_token')).not.toBe(accessToken);
    const { rows } = await pg.query('SELECT count(*)::int AS n FROM billing.oauth_connections WHERE workspace_id = $1', [WS_A]);
    expect(rows[0].n).toBe(1);

    // Another account is another connection.
    const second = await connect(owner, WS_A, { sub: 'acct-2', email: 'grace@example.test', name: 'Grace Hopper' });
    expect(second.id).not.toBe(connection.id);
    const listed = await service.list(viewer, { workspaceId: WS_A });
    expect(listed.total).toBe(2);
    expect(listed.data.map((c) => c.id)).toEqual([second.id, connection.id]);
    await service.delete(owner, { workspaceId: WS_A, connectionId: second.id });
  });

  it('spends a state once and accepts it only for its workspace, provider and user', async () => {
    const { redirect } = await authorize(owner, WS_A);
    // Another workspace (the caller is admin there too): 400, and the state is spent.
    expect(await rejection(service.exchangeCode(owner, { workspaceId: WS_B, code: redirect.code, state: redirect.state }))).toMatchObject({ code: 'BAD_REQUEST', details: { field: 'state' } });
    expect(await rejection(service.exchangeCode(owner, { workspaceId: WS_A, code: redirect.code, state: redirect.state }))).toMatchObject({ code: 'BAD_REQUEST' });

    const other = await authorize(owner, WS_A);
    expect(await rejection(service.exchangeCode(owner, { workspaceId: WS_A, provider: 'idp-b', code: other.redirect.code, state: other.redirect.state }))).toBeInstanceOf(UnavailableError); // idp-b: not configured here

    const byUser = await authorize(owner, WS_A);
    expect((await rejection(service.exchangeCode(coAdmin, { workspaceId: WS_A, code: byUser.redirect.code, state: byUser.redirect.state }))).message).toContain('another user');

    const tampered = await authorize(owner, WS_A);
    expect((await rejection(service.exchangeCode(owner, { workspaceId: WS_A, code: tampered.redirect.code, state: `${tampered.redirect.state}x` }))).message).toMatch(/Unknown, expired or already used state/);

    for (const bad of [{ code: '', state: 's' }, { code: 'c', state: '' }, { code: 5 as unknown as string, state: 's' }, { code: 'c', state: 'x'.repeat(5000) }]) {
      expect(await rejection(service.exchangeCode(owner, { workspaceId: WS_A, ...bad }))).toBeInstanceOf(ValidationError);
    }
  });

  it('answers 400 when the provider refuses the code (replayed code with a fresh state, wrong issuer)', async () => {
    const first = await authorize(owner, WS_A);
    await service.exchangeCode(owner, { workspaceId: WS_A, code: first.redirect.code, state: first.redirect.state });
    // A fresh state of this flow's kind, but the already-redeemed code: the provider says invalid_grant.
    const fresh = await service.createAuthorizationUrl(owner, { workspaceId: WS_A });
    const replay = await rejection(service.exchangeCode(owner, { workspaceId: WS_A, code: first.redirect.code, state: fresh.state }));
    expect(replay).toBeInstanceOf(BadRequestError);
    expect(replay.details).toMatchObject({ provider: 'idp-a', error: 'invalid_grant' });
    expect(replay.message).toContain('idp-a');

    const mixedUp = await authorize(owner, WS_A);
    const iss = await rejection(service.exchangeCode(owner, { workspaceId: WS_A, code: mixedUp.redirect.code, state: mixedUp.redirect.state, iss: 'https://evil.example.test' }));
    expect(iss).toBeInstanceOf(BadRequestError);
    expect(iss.message).toContain('iss mismatch');
  });

  it('answers 503, never 500, when the provider is unreachable or not configured', async () => {
    const down = await startOidcProvider({ clients: [CLIENT] });
    const withB = createTestConfig({
      databaseUrl: database.url,
      prefix: database.name,
      env: { IDP_B_ISSUER: down.issuer, IDP_B_CLIENT_ID: CLIENT.client_id, IDP_B_CLIENT_SECRET: CLIENT.client_secret, IDP_B_CONNECTION_REDIRECT_URI: REDIRECT_URI },
    });
    const svc = buildService(withB);
    const started = await svc.createAuthorizationUrl(owner, { workspaceId: WS_A, provider: 'idp-b' });
    const redirect = await authorizeInBrowser(down, started.url, REDIRECT_URI, ACCOUNT);
    await down.stop();
    const err = await rejection(svc.exchangeCode(owner, { workspaceId: WS_A, provider: 'idp-b', code: redirect.code, state: redirect.state }));
    expect(err).toBeInstanceOf(UnavailableError);
    expect(err.message).toContain('cannot be reached');

    // Discovery of a provider that is not there.
    const nowhere = buildService(createTestConfig({ databaseUrl: database.url, prefix: database.name, env: { IDP_B_ISSUER: down.issuer, IDP_B_CLIENT_ID: 'x', IDP_B_CONNECTION_REDIRECT_URI: REDIRECT_URI } }));
    expect(await rejection(nowhere.createAuthorizationUrl(owner, { workspaceId: WS_A, provider: 'idp-b' }))).toBeInstanceOf(UnavailableError);
    // Not configured at all.
    expect(await rejection(service.createAuthorizationUrl(owner, { workspaceId: WS_A, provider: 'idp-b' }))).toMatchObject({ code: 'UNAVAILABLE', message: expect.stringContaining('not configured') });
  });
});

describe('access tokens for other domains', () => {
  it('hands out the stored token while it is fresh, without calling the provider', async () => {
    const connection = await connect(owner, WS_A);
    await pg.query(`UPDATE billing.oauth_connections SET access_token_expires_at = now() + interval '1 hour' WHERE id = $1`, [connection.id]);
    const before = await refreshCalls();
    const issued = await service.issueAccessToken(platform, { workspaceId: WS_A, connectionId: connection.id });
    expect(issued.accessToken).toBe(tokenOf(await storedRow(connection.id), 'access_token'));
    expect(await refreshCalls()).toBe(before);
    // A member's envelope may ask too; a viewer's may not.
    await expect(service.issueAccessToken(owner, { workspaceId: WS_A, connectionId: connection.id })).resolves.toMatchObject({ accessToken: issued.accessToken });
    expect(await rejection(service.issueAccessToken(viewer, { workspaceId: WS_A, connectionId: connection.id }))).toBeInstanceOf(ForbiddenError);
    // Another workspace's id for it: 404.
    expect(await rejection(service.issueAccessToken(platform, { workspaceId: WS_B, connectionId: connection.id }))).toBeInstanceOf(NotFoundError);
  });

  it(`refreshes a token expiring within ${REFRESH_MARGIN_SECONDS} s, stores the new one encrypted, and concurrent callers refresh once`, async () => {
    const connection = await connect(owner, WS_A);
    const original = tokenOf(await storedRow(connection.id), 'access_token');
    const before = await refreshCalls();

    const issued = await service.issueAccessToken(platform, { workspaceId: WS_A, connectionId: connection.id });
    expect(await refreshCalls()).toBe(before + 1);
    expect(issued.accessToken).not.toBe(original);
    const row = await storedRow(connection.id);
    expect(tokenOf(row, 'access_token')).toBe(issued.accessToken);
    expect(row.last_refreshed_at).not.toBeNull();
    expect(issued.expiresAt).toBe(row.access_token_expires_at.toISOString());

    // 25 at once, more than the pool's 10 connections, so some read the row only after the
    // refresh committed: still one refresh; every other caller shares its token.
    const concurrent = await Promise.all(Array.from({ length: 25 }, () => service.issueAccessToken(platform, { workspaceId: WS_A, connectionId: connection.id })));
    expect(await refreshCalls()).toBe(before + 2);
    expect(new Set(concurrent.map((c) => c.accessToken)).size).toBe(1);
    expect(concurrent[0].accessToken).not.toBe(issued.accessToken);
    for (const c of concurrent) tokensSeen.push(c.accessToken);
    tokensSeen.push(issued.accessToken);
  });

  it('marks the connection reauthorization_required when the provider refuses the refresh, and a re-connection reactivates it', async () => {
    const connection = await connect(owner, WS_A);
    // A refresh token the provider does not know (as after a revocation at the provider).
    await pg.query('UPDATE billing.oauth_connections SET refresh_token_ciphertext = $2 WHERE id = $1', [
      connection.id,
      encrypt(config.secretsEncryptionKey, 'revoked-refresh-token', `${connection.id}:refresh_token`),
    ]);
    const err = await rejection(service.issueAccessToken(platform, { workspaceId: WS_A, connectionId: connection.id }));
    expect(err).toMatchObject({ code: 'INVALID_STATE', details: { state: 'reauthorization_required' } });
    expect(err.message).toContain(connection.id);
    expect((await storedRow(connection.id)).status).toBe('reauthorization_required');
    const listed = await service.list(owner, { workspaceId: WS_A });
    expect(listed.data.find((c) => c.id === connection.id)?.status).toBe('reauthorization_required');
    // Asked again: 409 at once, no second refresh attempt.
    const before = await refreshCalls();
    expect(await rejection(service.issueAccessToken(platform, { workspaceId: WS_A, connectionId: connection.id }))).toMatchObject({ code: 'INVALID_STATE' });
    expect(await refreshCalls()).toBe(before);

    const reconnected = await connect(owner, WS_A);
    expect(reconnected).toMatchObject({ id: connection.id, status: 'active' });
    await expect(service.issueAccessToken(platform, { workspaceId: WS_A, connectionId: connection.id })).resolves.toMatchObject({ accessToken: expect.any(String) });
  });
});

describe('delete', () => {
  it('deletes the row and revokes its refresh token at the provider; other workspaces and providers get 404', async () => {
    const connection = await connect(owner, WS_A);
    const refreshToken = tokenOf(await storedRow(connection.id), 'refresh_token');
    expect(await rejection(service.delete(owner, { workspaceId: WS_B, connectionId: connection.id }))).toBeInstanceOf(NotFoundError);
    expect(await rejection(service.delete(owner, { workspaceId: WS_A, provider: 'idp-b', connectionId: connection.id }))).toBeInstanceOf(NotFoundError);
    expect(await rejection(service.delete(owner, { workspaceId: WS_A, connectionId: 'oac_doesnotexist000000' }))).toBeInstanceOf(NotFoundError);

    await expect(service.delete(owner, { workspaceId: WS_A, connectionId: connection.id })).resolves.toEqual({ id: connection.id, deleted: true });
    expect(await storedRow(connection.id)).toBeUndefined();
    expect(await rejection(service.delete(owner, { workspaceId: WS_A, connectionId: connection.id }))).toBeInstanceOf(NotFoundError);
    expect(await rejection(service.issueAccessToken(platform, { workspaceId: WS_A, connectionId: connection.id }))).toBeInstanceOf(NotFoundError);

    const client = await new OAuthClients(config).client('idp-a');
    await expect(client.refresh(refreshToken)).rejects.toMatchObject({ error: 'invalid_grant' });
  });
});

describe('logs', () => {
  it('never carried a token the tests saw (runs last)', () => {
    const text = logged.join('\n');
    expect(tokensSeen.length).toBeGreaterThan(5);
    expect(logged.length).toBeGreaterThan(5);
    for (const token of tokensSeen) expect(text).not.toContain(token);
  });
});

import { openCredential } from '../../subgraphs/ai/model/shared';
import { expectNoCredentials, startManagementBench, type ManagementBench } from './management-support';

/*
 * Upstream credentials by OAuth end to end, through the GraphQL mutations the gateway's raw
 * `/ai-gateway/oauth/vendor-*` handler calls, against a local OAuth token endpoint
 * (management-support.ts) that checks the PKCE verifier against the challenge.
 */

jest.setTimeout(60_000);

let bench: ManagementBench;

beforeAll(async () => {
  bench = await startManagementBench('aio');
});

afterAll(async () => {
  await bench?.stop();
});

describe('OAuth upstream credentials', () => {
  const START = 'mutation($p: String!, $n: String!, $b: String!, $r: String) { startAiOAuth(provider: $p, name: $n, baseUrl: $b, redirectUri: $r) { authorizationUrl state expiresIn } }';
  const COMPLETE = 'mutation($p: String!, $c: String!, $s: String!) { completeAiOAuth(provider: $p, code: $c, state: $s) { id workspaceId name provider baseUrl authKind credentialHint credentialExpiresAt } }';
  const REFRESH = 'mutation($p: String!, $u: ID!) { refreshAiOAuth(provider: $p, upstreamId: $u) { id authKind credentialHint credentialExpiresAt updatedAt } }';
  const code = (result: any) => result.errors?.[0]?.extensions?.code;

  /** startAiOAuth, then what the provider would do: remember the challenge under a code. */
  async function start(provider = 'vendor-a', grant = { access_token: 'oauth-access-first-0001', refresh_token: 'oauth-refresh-first-0001', expires_in: 3600 }) {
    const started = await bench.graphql(bench.alice, START, { p: provider, n: 'via-oauth', b: `${bench.vendor.url}/openai/v1` });
    expect(started.errors).toBeUndefined();
    const { authorizationUrl, state, expiresIn } = started.data.startAiOAuth;
    const url = new URL(authorizationUrl);
    const issued = `code-${state.slice(0, 8)}`;
    bench.vendor.codes.set(issued, { challenge: url.searchParams.get('code_challenge')!, grant });
    bench.credentials.push(grant.access_token, grant.refresh_token);
    return { url, state, expiresIn, code: issued };
  }

  it('starts with PKCE S256, completes into an oauth upstream, and refreshes it', async () => {
    const flow = await start();
    expect(flow.url.origin + flow.url.pathname).toBe('https://auth.vendor-a.test/authorize');
    expect(Object.fromEntries(flow.url.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: 'ai-client',
      redirect_uri: 'http://127.0.0.1:9/ai/callback',
      scope: 'models.read inference',
      state: flow.state,
      code_challenge_method: 'S256',
    });
    expect(flow.expiresIn).toBe(bench.platform.config.oauthStateTtlSeconds);

    const completed = await bench.graphql(bench.alice, COMPLETE, { p: 'vendor-a', c: flow.code, s: flow.state });
    expect(completed.errors).toBeUndefined();
    const upstream = completed.data.completeAiOAuth;
    expect(upstream).toMatchObject({ workspaceId: bench.alice.workspaceId, name: 'via-oauth', provider: 'vendor-a', authKind: 'oauth', credentialHint: '…0001' });
    expect(new Date(upstream.credentialExpiresAt).getTime()).toBeGreaterThan(Date.now() + 3500_000);
    const tokenCall = bench.vendor.seen.filter((r) => r.path === '/token').at(-1)!;
    expect(tokenCall.form).toMatchObject({ grant_type: 'authorization_code', client_id: 'ai-client', redirect_uri: 'http://127.0.0.1:9/ai/callback', code_verifier: expect.any(String) });
    const { rows } = await bench.pg.query('SELECT credential_ciphertext, refresh_token_ciphertext FROM ai.upstreams WHERE id = $1', [upstream.id]);
    expect(openCredential(bench.platform.config.secretsEncryptionKey, upstream.id, rows[0].credential_ciphertext)).toBe('oauth-access-first-0001');
    expect(openCredential(bench.platform.config.secretsEncryptionKey, upstream.id, rows[0].refresh_token_ciphertext, 'refresh_token')).toBe('oauth-refresh-first-0001');

    // The access token works for the live test (sent as a bearer token).
    expect((await bench.call(bench.alice, 'POST', `/ai-gateway/upstreams/${upstream.id}/test`)).body.ok).toBe(true);

    // Reused state: 400.
    expect(code(await bench.graphql(bench.alice, COMPLETE, { p: 'vendor-a', c: flow.code, s: flow.state }))).toBe('BAD_REQUEST');

    bench.vendor.refreshTokens.set('oauth-refresh-first-0001', { access_token: 'oauth-access-second-0002', refresh_token: 'oauth-refresh-second-0002', expires_in: 7200 });
    bench.credentials.push('oauth-access-second-0002', 'oauth-refresh-second-0002');
    const refreshed = await bench.graphql(bench.alice, REFRESH, { p: 'vendor-a', u: upstream.id });
    expect(refreshed.errors).toBeUndefined();
    expect(refreshed.data.refreshAiOAuth).toMatchObject({ id: upstream.id, authKind: 'oauth', credentialHint: '…0002' });
    expect(new Date(refreshed.data.refreshAiOAuth.credentialExpiresAt).getTime()).toBeGreaterThan(Date.now() + 7100_000);
    expect(bench.vendor.seen.filter((r) => r.path === '/token').at(-1)!.form).toMatchObject({ grant_type: 'refresh_token', refresh_token: 'oauth-refresh-first-0001', client_id: 'ai-client' });

    // The provider refuses the next refresh (the old refresh token is gone): 409.
    bench.vendor.refreshTokens.clear();
    const refused = await bench.graphql(bench.alice, REFRESH, { p: 'vendor-a', u: upstream.id });
    expect(code(refused)).toBe('INVALID_STATE');
    expect(refused.errors![0].extensions!.details).toMatchObject({ providerError: 'invalid_grant' });
    expect(code(await bench.graphql(bench.alice, REFRESH, { p: 'vendor-c', u: upstream.id }))).toBe('VALIDATION_FAILED');
    expect(code(await bench.graphql(bench.mallory, REFRESH, { p: 'vendor-a', u: upstream.id }))).toBe('NOT_FOUND');
  });

  it("refuses an unknown state, another user's, another provider's, and a code the provider refuses", async () => {
    expect(code(await bench.graphql(bench.alice, COMPLETE, { p: 'vendor-a', c: 'x', s: 'never-issued' }))).toBe('BAD_REQUEST');
    const flow = await start();
    expect(code(await bench.graphql(bench.mallory, COMPLETE, { p: 'vendor-a', c: flow.code, s: flow.state }))).toBe('BAD_REQUEST');
    expect(code(await bench.graphql(bench.alice, COMPLETE, { p: 'vendor-c', c: flow.code, s: flow.state }))).toBe('BAD_REQUEST');
    // Neither burned the state: its owner still completes.
    expect((await bench.graphql(bench.alice, COMPLETE, { p: 'vendor-a', c: flow.code, s: flow.state })).errors).toBeUndefined();

    const refusedCode = await start();
    const refused = await bench.graphql(bench.alice, COMPLETE, { p: 'vendor-a', c: 'not-the-code', s: refusedCode.state });
    expect(code(refused)).toBe('BAD_REQUEST');
    expect(refused.errors![0].extensions!.details).toMatchObject({ providerError: 'invalid_grant' });
  });

  it('answers 503 for a provider without OAuth configuration, 409 to refresh an API-key upstream, and 400 for bad arguments', async () => {
    expect(code(await bench.graphql(bench.alice, START, { p: 'vendor-b', n: 'x', b: 'https://x.test' }))).toBe('UNAVAILABLE');
    expect(code(await bench.graphql(bench.alice, START, { p: 'vendor-q', n: 'x', b: 'https://x.test' }))).toBe('VALIDATION_FAILED');
    const noRedirect = await bench.graphql(bench.alice, START, { p: 'vendor-c', n: 'x', b: 'https://x.test' });
    expect(noRedirect.errors![0].extensions).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'redirectUri' } });
    expect(code(await bench.graphql(bench.alice, START, { p: 'vendor-a', n: 'x', b: 'ftp://x.test' }))).toBe('VALIDATION_FAILED');
    const apiKeyUpstream = await bench.createUpstream(bench.alice, { name: 'not-oauth' });
    expect(code(await bench.graphql(bench.alice, REFRESH, { p: 'vendor-a', u: apiKeyUpstream.id }))).toBe('INVALID_STATE');
  });
});

describe('the REST routes POST /ai-gateway/oauth/vendor-*/{start,callback,refresh}', () => {
  it('runs the same flow over REST, with the provider fixed by the path', async () => {
    const started = await bench.call(bench.alice, 'POST', '/ai-gateway/oauth/vendor-a/start', { name: 'via-rest', baseUrl: `${bench.vendor.url}/openai/v1` });
    expect(started.status).toBe(200);
    const { authorizationUrl, state } = started.body;
    const url = new URL(authorizationUrl);
    const grant = { access_token: 'oauth-access-rest-0002', refresh_token: 'oauth-refresh-rest-0002', expires_in: 600 };
    bench.credentials.push(grant.access_token, grant.refresh_token);
    bench.vendor.codes.set('code-rest', { challenge: url.searchParams.get('code_challenge')!, grant });

    const completed = await bench.call(bench.alice, 'POST', '/ai-gateway/oauth/vendor-a/callback', { code: 'code-rest', state });
    expect(completed.status).toBe(201);
    expect(completed.body).toMatchObject({ name: 'via-rest', provider: 'vendor-a', authKind: 'oauth', credentialHint: '…0002' });
    const replay = await bench.call(bench.alice, 'POST', '/ai-gateway/oauth/vendor-a/callback', { code: 'code-rest', state });
    expect(replay.status).toBe(400);

    bench.vendor.refreshTokens.set('oauth-refresh-rest-0002', { access_token: 'oauth-access-rest-0003', refresh_token: 'oauth-refresh-rest-0003', expires_in: 600 });
    bench.credentials.push('oauth-access-rest-0003', 'oauth-refresh-rest-0003');
    const refreshed = await bench.call(bench.alice, 'POST', '/ai-gateway/oauth/vendor-a/refresh', { upstreamId: completed.body.id });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body).toMatchObject({ id: completed.body.id, credentialHint: '…0003' });
  });

  it('refuses a provider in the body, a missing argument, an unknown step, and a foreign upstream', async () => {
    const fixed = await bench.call(bench.alice, 'POST', '/ai-gateway/oauth/vendor-a/start', { provider: 'vendor-c', name: 'x', baseUrl: 'http://127.0.0.1:1/v1' });
    expect(fixed.status).toBe(400);
    expect(fixed.body.error.details.field).toBe('provider');
    const missing = await bench.call(bench.alice, 'POST', '/ai-gateway/oauth/vendor-a/callback', { code: 'x' });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.field).toBe('state');
    expect((await bench.call(bench.alice, 'POST', '/ai-gateway/oauth/vendor-a/explode', {})).status).toBe(404);
    const upstream = await bench.createUpstream(bench.alice);
    expect((await bench.call(bench.mallory, 'POST', '/ai-gateway/oauth/vendor-a/refresh', { upstreamId: upstream.id })).status).toBe(404);
    expect((await bench.call(bench.alice, 'POST', '/ai-gateway/oauth/vendor-b/start', { name: 'x', baseUrl: 'http://127.0.0.1:1' })).status).toBe(503);
  });
});

describe('credentials', () => {
  it('never appeared in any answer of this file', () => expectNoCredentials(bench, 15));
});

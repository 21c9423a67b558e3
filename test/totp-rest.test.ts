import { Secret, TOTP } from 'otpauth';
import { startTestPlatform, type TestPlatform } from './harness';
import { createUserAndLogin, loginAdmin, rest as restCall } from './helpers';

const PASSWORD = 'correct horse battery';
const PERIOD_MS = 30_000;
const FAILURES_PER_WINDOW = 3;

/** A code as an authenticator app computes it, independently of the platform's code. */
function codeAt(secret: string, timestamp: number): string {
  return TOTP.generate({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30, timestamp });
}

/**
 * The server's clock is the real one, so tests that need a code to be current when it arrives
 * first wait out the last 2.5 s of a time step.
 */
async function awayFromStepBoundary(): Promise<void> {
  const left = PERIOD_MS - (Date.now() % PERIOD_MS);
  if (left < 2_500) await new Promise((resolve) => setTimeout(resolve, left + 100));
}

/** The TOTP routes end to end: REST → gateway → identity, with codes from an authenticator's view. */
describe('TOTP over REST', () => {
  let platform: TestPlatform;
  let admin: Record<string, string>;
  let userCount = 0;

  beforeAll(async () => {
    platform = await startTestPlatform({ services: ['identity', 'billing', 'gateway'], overrides: { totpFailuresPerWindow: FAILURES_PER_WINDOW } });
    admin = (await loginAdmin(platform)).auth;
  });
  afterAll(() => platform?.stop());

  const rest = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => restCall(platform, method, path, body, headers);
  const bearer = (accessToken: string) => ({ authorization: `Bearer ${accessToken}` });
  const login = async (username: string) => (await rest('POST', '/auth/login', { username, password: PASSWORD })).json();

  /**
   * A new user with TOTP on. The setup is confirmed with the previous step's code (the server
   * takes one step back), so the current step is still free for a sign-in right after.
   */
  async function enrolled(): Promise<{ username: string; userId: string; accessToken: string; secret: string; recoveryCodes: string[] }> {
    const username = `totp-rest-${++userCount}`;
    const user = await createUserAndLogin(platform, admin, username, PASSWORD);
    const setup = await rest('POST', '/auth/totp/setup', undefined, user.auth);
    expect(setup.status).toBe(200);
    const { secret } = await setup.json();
    await awayFromStepBoundary();
    const confirmed = await rest('POST', '/auth/totp/verify-setup', { code: codeAt(secret, Date.now() - PERIOD_MS) }, user.auth);
    expect(confirmed.status).toBe(200);
    const { recoveryCodes } = await confirmed.json();
    return { username, userId: user.userId, accessToken: user.accessToken, secret, recoveryCodes };
  }

  async function challengeOf(username: string): Promise<string> {
    const answer = await login(username);
    expect(answer).toMatchObject({ mfaRequired: true, mfaChallenge: expect.any(String), accessToken: null, refreshToken: null, user: null });
    return answer.mfaChallenge;
  }

  it('sets up TOTP: secret, otpauth URL and QR code once, then ten recovery codes', async () => {
    const user = await createUserAndLogin(platform, admin, 'totp-rest-setup', PASSWORD);
    const setup = await rest('POST', '/auth/totp/setup', undefined, user.auth);
    expect(setup.status).toBe(200);
    const body = await setup.json();
    expect(body).toEqual({
      secret: expect.stringMatching(/^[A-Z2-7]{32}$/),
      otpauthUrl: expect.stringMatching(/^otpauth:\/\/totp\/[^:]+:totp-rest-setup\?/),
      qrCodeDataUrl: expect.stringMatching(/^data:image\/png;base64,/),
      expiresIn: 900,
    });
    const url = new URL(body.otpauthUrl);
    expect(Object.fromEntries(url.searchParams)).toEqual({ issuer: platform.config.totpIssuer, secret: body.secret, algorithm: 'SHA1', digits: '6', period: '30' });

    await awayFromStepBoundary();
    const confirmed = await rest('POST', '/auth/totp/verify-setup', { code: codeAt(body.secret, Date.now()) }, user.auth);
    expect(confirmed.status).toBe(200);
    const { enabled, recoveryCodes } = await confirmed.json();
    expect(enabled).toBe(true);
    expect(recoveryCodes).toHaveLength(10);

    const again = await rest('POST', '/auth/totp/setup', undefined, user.auth);
    expect(again.status).toBe(409);
    expect((await again.json()).error).toMatchObject({ code: 'CONFLICT', message: 'TOTP is already enabled; disable it first' });
  });

  it('signs in with a challenge and a code; the tokens work, and the same code is refused again', async () => {
    const user = await enrolled();
    const challenge = await challengeOf(user.username);
    await awayFromStepBoundary();
    const code = codeAt(user.secret, Date.now());
    const verified = await rest('POST', '/auth/totp/verify', { challenge, code });
    expect(verified.status).toBe(200);
    const tokens = await verified.json();
    expect(tokens).toMatchObject({ accessToken: expect.any(String), refreshToken: expect.any(String), tokenType: 'Bearer', user: { id: user.userId } });
    const profile = await rest('GET', '/auth/profile', undefined, bearer(tokens.accessToken));
    expect(profile.status).toBe(200);
    expect(await profile.json()).toMatchObject({ id: user.userId, totpEnabled: true });

    // A replay is refused whenever it arrives: its step is no newer than the last one used.
    const replay = await rest('POST', '/auth/totp/verify', { challenge: await challengeOf(user.username), code });
    expect(replay.status).toBe(401);
    expect((await replay.json()).error).toMatchObject({ code: 'UNAUTHENTICATED', requestId: expect.any(String) });
    // The spent challenge is gone too.
    expect((await rest('POST', '/auth/totp/verify', { challenge, code })).status).toBe(401);
  });

  it('takes a recovery code once', async () => {
    const user = await enrolled();
    const recoveryCode = user.recoveryCodes[0].toUpperCase();
    const first = await rest('POST', '/auth/totp/verify', { challenge: await challengeOf(user.username), recoveryCode });
    expect(first.status).toBe(200);
    expect((await first.json()).user.id).toBe(user.userId);
    const second = await rest('POST', '/auth/totp/verify', { challenge: await challengeOf(user.username), recoveryCode });
    expect(second.status).toBe(401);
  });

  it("does not let a second user open the first user's challenge with their own code", async () => {
    const [alice, bob] = [await enrolled(), await enrolled()];
    const challenge = await challengeOf(alice.username);
    await awayFromStepBoundary();
    const crossed = await rest('POST', '/auth/totp/verify', { challenge, code: codeAt(bob.secret, Date.now()) });
    expect(crossed.status).toBe(401);
    const own = await rest('POST', '/auth/totp/verify', { challenge, code: codeAt(alice.secret, Date.now()) });
    expect(own.status).toBe(200);
    expect((await own.json()).user.id).toBe(alice.userId);
  });

  it('disables TOTP only with a valid code; login then answers tokens again', async () => {
    const user = await enrolled();
    const wrong = await rest('POST', '/auth/totp/disable', { code: codeAt(user.secret, Date.now() + 10 * PERIOD_MS) }, bearer(user.accessToken));
    expect(wrong.status).toBe(400);
    expect((await wrong.json()).error.code).toBe('BAD_REQUEST');
    await awayFromStepBoundary();
    const disabled = await rest('POST', '/auth/totp/disable', { code: codeAt(user.secret, Date.now()) }, bearer(user.accessToken));
    expect(disabled.status).toBe(200);
    expect(await disabled.json()).toEqual({ enabled: false, enabledAt: null, recoveryCodesRemaining: 0 });
    const answer = await login(user.username);
    expect(answer).toMatchObject({ mfaRequired: false, mfaChallenge: null, accessToken: expect.any(String), user: { id: user.userId } });
  });

  it('refuses a right code with 429 and Retry-After once the failures are spent', async () => {
    const user = await enrolled();
    const challenge = await challengeOf(user.username);
    for (let i = 0; i < FAILURES_PER_WINDOW; i++) {
      const wrong = await rest('POST', '/auth/totp/verify', { challenge, code: codeAt(user.secret, Date.now() + (10 + i) * PERIOD_MS) });
      expect(wrong.status).toBe(401);
    }
    await awayFromStepBoundary();
    const limited = await rest('POST', '/auth/totp/verify', { challenge, code: codeAt(user.secret, Date.now()) });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await limited.json()).error.code).toBe('RATE_LIMITED');
  });

  it('answers bad input with 4xx in the platform error shape, never 500', async () => {
    const user = await createUserAndLogin(platform, admin, 'totp-rest-inputs', PASSWORD);
    const none = {};
    const cases: Array<[path: string, body: unknown, headers: Record<string, string>, status: number]> = [
      ['/auth/totp/verify', { code: '123456' }, none, 400],
      ['/auth/totp/verify', { challenge: 'x' }, none, 400],
      ['/auth/totp/verify', { challenge: 'x', code: '123456', recoveryCode: 'abcde-fghij' }, none, 400],
      ['/auth/totp/verify', { challenge: 'x', code: 123456 }, none, 400],
      ['/auth/totp/verify', { challenge: 'x', code: '1234567' }, none, 400],
      ['/auth/totp/verify', { challenge: 'x', recoveryCode: ['abcde-fghij'] }, none, 400],
      ['/auth/totp/verify', '{"challenge": ', none, 400],
      ['/auth/totp/verify', { challenge: 'x', code: '123456' }, none, 401],
      ['/auth/totp/verify-setup', { code: '123456' }, none, 401],
      ['/auth/totp/verify-setup', {}, user.auth, 400],
      ['/auth/totp/verify-setup', { code: '123456' }, user.auth, 409],
      ['/auth/totp/disable', { code: '12345' }, user.auth, 400],
      ['/auth/totp/disable', { code: '123456' }, user.auth, 409],
    ];
    for (const [path, body, headers, status] of cases) {
      const response = await rest('POST', path, body, headers);
      expect({ path, body, status: response.status }).toEqual({ path, body, status });
      expect((await response.json()).error).toMatchObject({ code: expect.any(String), message: expect.any(String), requestId: expect.any(String) });
    }
  });

  it('refuses to change TOTP with an API key (403)', async () => {
    const user = await createUserAndLogin(platform, admin, 'totp-rest-apikey', PASSWORD);
    const key = (await (await rest('POST', '/auth/api-keys', { name: 'ci' }, user.auth)).json()).key;
    const setup = await rest('POST', '/auth/totp/setup', undefined, { 'x-api-key': key });
    expect(setup.status).toBe(403);
    expect((await setup.json()).error.code).toBe('FORBIDDEN');
  });
});

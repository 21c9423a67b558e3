import type { RequestContext } from '../../../core/context';
import { decrypt, sha256 } from '../../../core/crypto';
import { RateLimitedError } from '../../../core/errors';
import type { Logger } from '../../../core/logger';
import type { Principal } from '../../../core/principal';
import { createRedis, type Redis } from '../../../core/redis';
import { AuthService } from '../auth/auth.service';
import { LoginThrottle } from '../auth/login-throttle';
import { RefreshTokenRepository } from '../auth/refresh-token.repository';
import { codeOf, startIdentityHarness, type IdentityHarness } from '../testing/identity-harness';
import { UserRepository } from '../users/user.repository';
import { WorkspaceRepository } from '../workspaces/workspace.repository';
import { MfaChallengeStore } from './mfa-challenge.store';
import { hashRecoveryCode } from './recovery-code';
import { codeForStep, stepAt } from './totp-code';
import { TotpThrottle } from './totp-throttle';
import { TotpRepository } from './totp.repository';
import { PENDING_SETUP_TTL_SECONDS, TotpService, totpAad } from './totp.service';

const PASSWORD = 'correct horse battery';
const STEP_MS = 30_000;
const FAILURES_PER_WINDOW = 4;

/**
 * The TOTP service against real PostgreSQL and Redis, on a clock the tests move: every test
 * starts 100 steps after the last one, 5 s into a step, so each runs on fresh time steps.
 */
describe('identity TOTP', () => {
  let h: IdentityHarness;
  let redis: Redis;
  let auth: AuthService;
  let totp: TotpService;
  let clock = Date.UTC(2026, 0, 1);
  const logLines: string[] = [];
  let userCount = 0;

  beforeAll(async () => {
    h = await startIdentityHarness({ totpFailuresPerWindow: FAILURES_PER_WINDOW, totpFailureWindowSeconds: 60 });
    redis = createRedis(h.runtime.redisUrl);
    const { config } = h;
    const dataSource = h.subgraph.dataSource;
    const logger = capturingLogger(logLines);
    const users = new UserRepository(dataSource);
    auth = new AuthService({ users, workspaces: new WorkspaceRepository(dataSource), refreshTokens: new RefreshTokenRepository(dataSource), throttle: new LoginThrottle(redis, config), config, logger });
    totp = new TotpService({
      totp: new TotpRepository(dataSource),
      users,
      sessions: auth,
      challenges: new MfaChallengeStore(redis, config),
      throttle: new TotpThrottle(redis, config),
      config,
      logger,
      now: () => clock,
    });
    auth.setMfaGate(totp);
  });
  beforeEach(() => atStep(stepAt(clock) + 100));
  afterAll(async () => {
    redis?.disconnect();
    await h?.stop();
  });

  /** Puts the clock 5 s into `step`. */
  const atStep = (step: number) => {
    clock = step * STEP_MS + 5_000;
  };
  const step = () => stepAt(clock);
  const ctxOf = (principal: Principal | null): RequestContext => ({ principal, requestId: 'req_totp', clientIp: '10.9.0.1' });
  const newUser = () => h.newUser(`totp-user-${++userCount}`);

  /** A new user with TOTP enabled at the current step (which that enrolment spends). */
  async function enrolled(): Promise<{ principal: Principal; secret: string; recoveryCodes: string[] }> {
    const principal = await newUser();
    const { secret } = await totp.setup(ctxOf(principal));
    const { recoveryCodes } = await totp.verifySetup(ctxOf(principal), { code: codeForStep(secret, step()) });
    return { principal, secret, recoveryCodes };
  }

  async function challengeOf(principal: Principal): Promise<string> {
    const result = await auth.login(ctxOf(null), { username: principal.username, password: PASSWORD });
    expect(result.mfaRequired).toBe(true);
    return result.mfaChallenge!;
  }

  const storedRow = async (userId: string) =>
    (await h.subgraph.dataSource.query(`SELECT * FROM "identity"."user_totp" WHERE "user_id" = $1`, [userId]))[0] as Record<string, any> | undefined;

  describe('enrolment', () => {
    it('answers the secret once, as an otpauth URL and a QR code, and stores it encrypted and bound to the user', async () => {
      const principal = await newUser();
      const setup = await totp.setup(ctxOf(principal));
      expect(setup.secret).toMatch(/^[A-Z2-7]{32}$/);
      expect(setup.otpauthUrl).toBe(
        `otpauth://totp/${encodeURIComponent(h.config.totpIssuer)}:${principal.username}?issuer=${encodeURIComponent(h.config.totpIssuer)}&secret=${setup.secret}&algorithm=SHA1&digits=6&period=30`,
      );
      expect(setup.qrCodeDataUrl).toMatch(/^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);
      expect(setup.expiresIn).toBe(PENDING_SETUP_TTL_SECONDS);

      const row = await storedRow(principal.userId);
      expect(row).toMatchObject({ secret_encrypted: null, enabled_at: null });
      expect(row!.pending_secret_encrypted).toMatch(/^v1\./);
      expect(JSON.stringify(row)).not.toContain(setup.secret);
      const key = h.config.secretsEncryptionKey;
      expect(decrypt(key, row!.pending_secret_encrypted, totpAad(principal.userId)).toString()).toBe(setup.secret);
      expect(() => decrypt(key, row!.pending_secret_encrypted, totpAad('usr_someoneelse'))).toThrow();

      expect(await totp.status(ctxOf(principal))).toEqual({ enabled: false, enabledAt: null, recoveryCodesRemaining: 0 });
    });

    it('replaces an earlier pending secret with a new setup', async () => {
      const principal = await newUser();
      const first = await totp.setup(ctxOf(principal));
      const second = await totp.setup(ctxOf(principal));
      expect(second.secret).not.toBe(first.secret);
      await expect(totp.verifySetup(ctxOf(principal), { code: codeForStep(first.secret, step()) })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
      await expect(totp.verifySetup(ctxOf(principal), { code: codeForStep(second.secret, step()) })).resolves.toMatchObject({ enabled: true });
    });

    it('refuses a wrong code (400), a malformed one, and a missing or expired setup (409)', async () => {
      const principal = await newUser();
      await expect(totp.verifySetup(ctxOf(principal), { code: '123456' })).rejects.toMatchObject({ code: 'CONFLICT' });
      const { secret } = await totp.setup(ctxOf(principal));
      await expect(totp.verifySetup(ctxOf(principal), { code: codeForStep(secret, step() + 1) })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
      await expect(totp.verifySetup(ctxOf(principal), { code: '1234567' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
      await expect(totp.verifySetup(ctxOf(principal), { code: 123456 as unknown as string })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
      clock += PENDING_SETUP_TTL_SECONDS * 1000 + 1000;
      await expect(totp.verifySetup(ctxOf(principal), { code: codeForStep(secret, step()) })).rejects.toMatchObject({ code: 'CONFLICT' });
      expect((await totp.status(ctxOf(principal))).enabled).toBe(false);
    });

    it('enables TOTP with ten hashed single-use recovery codes, and refuses a second setup (409)', async () => {
      const { principal, secret, recoveryCodes } = await enrolled();
      expect(recoveryCodes).toHaveLength(10);
      for (const code of recoveryCodes) expect(code).toMatch(/^[a-z2-7]{5}-[a-z2-7]{5}$/);

      const stored: Array<{ code_hash: string; used_at: Date | null }> = await h.subgraph.dataSource.query(
        `SELECT "code_hash", "used_at" FROM "identity"."totp_recovery_codes" WHERE "user_id" = $1 ORDER BY "code_hash"`,
        [principal.userId],
      );
      expect(stored.map((r) => r.code_hash)).toEqual(recoveryCodes.map((code) => hashRecoveryCode(principal.userId, code)).sort());
      expect(JSON.stringify(stored)).not.toMatch(new RegExp(recoveryCodes.map((c) => c.replace('-', '-?')).join('|')));

      const row = await storedRow(principal.userId);
      expect(row).toMatchObject({ pending_secret_encrypted: null, last_used_step: String(step()) });
      expect(JSON.stringify(row)).not.toContain(secret);
      expect(decrypt(h.config.secretsEncryptionKey, row!.secret_encrypted, totpAad(principal.userId)).toString()).toBe(secret);

      const status = await totp.status(ctxOf(principal));
      expect(status).toEqual({ enabled: true, enabledAt: expect.any(String), recoveryCodesRemaining: 10 });
      await expect(totp.setup(ctxOf(principal))).rejects.toMatchObject({ code: 'CONFLICT', message: 'TOTP is already enabled; disable it first' });
      await expect(totp.verifySetup(ctxOf(principal), { code: codeForStep(secret, step()) })).rejects.toMatchObject({ code: 'CONFLICT' });
    });

    it('never logs the secret or a recovery code', async () => {
      logLines.length = 0;
      const { principal, secret, recoveryCodes } = await enrolled();
      atStep(step() + 1);
      await totp.disable(ctxOf(principal), { code: codeForStep(secret, step()) });
      expect(logLines.some((line) => line.includes('totp enabled') && line.includes(principal.userId))).toBe(true);
      expect(logLines.some((line) => line.includes('totp disabled'))).toBe(true);
      for (const value of [secret, ...recoveryCodes]) expect(logLines.join('\n')).not.toContain(value);
    });
  });

  describe('sign-in', () => {
    it('answers a challenge instead of tokens for a TOTP user, and tokens right away for others', async () => {
      const { principal } = await enrolled();
      const result = await auth.login(ctxOf(null), { username: principal.username, password: PASSWORD });
      expect(result).toEqual({
        accessToken: null,
        refreshToken: null,
        tokenType: null,
        expiresIn: null,
        user: null,
        mfaRequired: true,
        mfaChallenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        mfaChallengeExpiresIn: h.config.mfaChallengeTtlSeconds,
      });
      // Redis holds only the challenge's hash, expiring with it.
      const key = `${h.config.redisPrefix}:mfa-challenge:${sha256(result.mfaChallenge!)}`;
      expect(await redis.get(key)).toBe(principal.userId);
      expect(await redis.ttl(key)).toBeGreaterThan(h.config.mfaChallengeTtlSeconds - 5);
      expect(await redis.keys(`*${result.mfaChallenge}*`)).toEqual([]);

      const plain = await newUser();
      const direct = await auth.login(ctxOf(null), { username: plain.username, password: PASSWORD });
      expect(direct).toMatchObject({ mfaRequired: false, mfaChallenge: null, accessToken: expect.any(String), user: { id: plain.userId } });
    });

    it('trades a challenge and a right code for a session, once', async () => {
      const { principal, secret } = await enrolled();
      atStep(step() + 1);
      const challenge = await challengeOf(principal);
      const session = await totp.verify(ctxOf(null), { challenge, code: codeForStep(secret, step()) });
      expect(session).toMatchObject({ accessToken: expect.any(String), refreshToken: expect.any(String), tokenType: 'Bearer', user: { id: principal.userId } });
      atStep(step() + 1);
      await expect(totp.verify(ctxOf(null), { challenge, code: codeForStep(secret, step()) })).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    });

    it('accepts the current and the previous step only, and never a step twice or after a newer one', async () => {
      const { principal, secret } = await enrolled();
      atStep(step() + 3);
      const verifyWith = async (code: string) => totp.verify(ctxOf(null), { challenge: await challengeOf(principal), code });
      const refused = { code: 'UNAUTHENTICATED', message: 'Invalid TOTP or recovery code' };

      await expect(verifyWith(codeForStep(secret, step() + 1))).rejects.toMatchObject(refused); // future
      await expect(verifyWith(codeForStep(secret, step() - 2))).rejects.toMatchObject(refused); // two back
      await expect(verifyWith(codeForStep(secret, step() - 1))).resolves.toMatchObject({ user: { id: principal.userId } }); // one back
      await expect(verifyWith(codeForStep(secret, step() - 1))).rejects.toMatchObject(refused); // replay
      await expect(verifyWith(codeForStep(secret, step()))).resolves.toMatchObject({ user: { id: principal.userId } }); // current
      await expect(verifyWith(codeForStep(secret, step() - 1))).rejects.toMatchObject(refused); // older than the last used
      await expect(verifyWith(codeForStep(secret, step()))).rejects.toMatchObject(refused); // replay
    });

    it('refuses the code spent confirming the setup', async () => {
      const { principal, secret } = await enrolled();
      const challenge = await challengeOf(principal);
      await expect(totp.verify(ctxOf(null), { challenge, code: codeForStep(secret, step()) })).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    });

    it('lets one of two concurrent sign-ins with the same code through', async () => {
      const { principal, secret } = await enrolled();
      atStep(step() + 1);
      const code = codeForStep(secret, step());
      const [a, b] = [await challengeOf(principal), await challengeOf(principal)];
      const results = await Promise.allSettled([totp.verify(ctxOf(null), { challenge: a, code }), totp.verify(ctxOf(null), { challenge: b, code })]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    });

    it('ends a challenge after one success even when two right factors race on it', async () => {
      const { principal, secret, recoveryCodes } = await enrolled();
      atStep(step() + 1);
      const challenge = await challengeOf(principal);
      const results = await Promise.allSettled([
        totp.verify(ctxOf(null), { challenge, code: codeForStep(secret, step()) }),
        totp.verify(ctxOf(null), { challenge, recoveryCode: recoveryCodes[0] }),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    });

    it('refuses unknown, expired and other users’ challenges (401) and keeps a challenge after a wrong code', async () => {
      const alice = await enrolled();
      const bob = await enrolled();
      atStep(step() + 1);
      await expect(totp.verify(ctxOf(null), { challenge: 'not-a-challenge', code: codeForStep(alice.secret, step()) })).rejects.toMatchObject({
        code: 'UNAUTHENTICATED',
        message: 'Invalid or expired MFA challenge',
      });

      const expiring = await challengeOf(alice.principal);
      await redis.pexpire(`${h.config.redisPrefix}:mfa-challenge:${sha256(expiring)}`, 1);
      await new Promise((resolve) => setTimeout(resolve, 20));
      await expect(totp.verify(ctxOf(null), { challenge: expiring, code: codeForStep(alice.secret, step()) })).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });

      // Bob's own right code does not open Alice's challenge, which stays usable for her.
      const aliceChallenge = await challengeOf(alice.principal);
      await expect(totp.verify(ctxOf(null), { challenge: aliceChallenge, code: codeForStep(bob.secret, step()) })).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
      await expect(totp.verify(ctxOf(null), { challenge: aliceChallenge, code: codeForStep(alice.secret, step()) })).resolves.toMatchObject({ user: { id: alice.principal.userId } });
    });

    it('takes each recovery code once, in any case and hyphenation, even when two requests race', async () => {
      const { principal, recoveryCodes } = await enrolled();
      const typed = recoveryCodes[0].toUpperCase().replace('-', '');
      const session = await totp.verify(ctxOf(null), { challenge: await challengeOf(principal), recoveryCode: typed });
      expect(session.user.id).toBe(principal.userId);
      await expect(totp.verify(ctxOf(null), { challenge: await challengeOf(principal), recoveryCode: recoveryCodes[0] })).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
      expect((await totp.status(ctxOf(principal))).recoveryCodesRemaining).toBe(9);

      const [a, b] = [await challengeOf(principal), await challengeOf(principal)];
      const results = await Promise.allSettled([
        totp.verify(ctxOf(null), { challenge: a, recoveryCode: recoveryCodes[1] }),
        totp.verify(ctxOf(null), { challenge: b, recoveryCode: recoveryCodes[1] }),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect((await totp.status(ctxOf(principal))).recoveryCodesRemaining).toBe(8);
    });

    it('refuses malformed input (400) before looking at the challenge', async () => {
      const challenge = 'whatever';
      const malformed = [{ code: null, recoveryCode: null }, { code: '123456', recoveryCode: 'abcde-fghij' }, { code: '1234567' }, { code: '12345a' }, { recoveryCode: 'short' }];
      for (const input of malformed) {
        await expect(totp.verify(ctxOf(null), { challenge, ...input })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
      }
    });
  });

  describe('throttling', () => {
    it('refuses even a right code with RATE_LIMITED once the failures are spent; a success clears them', async () => {
      const { principal, secret } = await enrolled();
      atStep(step() + 1);
      const challenge = await challengeOf(principal);
      const wrong = () => totp.verify(ctxOf(null), { challenge, code: codeForStep(secret, step() + 5) });
      for (let i = 0; i < FAILURES_PER_WINDOW - 1; i++) await expect(wrong()).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
      await expect(totp.verify(ctxOf(null), { challenge: await challengeOf(principal), code: codeForStep(secret, step()) })).resolves.toBeDefined();

      atStep(step() + 1);
      for (let i = 0; i < FAILURES_PER_WINDOW; i++) await expect(wrong()).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
      const limited = await totp.verify(ctxOf(null), { challenge, code: codeForStep(secret, step()) }).then(
        () => null,
        (err: unknown) => err as RateLimitedError,
      );
      expect(limited).toBeInstanceOf(RateLimitedError);
      expect(limited!.retryAfterSeconds).toBeGreaterThan(0);
      expect(limited!.retryAfterSeconds).toBeLessThanOrEqual(60);
      // Recovery codes and disabling are behind the same counter.
      await expect(totp.disable(ctxOf(principal), { code: codeForStep(secret, step()) })).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    });

    it('counts concurrent guesses exactly, and per user', async () => {
      const { principal, secret } = await enrolled();
      const other = await enrolled();
      atStep(step() + 1);
      const challenge = await challengeOf(principal);
      const guesses = Array.from({ length: 10 }, (_, i) => totp.verify(ctxOf(null), { challenge, code: codeForStep(secret, step() + 2 + i) }));
      const codes = (await Promise.allSettled(guesses)).map((r) => (r.status === 'rejected' ? (r.reason as { code: string }).code : 'OK'));
      expect(codes.filter((c) => c === 'UNAUTHENTICATED')).toHaveLength(FAILURES_PER_WINDOW);
      expect(codes.filter((c) => c === 'RATE_LIMITED')).toHaveLength(10 - FAILURES_PER_WINDOW);
      await expect(totp.verify(ctxOf(null), { challenge: await challengeOf(other.principal), code: codeForStep(other.secret, step()) })).resolves.toBeDefined();
    });
  });

  describe('disabling', () => {
    it('needs a right code or recovery code, then deletes the secret and recovery codes', async () => {
      const { principal, secret } = await enrolled();
      atStep(step() + 1);
      await expect(totp.disable(ctxOf(principal), { code: codeForStep(secret, step() + 1) })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
      await expect(totp.disable(ctxOf(principal), { code: '123456', recoveryCode: 'abcde-fghij' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
      await expect(totp.disable(ctxOf(principal), {})).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });

      expect(await totp.disable(ctxOf(principal), { code: codeForStep(secret, step()) })).toEqual({ enabled: false, enabledAt: null, recoveryCodesRemaining: 0 });
      expect(await storedRow(principal.userId)).toBeUndefined();
      const codes = await h.subgraph.dataSource.query(`SELECT 1 FROM "identity"."totp_recovery_codes" WHERE "user_id" = $1`, [principal.userId]);
      expect(codes).toEqual([]);
      const login = await auth.login(ctxOf(null), { username: principal.username, password: PASSWORD });
      expect(login).toMatchObject({ mfaRequired: false, accessToken: expect.any(String) });
      await expect(totp.disable(ctxOf(principal), { code: codeForStep(secret, step()) })).rejects.toMatchObject({ code: 'CONFLICT' });
    });

    it('accepts a recovery code', async () => {
      const { principal, recoveryCodes } = await enrolled();
      await expect(totp.disable(ctxOf(principal), { recoveryCode: recoveryCodes[3] })).resolves.toMatchObject({ enabled: false });
    });
  });

  describe('over GraphQL', () => {
    const SETUP = `mutation { setupTotp { secret otpauthUrl qrCodeDataUrl expiresIn } }`;
    const VERIFY_SETUP = `mutation($code: String!) { verifyTotpSetup(code: $code) { enabled recoveryCodes } }`;
    const DISABLE = `mutation($code: String) { disableTotp(code: $code) { enabled enabledAt recoveryCodesRemaining } }`;
    const STATUS = `{ totpStatus { enabled enabledAt recoveryCodesRemaining } }`;
    const VERIFY = `mutation($challenge: String!, $code: String, $recoveryCode: String) {
      verifyTotp(challenge: $challenge, code: $code, recoveryCode: $recoveryCode) { accessToken user { id totpEnabled } }
    }`;

    it('serves setup and status to a signed-in session, and refuses API keys (403) and anonymous callers (401)', async () => {
      const principal = await newUser();
      const setup = await h.gql(SETUP, {}, { principal });
      expect(setup.errors).toBeUndefined();
      expect(setup.data!.setupTotp).toMatchObject({ secret: expect.any(String), expiresIn: PENDING_SETUP_TTL_SECONDS });
      expect((await h.gql(STATUS, {}, { principal })).data!.totpStatus).toEqual({ enabled: false, enabledAt: null, recoveryCodesRemaining: 0 });

      const viaKey: Principal = { ...principal, via: 'api_key', apiKeyId: 'key_test' };
      expect(codeOf(await h.gql(SETUP, {}, { principal: viaKey }))).toBe('FORBIDDEN');
      expect(codeOf(await h.gql(VERIFY_SETUP, { code: '123456' }, { principal: viaKey }))).toBe('FORBIDDEN');
      expect(codeOf(await h.gql(DISABLE, { code: '123456' }, { principal: viaKey }))).toBe('FORBIDDEN');
      expect(codeOf(await h.gql(SETUP))).toBe('UNAUTHENTICATED');
      expect(codeOf(await h.gql(STATUS))).toBe('UNAUTHENTICATED');
    });

    it('answers verifyTotp to anonymous callers, with the platform error codes', async () => {
      expect(codeOf(await h.gql(VERIFY, { challenge: 'nope', code: '123456' }))).toBe('UNAUTHENTICATED');
      expect(codeOf(await h.gql(VERIFY, { challenge: 'nope' }))).toBe('VALIDATION_FAILED');
      expect(codeOf(await h.gql(VERIFY, { challenge: 'nope', code: '1234567' }))).toBe('VALIDATION_FAILED');
    });
  });
});

/** A logger keeping every line it is given, to check what would have been written. */
function capturingLogger(lines: string[]): Logger {
  const write = (level: string) => (message: string, fields?: Record<string, unknown>) => void lines.push(JSON.stringify({ level, message, ...fields }));
  const logger: Logger = { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error'), child: () => logger };
  return logger;
}

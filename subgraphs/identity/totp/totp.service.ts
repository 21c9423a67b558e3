import { toDataURL } from 'qrcode';
import { requireUser } from '../../../core/access';
import type { PlatformConfig } from '../../../core/config';
import type { RequestContext } from '../../../core/context';
import { decrypt, encrypt } from '../../../core/crypto';
import { BadRequestError, ConflictError, ForbiddenError, UnauthenticatedError, ValidationError } from '../../../core/errors';
import type { Logger } from '../../../core/logger';
import type { Principal } from '../../../core/principal';
import type { AuthService, MfaGate } from '../auth/auth.service';
import type { AuthPayload } from '../auth/auth.types';
import type { UserEntity } from '../users/user.entity';
import type { UserRepository } from '../users/user.repository';
import type { MfaChallenge, MfaChallengeStore } from './mfa-challenge.store';
import { hashRecoveryCode, isRecoveryCodeFormat, newRecoveryCodes } from './recovery-code';
import { isTotpCodeFormat, matchingStep, newTotpSecret, otpauthUrl } from './totp-code';
import type { TotpThrottle } from './totp-throttle';
import { toTotpStatus } from './totp.mapper';
import type { TotpRepository } from './totp.repository';
import type { TotpRecoveryCodes, TotpSetup, TotpStatus } from './totp.types';

/** A setup not confirmed with a code within this many seconds has to be started again. */
export const PENDING_SETUP_TTL_SECONDS = 15 * 60;
const ALREADY_ENABLED = 'TOTP is already enabled; disable it first';
const INVALID_CHALLENGE = 'Invalid or expired MFA challenge';
const INVALID_FACTOR = 'Invalid TOTP or recovery code';

/** The second factor a request presents. */
type Factor = { kind: 'code'; code: string } | { kind: 'recovery'; code: string };

interface FactorInput {
  code?: string | null;
  recoveryCode?: string | null;
}

export interface TotpServiceDeps {
  totp: TotpRepository;
  users: UserRepository;
  /** Issues the session once the second factor is met. */
  sessions: Pick<AuthService, 'issueSession'>;
  challenges: MfaChallengeStore;
  throttle: TotpThrottle;
  config: PlatformConfig;
  logger: Logger;
  /** Milliseconds since the epoch, which selects the valid time steps; tests pin it. @defaultValue Date.now */
  now?: () => number;
}

/**
 * TOTP (RFC 6238) as a second sign-in factor: enrolment with a confirming code and recovery
 * codes, the sign-in step after the password (as the auth service's MfaGate), and removal.
 * Every accepted code is spent (its time step), every recovery code once, and every attempt
 * is throttled per user.
 */
export class TotpService implements MfaGate {
  private readonly now: () => number;

  constructor(private readonly deps: TotpServiceDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** MfaGate: a sign-in challenge for a user with TOTP enabled, else null (tokens right away). */
  /** For the `User.totpEnabled` loader: whether each user has TOTP on, in order. */
  async enabledForUsers(userIds: readonly string[]): Promise<boolean[]> {
    const enabled = await this.deps.totp.enabledAmong(userIds);
    return userIds.map((id) => enabled.has(id));
  }

  async challengeFor(user: UserEntity): Promise<MfaChallenge | null> {
    const row = await this.deps.totp.find(user.id);
    return row?.enabledAt ? this.deps.challenges.issue(user.id) : null;
  }

  /** The caller's own TOTP status. */
  async status(ctx: RequestContext): Promise<TotpStatus> {
    const { userId } = requireUser(ctx);
    const [row, remaining] = await Promise.all([this.deps.totp.find(userId), this.deps.totp.countUnusedRecoveryCodes(userId)]);
    return toTotpStatus(row, remaining);
  }

  /**
   * Starts enrolment: a new secret, stored encrypted as pending (replacing an earlier pending
   * one) until verifySetup confirms it. The answer is the only time the secret is shown.
   */
  async setup(ctx: RequestContext): Promise<TotpSetup> {
    const principal = requireSession(ctx);
    const secret = newTotpSecret();
    const expiresAt = new Date(this.now() + PENDING_SETUP_TTL_SECONDS * 1000);
    if (!(await this.deps.totp.savePending(principal.userId, this.seal(principal.userId, secret), expiresAt))) throw new ConflictError(ALREADY_ENABLED);
    const url = otpauthUrl(this.deps.config.totpIssuer, principal.username, secret);
    return { secret, otpauthUrl: url, qrCodeDataUrl: await toDataURL(url), expiresIn: PENDING_SETUP_TTL_SECONDS };
  }

  /** Confirms the pending secret with a code from it: TOTP is on, and recovery codes are answered once. */
  async verifySetup(ctx: RequestContext, input: { code: string }): Promise<TotpRecoveryCodes> {
    const { userId } = requireSession(ctx);
    const code = parseCode(input.code);
    const row = await this.deps.totp.find(userId);
    if (row?.enabledAt) throw new ConflictError(ALREADY_ENABLED);
    const pending = row?.pendingSecretEncrypted;
    if (!pending || !row.pendingExpiresAt || row.pendingExpiresAt.getTime() <= this.now()) {
      throw new ConflictError('No TOTP setup is pending; start one with setupTotp');
    }
    await this.deps.throttle.takeAttempt(userId);
    const step = matchingStep(this.unseal(userId, pending), code, this.now());
    if (step === null) throw new BadRequestError('Invalid TOTP code', { field: 'code' });
    const recoveryCodes = newRecoveryCodes();
    const hashes = recoveryCodes.map((recoveryCode) => hashRecoveryCode(userId, recoveryCode));
    // The confirming code's step is recorded, so the same code cannot also sign in.
    if (!(await this.deps.totp.enable(userId, pending, step, hashes))) throw new ConflictError('The TOTP setup changed meanwhile; start it again');
    await this.deps.throttle.clear(userId);
    this.deps.logger.info('totp enabled', { userId });
    return { enabled: true, recoveryCodes };
  }

  /**
   * Public: the sign-in step after the password. A right code or recovery code spends the
   * challenge and answers the session; a wrong one leaves the challenge for another try
   * (until it expires or the throttle stops the user).
   */
  async verify(_ctx: RequestContext, input: FactorInput & { challenge: string }): Promise<AuthPayload> {
    const factor = parseFactor(input);
    const challenge = typeof input.challenge === 'string' ? input.challenge : '';
    const userId = challenge ? await this.deps.challenges.userOf(challenge) : null;
    if (!userId) throw new UnauthenticatedError(INVALID_CHALLENGE);
    const [user, row] = await Promise.all([this.deps.users.findById(userId), this.deps.totp.find(userId)]);
    if (!user || user.disabledAt || !row?.secretEncrypted) throw new UnauthenticatedError(INVALID_CHALLENGE);
    if (!(await this.accept(userId, row.secretEncrypted, factor))) throw new UnauthenticatedError(INVALID_FACTOR);
    // Of two verifications of one challenge (say a code and a recovery code), one gets it.
    if ((await this.deps.challenges.consume(challenge)) !== userId) throw new UnauthenticatedError(INVALID_CHALLENGE);
    return this.deps.sessions.issueSession(user);
  }

  /** Turns TOTP off, given a current code or a recovery code; secret and recovery codes are deleted. */
  async disable(ctx: RequestContext, input: FactorInput): Promise<TotpStatus> {
    const { userId } = requireSession(ctx);
    const factor = parseFactor(input);
    const row = await this.deps.totp.find(userId);
    if (!row?.secretEncrypted) throw new ConflictError('TOTP is not enabled');
    if (!(await this.accept(userId, row.secretEncrypted, factor))) throw new BadRequestError(INVALID_FACTOR);
    await this.deps.totp.remove(userId);
    this.deps.logger.info('totp disabled', { userId, factor: factor.kind });
    return toTotpStatus(null, 0);
  }

  /** Checks a factor under the throttle and spends it (a code's time step, a recovery code) when right. */
  private async accept(userId: string, secretEncrypted: string, factor: Factor): Promise<boolean> {
    await this.deps.throttle.takeAttempt(userId);
    const accepted =
      factor.kind === 'code'
        ? await this.acceptCode(userId, secretEncrypted, factor.code)
        : await this.deps.totp.consumeRecoveryCode(userId, hashRecoveryCode(userId, factor.code));
    if (accepted) await this.deps.throttle.clear(userId);
    return accepted;
  }

  private async acceptCode(userId: string, secretEncrypted: string, code: string): Promise<boolean> {
    const step = matchingStep(this.unseal(userId, secretEncrypted), code, this.now());
    return step !== null && (await this.deps.totp.consumeStep(userId, step));
  }

  /** Encrypts a secret bound to its user: a ciphertext copied onto another row does not decrypt. */
  private seal(userId: string, secret: string): string {
    return encrypt(this.deps.config.secretsEncryptionKey, secret, totpAad(userId));
  }

  private unseal(userId: string, sealed: string): string {
    return decrypt(this.deps.config.secretsEncryptionKey, sealed, totpAad(userId)).toString('utf8');
  }
}

/** AAD of a user's TOTP secrets: the user id, with a purpose label so no other record's ciphertext fits. */
export function totpAad(userId: string): string {
  return `totp:${userId}`;
}

/** Only a signed-in session may change the second factor: a leaked API key must not be able to replace or remove it. */
function requireSession(ctx: RequestContext): Principal {
  const principal = requireUser(ctx);
  if (principal.via === 'api_key') throw new ForbiddenError('TOTP can be changed only in a signed-in session, not with an API key');
  return principal;
}

/** Six digits; spaces are dropped, as apps show codes as "123 456". */
function parseCode(value: unknown): string {
  const code = typeof value === 'string' ? value.replace(/\s/g, '') : '';
  if (!isTotpCodeFormat(code)) throw new ValidationError('code must be 6 digits', { field: 'code' });
  return code;
}

/** Exactly one of a code and a recovery code. */
function parseFactor(input: FactorInput): Factor {
  const given = (value: unknown) => value !== undefined && value !== null;
  if (given(input.code) === given(input.recoveryCode)) {
    throw new ValidationError('Send exactly one of code and recoveryCode', { fields: ['code', 'recoveryCode'] });
  }
  if (given(input.code)) return { kind: 'code', code: parseCode(input.code) };
  const recoveryCode = input.recoveryCode;
  if (typeof recoveryCode !== 'string' || !isRecoveryCodeFormat(recoveryCode)) {
    throw new ValidationError('recoveryCode must look like xxxxx-xxxxx', { field: 'recoveryCode' });
  }
  return { kind: 'recovery', code: recoveryCode };
}

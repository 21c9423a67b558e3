import type { PlatformConfig } from '../../../core/config';
import type { RequestContext } from '../../../core/context';
import { safeEqual, sha256 } from '../../../core/crypto';
import { UnauthenticatedError } from '../../../core/errors';
import { newId } from '../../../core/ids';
import type { Logger } from '../../../core/logger';
import { signAccessToken } from '../../../core/tokens';
import type { UserEntity } from '../users/user.entity';
import { toUser } from '../users/user.mapper';
import { verifyAgainstDummy, verifyPassword } from '../users/password';
import type { UserRepository } from '../users/user.repository';
import { toWorkspaceMembership } from '../workspaces/workspace.mapper';
import type { WorkspaceRepository } from '../workspaces/workspace.repository';
import type { AuthPayload, LoginResult } from './auth.types';
import type { LoginThrottle } from './login-throttle';
import { formatRefreshToken, newRefreshSecret, parseRefreshToken } from './refresh-token.format';
import type { RefreshTokenRepository } from './refresh-token.repository';

/** Id prefix of a refresh-token family (all tokens descended from one login). */
const FAMILY_PREFIX = 'rtf';
/** Unknown user and wrong password answer alike, so usernames cannot be probed. */
const INVALID_CREDENTIALS = 'Invalid username or password';
const INVALID_REFRESH = 'Invalid or expired refresh token';
/** Longer inputs cannot be valid credentials; refusing them early keeps hashing bounded. */
const MAX_USERNAME_LENGTH = 64;
const MAX_PASSWORD_LENGTH = 256;

/**
 * The second-factor step of sign-in. For a user who has one enabled it answers a short-lived,
 * single-use challenge (and no tokens are issued until the challenge is met); otherwise null.
 */
export interface MfaGate {
  challengeFor(user: UserEntity): Promise<{ challenge: string; expiresIn: number } | null>;
}

export interface AuthServiceDeps {
  users: UserRepository;
  workspaces: WorkspaceRepository;
  refreshTokens: RefreshTokenRepository;
  throttle: LoginThrottle;
  config: PlatformConfig;
  logger: Logger;
  /** Set by the TOTP service once built (the two depend on each other). */
  mfa?: MfaGate;
}

type RefreshOutcome = { kind: 'invalid' } | { kind: 'reused'; userId: string; familyId: string } | { kind: 'rotated'; userId: string; familyId: string; token: string };

export class AuthService {
  constructor(private readonly deps: AuthServiceDeps) {}

  /** Public. Throttled per username and per client address; only failures count. */
  async login(ctx: RequestContext, input: { username: string; password: string }): Promise<LoginResult> {
    const { users, throttle } = this.deps;
    const username = typeof input.username === 'string' ? input.username : '';
    const password = typeof input.password === 'string' ? input.password : '';
    const address = ctx.clientIp || 'unknown';
    await throttle.check(username, address);
    const plausible = username.length > 0 && username.length <= MAX_USERNAME_LENGTH && password.length <= MAX_PASSWORD_LENGTH;
    const user = plausible ? await users.findByUsername(username) : null;
    const verified = user && !user.disabledAt ? await verifyPassword(user.passwordHash, password) : plausible && (await verifyAgainstDummy(password));
    if (!user || !verified) {
      await throttle.recordFailure(username, address);
      throw new UnauthenticatedError(INVALID_CREDENTIALS);
    }
    await throttle.recordSuccess(username);
    return this.completeLogin(user);
  }

  /**
   * The end of every first-factor sign-in (password, identity provider): a challenge when the
   * user has a second factor, else a new session.
   */
  async completeLogin(user: UserEntity): Promise<LoginResult> {
    const challenge = await this.deps.mfa?.challengeFor(user);
    if (challenge) {
      return { accessToken: null, refreshToken: null, tokenType: null, expiresIn: null, user: null, mfaRequired: true, mfaChallenge: challenge.challenge, mfaChallengeExpiresIn: challenge.expiresIn };
    }
    return { ...(await this.issueSession(user)), mfaRequired: false, mfaChallenge: null, mfaChallengeExpiresIn: null };
  }

  /** A new session (refresh-token family) for a user whose every factor has been checked. */
  async issueSession(user: UserEntity): Promise<AuthPayload> {
    const familyId = newId(FAMILY_PREFIX);
    const secret = newRefreshSecret();
    const row = await this.deps.refreshTokens.insert({ userId: user.id, familyId, secretHash: sha256(secret), expiresAt: this.refreshExpiry() });
    return this.payload(user, familyId, formatRefreshToken(row.id, secret));
  }

  /** Lets the TOTP service gate sign-in (it is built after this service). */
  setMfaGate(gate: MfaGate): void {
    this.deps.mfa = gate;
  }

  /**
   * Public. Rotates a refresh token: the presented one is spent and a new one of the same family
   * is answered. Presenting a spent or revoked token again revokes the whole family (a copy of
   * it is in someone else's hands). The row is locked, so of two concurrent refreshes of one
   * token exactly one succeeds; the other counts as a reuse.
   */
  async refresh(_ctx: RequestContext, input: { refreshToken: string }): Promise<AuthPayload> {
    const parsed = parseRefreshToken(input.refreshToken);
    if (!parsed) throw new UnauthenticatedError(INVALID_REFRESH);
    const outcome = await this.deps.refreshTokens.withLockedToken<RefreshOutcome>(parsed.id, async (locked) => {
      const { token } = locked;
      if (!safeEqual(token.secretHash, sha256(parsed.secret))) return { kind: 'invalid' };
      if (token.rotatedAt || token.revokedAt) {
        await locked.revokeFamily();
        return { kind: 'reused', userId: token.userId, familyId: token.familyId };
      }
      if (token.expiresAt.getTime() <= Date.now()) return { kind: 'invalid' };
      await locked.markRotated();
      const secret = newRefreshSecret();
      const next = await locked.issueNext({ userId: token.userId, familyId: token.familyId, secretHash: sha256(secret), expiresAt: this.refreshExpiry() });
      return { kind: 'rotated', userId: token.userId, familyId: token.familyId, token: formatRefreshToken(next.id, secret) };
    });
    if (!outcome || outcome.kind === 'invalid') throw new UnauthenticatedError(INVALID_REFRESH);
    if (outcome.kind === 'reused') {
      this.deps.logger.warn('refresh token reused; family revoked', { userId: outcome.userId, familyId: outcome.familyId });
      throw new UnauthenticatedError('Refresh token was already used; sign in again');
    }
    const user = await this.deps.users.findById(outcome.userId);
    if (!user || user.disabledAt) {
      await this.deps.refreshTokens.revokeFamily(outcome.familyId);
      throw new UnauthenticatedError(INVALID_REFRESH);
    }
    return this.payload(user, outcome.familyId, outcome.token);
  }

  /** Public. Revokes the token's whole family; false when the token is not a valid one. */
  async logout(_ctx: RequestContext, input: { refreshToken: string }): Promise<boolean> {
    const parsed = parseRefreshToken(input.refreshToken);
    if (!parsed) return false;
    const token = await this.deps.refreshTokens.findById(parsed.id);
    if (!token || !safeEqual(token.secretHash, sha256(parsed.secret))) return false;
    await this.deps.refreshTokens.revokeFamily(token.familyId);
    return true;
  }

  private refreshExpiry(): Date {
    return new Date(Date.now() + this.deps.config.refreshTokenTtlSeconds * 1000);
  }

  private async payload(user: UserEntity, familyId: string, refreshToken: string): Promise<AuthPayload> {
    const { config, workspaces } = this.deps;
    const [accessToken, memberships] = await Promise.all([
      signAccessToken(config.jwtSecret, { sub: user.id, fam: familyId }, config.accessTokenTtlSeconds),
      workspaces.membershipsOfUsers([user.id]),
    ]);
    return {
      accessToken,
      refreshToken,
      tokenType: 'Bearer',
      expiresIn: config.accessTokenTtlSeconds,
      user: { ...toUser(user, memberships.map(toWorkspaceMembership)), signingIn: true },
    };
  }
}

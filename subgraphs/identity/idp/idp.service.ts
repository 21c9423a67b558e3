import { IDP_NAMES, type IdpName, type PlatformConfig } from '../../../core/config';
import type { RequestContext } from '../../../core/context';
import { randomToken, safeEqual, sha256 } from '../../../core/crypto';
import { BadRequestError, ConflictError, ForbiddenError, UnauthenticatedError } from '../../../core/errors';
import type { Logger } from '../../../core/logger';
import { newAuthorizationSecrets } from '../../../core/oauth-client';
import type { LoginResult } from '../auth/auth.types';
import { hashPassword } from '../users/password';
import type { UserEntity } from '../users/user.entity';
import type { UserRepository } from '../users/user.repository';
import type { IdpFlowStore } from './idp-flow.store';
import type { ProviderProfile, ProviderSignIn } from './provider-sign-in';
import { isUniqueViolation, type UserIdentityRepository } from './user-identity.repository';

/** The end of every sign-in: tokens, or the MFA challenge of a user with a second factor. */
export interface LoginCompleter {
  completeLogin(user: UserEntity): Promise<LoginResult>;
}

export interface IdpServiceDeps {
  users: UserRepository;
  identities: UserIdentityRepository;
  flows: IdpFlowStore;
  providers: ProviderSignIn;
  auth: LoginCompleter;
  config: Pick<PlatformConfig, 'consoleUrl' | 'publicUrl'>;
  logger: Logger;
}

export interface StartSignInInput {
  provider: IdpName;
  /** `<edge>/v1/auth/<provider>/callback`, as the gateway computed it. */
  redirectUri: string;
  /** Console path to land on afterwards; absent: `/`. */
  returnTo?: string;
}

export interface StartSignInResult {
  authorizationUrl: string;
  /** Also inside authorizationUrl; answered for logs and tests. */
  state: string;
  /** Random value the gateway sets as the browser-binding cookie; only its sha256 is kept. */
  binding: string;
}

export interface FinishSignInInput {
  provider: IdpName;
  /** The callback URL the browser requested, query included. */
  callbackUrl: string;
  /** The browser-binding cookie, if the browser sent one. */
  binding?: string | null;
}

const INVALID_STATE = 'Sign-in state is invalid or expired; start the sign-in again';
const INVALID_HANDOFF = 'Sign-in handoff code is invalid, expired or already used';
const MAX_RETURN_TO_LENGTH = 2048;
/** Attempts at resolving a user while concurrent sign-ins race on the same rows. */
const RESOLVE_ATTEMPTS = 3;

/**
 * Browser sign-in through an identity provider (authorization code + PKCE, state, nonce).
 *
 * 1. `start`: a pending sign-in (nonce, PKCE verifier, redirect URI, return path, hash of a
 *    browser-binding value) is kept in Redis under its state for oauthStateTtlSeconds; the
 *    gateway redirects to the provider and sets the binding value as a cookie.
 * 2. `finish` (the provider's callback): the state is taken (once), the binding cookie must
 *    match (the flow ends in the browser that started it: login CSRF), the code is exchanged
 *    and the answer verified, the user found, linked or created, and a one-time handoff code
 *    answered in a redirect to the console, in the URL fragment (never sent to a server).
 * 3. `exchangeHandoff`: the console trades the code (once, within a minute) for what a password
 *    login answers: tokens, or the MFA challenge of a user with a second factor.
 *
 * Users: an identity seen before is its user. Otherwise a provider-verified email of an
 * existing user links to that user. Otherwise a new user is created (with a personal workspace,
 * an unusable password, and the email only when verified). An unverified email never links.
 */
export class IdpService {
  constructor(private readonly deps: IdpServiceDeps) {}

  /** Internal (the gateway's GET /v1/auth/<provider>). */
  async start(input: StartSignInInput): Promise<StartSignInResult> {
    const { providers, flows } = this.deps;
    const provider = checkProvider(input.provider);
    providers.protocolOf(provider); // 503 before anything else when not configured
    const returnTo = checkReturnTo(input.returnTo);
    const redirectUri = checkRedirectUri(input.redirectUri);
    const { state, nonce, codeVerifier, codeChallenge } = newAuthorizationSecrets();
    const binding = randomToken(32);
    const authorizationUrl = await providers.authorizationUrl(provider, { state, nonce, codeChallenge, redirectUri });
    await flows.saveState(state, { provider, nonce, codeVerifier, redirectUri, returnTo, bindingHash: sha256(binding) });
    return { authorizationUrl, state, binding };
  }

  /** Internal (the gateway's GET /v1/auth/<provider>/callback): where to send the browser. */
  async finish(input: FinishSignInInput): Promise<{ redirectTo: string }> {
    const { providers, flows } = this.deps;
    const provider = checkProvider(input.provider);
    providers.protocolOf(provider);
    const callback = parseCallbackUrl(input.callbackUrl);
    const state = callback.searchParams.get('state');
    // Taken first, whatever follows: a state is spent by its first callback, good or bad.
    const pending = state ? await flows.takeState(state) : null;
    const providerError = callback.searchParams.get('error');
    if (providerError) {
      const description = callback.searchParams.get('error_description');
      throw new BadRequestError(`Identity provider ${provider} did not sign you in (${providerError}${description ? `: ${description.slice(0, 200)}` : ''})`, {
        provider,
        error: providerError.slice(0, 100),
      });
    }
    if (!state || !pending || pending.provider !== provider) throw new BadRequestError(INVALID_STATE);
    if (typeof input.binding !== 'string' || !safeEqual(sha256(input.binding), pending.bindingHash)) {
      throw new BadRequestError('This sign-in was started in another browser or its cookie is missing; start the sign-in again');
    }
    const profile = await providers.profileFromCallback(provider, input.callbackUrl, { state, nonce: pending.nonce, codeVerifier: pending.codeVerifier, redirectUri: pending.redirectUri });
    const user = await this.resolveUser(provider, profile);
    const code = randomToken(32);
    await flows.saveHandoff(code, { userId: user.id, provider });
    this.deps.logger.info('identity-provider sign-in', { provider, userId: user.id });
    return { redirectTo: `${this.consoleBase(pending.redirectUri, provider)}${pending.returnTo}#handoff=${code}` };
  }

  /**
   * Public (GraphQL `exchangeLoginHandoff`). The session is issued here, not at the callback,
   * so no tokens wait in Redis and a user disabled meanwhile gets none.
   */
  async exchangeHandoff(_ctx: RequestContext, input: { code: string }): Promise<LoginResult> {
    const code = typeof input.code === 'string' && input.code.length > 0 && input.code.length <= 128 ? input.code : null;
    const handoff = code ? await this.deps.flows.takeHandoff(code) : null;
    if (!handoff) throw new UnauthenticatedError(INVALID_HANDOFF);
    const user = await this.deps.users.findById(handoff.userId);
    if (!user) throw new UnauthenticatedError(INVALID_HANDOFF);
    if (user.disabledAt) throw new ForbiddenError('This account is disabled');
    return this.deps.auth.completeLogin(user);
  }

  /**
   * The user of a verified provider profile: by identity, else by verified email (linked),
   * else new. Concurrent first sign-ins of one account race on unique keys; the loser retries
   * and finds the winner's rows.
   */
  async resolveUser(provider: IdpName, profile: ProviderProfile): Promise<UserEntity> {
    const { users, identities } = this.deps;
    const verifiedEmail = profile.emailVerified && profile.email ? profile.email : undefined;
    for (let attempt = 0; attempt < RESOLVE_ATTEMPTS; attempt++) {
      const identity = await identities.find(provider, profile.subject);
      if (identity) {
        const user = await users.findById(identity.userId);
        if (!user) throw new UnauthenticatedError('The account of this identity no longer exists');
        refuseDisabled(user);
        await identities.recordLogin(provider, profile.subject, profile.email);
        return user;
      }
      try {
        if (verifiedEmail) {
          const owner = await users.findByVerifiedEmail(verifiedEmail);
          if (owner) {
            refuseDisabled(owner);
            await identities.insert({ provider, subject: profile.subject, userId: owner.id, email: profile.email });
            this.deps.logger.info('linked an identity-provider account by verified email', { provider, userId: owner.id });
            return owner;
          }
        }
        return await this.createUser(provider, profile, verifiedEmail);
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
      }
    }
    throw new ConflictError('Signing in collided with another sign-in of the same account; try again');
  }

  private async createUser(provider: IdpName, profile: ProviderProfile, verifiedEmail: string | undefined): Promise<UserEntity> {
    // A password nobody knows: the account signs in through its provider only.
    const passwordHash = await hashPassword(randomToken(32));
    for (const username of usernameCandidates(provider, profile.subject, verifiedEmail)) {
      const created = await this.deps.users.createWithPersonalWorkspace({ username, passwordHash, isAdmin: false, verifiedEmail }, (manager, userId) =>
        this.deps.identities.insert({ provider, subject: profile.subject, userId, email: profile.email }, manager),
      );
      if (created) return created;
    }
    throw new ConflictError('Could not find a free username for this account; try again');
  }

  /** The console: CONSOLE_URL, else PUBLIC_URL, else the edge the callback came through. */
  private consoleBase(redirectUri: string, provider: IdpName): string {
    const { consoleUrl, publicUrl } = this.deps.config;
    if (consoleUrl ?? publicUrl) return (consoleUrl ?? publicUrl)!;
    const suffix = callbackPath(provider);
    return redirectUri.endsWith(suffix) ? redirectUri.slice(0, -suffix.length) : new URL(redirectUri).origin;
  }
}

/** Path of a provider's callback on the edge. */
export function callbackPath(provider: IdpName): string {
  return `/v1/auth/${provider}/callback`;
}

function refuseDisabled(user: UserEntity): void {
  if (user.disabledAt) throw new ForbiddenError('This account is disabled');
}

function checkProvider(provider: unknown): IdpName {
  if (!(IDP_NAMES as readonly unknown[]).includes(provider)) throw new BadRequestError(`Unknown identity provider ${String(provider).slice(0, 40)}`);
  return provider as IdpName;
}

/**
 * Only a path of this origin: one leading `/`, not `//` or `/\` (which browsers read as another
 * host), no scheme, no control characters, and no fragment (the handoff code goes there).
 * Anything else would make the sign-in an open redirect.
 */
export function checkReturnTo(returnTo: unknown): string {
  if (returnTo === undefined || returnTo === null || returnTo === '') return '/';
  const invalid = (why: string) => new BadRequestError(`returnTo must be a path of the console starting with a single "/" (${why})`, { field: 'returnTo' });
  if (typeof returnTo !== 'string' || returnTo.length > MAX_RETURN_TO_LENGTH) throw invalid('too long or not a string');
  if (!returnTo.startsWith('/') || returnTo.startsWith('//') || returnTo.startsWith('/\\')) throw invalid('not a relative path');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\\]/.test(returnTo)) throw invalid('control character or backslash');
  if (returnTo.includes('#')) throw invalid('no fragment');
  const base = 'http://console.invalid';
  if (new URL(returnTo, base).origin !== base) throw invalid('not a relative path');
  return returnTo;
}

function checkRedirectUri(redirectUri: unknown): string {
  if (typeof redirectUri === 'string') {
    try {
      const parsed = new URL(redirectUri);
      if (parsed.protocol === 'http:' || parsed.protocol === 'https:') return redirectUri;
    } catch {
      // answered below
    }
  }
  throw new BadRequestError('redirectUri must be an http(s) URL');
}

function parseCallbackUrl(callbackUrl: unknown): URL {
  if (typeof callbackUrl === 'string') {
    try {
      return new URL(callbackUrl);
    } catch {
      // answered below
    }
  }
  throw new BadRequestError('callbackUrl must be a URL');
}

const USERNAME_MAX_BASE = 48;

/**
 * Usernames to try for a new user: the verified email's local part, else `<provider>-<subject>`,
 * made to fit the username rules; then numbered, then random suffixes.
 */
export function usernameCandidates(provider: IdpName, subject: string, verifiedEmail?: string): string[] {
  const clean = (raw: string) =>
    raw
      .replace(/[^a-zA-Z0-9._-]+/g, '-')
      .replace(/^[-.]+|[-.]+$/g, '')
      .slice(0, USERNAME_MAX_BASE);
  let base = verifiedEmail ? clean(verifiedEmail.split('@')[0]) : '';
  if (base.length < 3) base = clean(`${provider}-${subject}`);
  if (base.length < 3) base = `${provider}-user`;
  return [base, ...[2, 3, 4, 5].map((n) => `${base}-${n}`), ...[0, 1, 2].map(() => `${base}-${randomToken(6)}`)];
}

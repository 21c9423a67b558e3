import { sha256 } from '../../../core/crypto';
import { BadRequestError, ForbiddenError, UnauthenticatedError, UnavailableError } from '../../../core/errors';
import type { Logger } from '../../../core/logger';
import type { LoginResult } from '../auth/auth.types';
import type { UserEntity } from '../users/user.entity';
import type { UserRepository } from '../users/user.repository';
import type { IdpFlowStore, PendingHandoff, PendingSignIn } from './idp-flow.store';
import { IdpService, checkReturnTo, usernameCandidates } from './idp.service';
import type { ProviderProfile, ProviderSignIn } from './provider-sign-in';
import type { UserIdentityEntity } from './user-identity.entity';
import type { UserIdentityRepository } from './user-identity.repository';

/* IdpService with its repositories, Redis store and provider replaced by in-memory fakes. */

const silent: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, child: () => silent };
const EDGE = 'http://127.0.0.1:8080';
const REDIRECT_URI = `${EDGE}/v1/auth/idp-a/callback`;

function userRow(id: string, patch: Partial<UserEntity> = {}): UserEntity {
  const now = new Date();
  return { id, username: id, passwordHash: 'x', isAdmin: false, defaultWorkspaceId: `ws_${id}`, email: null, emailVerifiedAt: null, disabledAt: null, createdAt: now, updatedAt: now, ...patch };
}

function setup(options: { configured?: boolean; consoleUrl?: string; publicUrl?: string; profile?: ProviderProfile } = {}) {
  const users = new Map<string, UserEntity>();
  const identities = new Map<string, UserIdentityEntity>();
  const states = new Map<string, PendingSignIn>();
  const handoffs = new Map<string, PendingHandoff>();
  let created = 0;
  const unique = () => Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' });

  const usersRepo = {
    findById: jest.fn(async (id: string) => users.get(id) ?? null),
    findByVerifiedEmail: jest.fn(async (email: string) => [...users.values()].find((u) => u.email?.toLowerCase() === email.toLowerCase() && u.emailVerifiedAt) ?? null),
    createWithPersonalWorkspace: jest.fn(async (input: { username: string; verifiedEmail?: string }, within?: (manager: never, userId: string) => Promise<void>) => {
      if ([...users.values()].some((u) => u.username.toLowerCase() === input.username.toLowerCase())) return null;
      const id = `usr_${++created}`;
      await within?.(undefined as never, id);
      const row = userRow(id, { username: input.username, email: input.verifiedEmail ?? null, emailVerifiedAt: input.verifiedEmail ? new Date() : null });
      users.set(id, row);
      return row;
    }),
  };
  const identitiesRepo = {
    find: jest.fn(async (provider: string, subject: string) => identities.get(`${provider}/${subject}`) ?? null),
    insert: jest.fn(async (row: { provider: string; subject: string; userId: string; email: string | null }) => {
      const key = `${row.provider}/${row.subject}`;
      if (identities.has(key)) throw unique();
      identities.set(key, { ...row, createdAt: new Date(), lastLoginAt: new Date() });
    }),
    recordLogin: jest.fn(async () => undefined),
  };
  const flows = {
    saveState: jest.fn(async (state: string, pending: PendingSignIn) => void states.set(state, pending)),
    takeState: jest.fn(async (state: string) => {
      const pending = states.get(state) ?? null;
      states.delete(state);
      return pending;
    }),
    saveHandoff: jest.fn(async (code: string, handoff: PendingHandoff) => void handoffs.set(code, handoff)),
    takeHandoff: jest.fn(async (code: string) => {
      const handoff = handoffs.get(code) ?? null;
      handoffs.delete(code);
      return handoff;
    }),
  };
  const providers = {
    protocolOf: jest.fn(() => {
      if (options.configured === false) throw new UnavailableError('Identity provider idp-a is not configured on this platform');
      return 'oidc' as const;
    }),
    authorizationUrl: jest.fn(async (_provider: string, request: { state: string }) => `https://idp.example/auth?state=${request.state}`),
    profileFromCallback: jest.fn(async () => options.profile ?? { subject: 'sub-1', email: 'ann@example.test', emailVerified: true, name: 'Ann' }),
  };
  const auth = { completeLogin: jest.fn(async (user: UserEntity) => ({ accessToken: `at-${user.id}` }) as unknown as LoginResult) };
  const service = new IdpService({
    users: usersRepo as unknown as UserRepository,
    identities: identitiesRepo as unknown as UserIdentityRepository,
    flows: flows as unknown as IdpFlowStore,
    providers: providers as unknown as ProviderSignIn,
    auth,
    config: { consoleUrl: options.consoleUrl, publicUrl: options.publicUrl },
    logger: silent,
  });
  return { service, users, identities, states, handoffs, usersRepo, identitiesRepo, flows, providers, auth, unique };
}

/** Starts a sign-in and answers what its callback needs. */
async function started(t: ReturnType<typeof setup>, returnTo?: string) {
  const { state, binding } = await t.service.start({ provider: 'idp-a', redirectUri: REDIRECT_URI, returnTo });
  return { state, binding, callbackUrl: `${REDIRECT_URI}?code=c0de&state=${state}` };
}

describe('checkReturnTo', () => {
  it('accepts paths of this origin and defaults to /', () => {
    expect(checkReturnTo(undefined)).toBe('/');
    expect(checkReturnTo('')).toBe('/');
    expect(checkReturnTo('/projects/42?tab=runs')).toBe('/projects/42?tab=runs');
  });

  it.each(['https://evil.example', '//evil.example', '/\\evil.example', 'evil.example', 'javascript:alert(1)', '/a#b', '/a\nb', `/${'a'.repeat(2048)}`, 42])(
    'refuses %p',
    (returnTo) => {
      expect(() => checkReturnTo(returnTo)).toThrow(BadRequestError);
    },
  );
});

describe('usernameCandidates', () => {
  it('uses the verified email local part, else provider and subject, cleaned to the username rules', () => {
    expect(usernameCandidates('idp-a', 's', 'Ann.Lee+tag@example.test')[0]).toBe('Ann.Lee-tag');
    expect(usernameCandidates('idp-b', 'google|123 456')[0]).toBe('idp-b-google-123-456');
    expect(usernameCandidates('idp-a', 's', 'x@example.test')[0]).toBe('idp-a-s');
    const all = usernameCandidates('idp-a', 'a'.repeat(300));
    expect(new Set(all).size).toBe(all.length);
    for (const name of all) expect(name).toMatch(/^[a-zA-Z0-9._-]{3,64}$/);
  });
});

describe('IdpService.start', () => {
  it('keeps nonce, PKCE verifier, redirect URI, return path and the binding hash under the state', async () => {
    const t = setup();
    const { state, binding } = await started(t, '/home');
    expect(t.states.get(state)).toEqual({ provider: 'idp-a', nonce: expect.any(String), codeVerifier: expect.any(String), redirectUri: REDIRECT_URI, returnTo: '/home', bindingHash: sha256(binding) });
    expect(binding).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('answers 503 for a provider that is not configured, before anything else', async () => {
    const t = setup({ configured: false });
    await expect(t.service.start({ provider: 'idp-a', redirectUri: REDIRECT_URI, returnTo: 'https://evil.example' })).rejects.toBeInstanceOf(UnavailableError);
    expect(t.flows.saveState).not.toHaveBeenCalled();
  });

  it('refuses an unknown provider and a returnTo outside the console without keeping a state', async () => {
    const t = setup();
    await expect(t.service.start({ provider: 'idp-z' as never, redirectUri: REDIRECT_URI })).rejects.toBeInstanceOf(BadRequestError);
    await expect(t.service.start({ provider: 'idp-a', redirectUri: REDIRECT_URI, returnTo: '//evil.example' })).rejects.toBeInstanceOf(BadRequestError);
    expect(t.states.size).toBe(0);
  });
});

describe('IdpService.finish', () => {
  it('redirects to the console with a one-time handoff code in the fragment', async () => {
    const t = setup({ consoleUrl: 'https://console.example' });
    const { binding, callbackUrl } = await started(t, '/after');
    const { redirectTo } = await t.service.finish({ provider: 'idp-a', callbackUrl, binding });
    const url = new URL(redirectTo);
    expect(`${url.origin}${url.pathname}`).toBe('https://console.example/after');
    const code = new URLSearchParams(url.hash.slice(1)).get('handoff')!;
    expect(t.handoffs.get(code)).toEqual({ userId: 'usr_1', provider: 'idp-a' });
    expect(t.auth.completeLogin).not.toHaveBeenCalled();
  });

  it('falls back to PUBLIC_URL, then to the edge the callback came through', async () => {
    const viaPublic = setup({ publicUrl: 'https://platform.example' });
    const a = await started(viaPublic);
    expect((await viaPublic.service.finish({ provider: 'idp-a', callbackUrl: a.callbackUrl, binding: a.binding })).redirectTo).toMatch(/^https:\/\/platform\.example\/#handoff=/);
    const viaEdge = setup();
    const b = await started(viaEdge);
    expect((await viaEdge.service.finish({ provider: 'idp-a', callbackUrl: b.callbackUrl, binding: b.binding })).redirectTo).toMatch(new RegExp(`^${EDGE}/#handoff=`));
  });

  it('spends the state on the first callback, good or bad', async () => {
    const t = setup();
    const { binding, callbackUrl } = await started(t);
    await expect(t.service.finish({ provider: 'idp-a', callbackUrl, binding: 'wrong' })).rejects.toThrow(/another browser/);
    await expect(t.service.finish({ provider: 'idp-a', callbackUrl, binding })).rejects.toThrow(/Sign-in state is invalid or expired/);
    expect(t.providers.profileFromCallback).not.toHaveBeenCalled();
  });

  it('refuses a missing binding, a state of another provider and an unknown state (400)', async () => {
    const t = setup();
    const first = await started(t);
    await expect(t.service.finish({ provider: 'idp-a', callbackUrl: first.callbackUrl, binding: null })).rejects.toBeInstanceOf(BadRequestError);
    const second = await started(t);
    await expect(t.service.finish({ provider: 'idp-b', callbackUrl: second.callbackUrl.replace('idp-a', 'idp-b'), binding: second.binding })).rejects.toThrow(/state is invalid/);
    await expect(t.service.finish({ provider: 'idp-a', callbackUrl: `${REDIRECT_URI}?code=x&state=made-up`, binding: second.binding })).rejects.toThrow(/state is invalid/);
    await expect(t.service.finish({ provider: 'idp-a', callbackUrl: `${REDIRECT_URI}?code=x`, binding: second.binding })).rejects.toThrow(/state is invalid/);
  });

  it("answers the provider's error code and spends the state", async () => {
    const t = setup();
    const { state, binding } = await started(t);
    const error = await t.service.finish({ provider: 'idp-a', callbackUrl: `${REDIRECT_URI}?error=access_denied&state=${state}`, binding }).catch((err) => err);
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error.details).toEqual({ provider: 'idp-a', error: 'access_denied' });
    expect(t.states.size).toBe(0);
  });
});

describe('IdpService.resolveUser', () => {
  const profile = (patch: Partial<ProviderProfile> = {}): ProviderProfile => ({ subject: 'sub-1', email: 'ann@example.test', emailVerified: true, name: null, ...patch });

  it('creates a user with the verified email and links the identity in the same transaction', async () => {
    const t = setup();
    const user = await t.service.resolveUser('idp-a', profile());
    expect(user).toMatchObject({ username: 'ann', email: 'ann@example.test' });
    expect(t.identities.get('idp-a/sub-1')).toMatchObject({ userId: user.id, email: 'ann@example.test' });
  });

  it('answers the user of a known identity and records the sign-in', async () => {
    const t = setup();
    const first = await t.service.resolveUser('idp-a', profile());
    const again = await t.service.resolveUser('idp-a', profile({ email: 'new@example.test' }));
    expect(again.id).toBe(first.id);
    expect(t.identitiesRepo.recordLogin).toHaveBeenCalledWith('idp-a', 'sub-1', 'new@example.test');
    expect(t.usersRepo.createWithPersonalWorkspace).toHaveBeenCalledTimes(1);
  });

  it('links by a verified email only', async () => {
    const t = setup();
    const owner = await t.service.resolveUser('idp-a', profile());
    const linked = await t.service.resolveUser('idp-b', profile({ subject: 'other', email: 'ANN@example.test' }));
    expect(linked.id).toBe(owner.id);
    const unverified = await t.service.resolveUser('idp-b', profile({ subject: 'third', emailVerified: false }));
    expect(unverified.id).not.toBe(owner.id);
    expect(unverified).toMatchObject({ username: 'idp-b-third', email: null });
  });

  it('refuses a disabled user, by identity and by email, without linking', async () => {
    const t = setup();
    const owner = await t.service.resolveUser('idp-a', profile());
    t.users.set(owner.id, { ...owner, disabledAt: new Date() });
    await expect(t.service.resolveUser('idp-a', profile())).rejects.toBeInstanceOf(ForbiddenError);
    await expect(t.service.resolveUser('idp-b', profile({ subject: 'other' }))).rejects.toBeInstanceOf(ForbiddenError);
    expect(t.identities.has('idp-b/other')).toBe(false);
  });

  it('takes the next free username', async () => {
    const t = setup();
    await t.service.resolveUser('idp-a', profile());
    const second = await t.service.resolveUser('idp-a', profile({ subject: 'sub-2', email: 'ann@elsewhere.test' }));
    expect(second.username).toBe('ann-2');
  });

  it('retries when a concurrent sign-in created the identity first, and answers its user', async () => {
    const t = setup();
    const winner = await t.service.resolveUser('idp-a', profile({ subject: 'race', email: null, emailVerified: false }));
    // This caller saw no identity at first (the race), then lost the insert.
    t.identitiesRepo.find.mockResolvedValueOnce(null);
    const loser = await t.service.resolveUser('idp-a', profile({ subject: 'race', email: null, emailVerified: false }));
    expect(loser.id).toBe(winner.id);
  });
});

describe('IdpService.exchangeHandoff', () => {
  const ctx = { principal: null, requestId: 'req_unit', clientIp: '127.0.0.1' };

  it('completes the login once per code', async () => {
    const t = setup();
    const { binding, callbackUrl } = await started(t);
    const code = new URLSearchParams(new URL((await t.service.finish({ provider: 'idp-a', callbackUrl, binding })).redirectTo).hash.slice(1)).get('handoff')!;
    await expect(t.service.exchangeHandoff(ctx, { code })).resolves.toEqual({ accessToken: 'at-usr_1' });
    await expect(t.service.exchangeHandoff(ctx, { code })).rejects.toBeInstanceOf(UnauthenticatedError);
    await expect(t.service.exchangeHandoff(ctx, { code: '' })).rejects.toBeInstanceOf(UnauthenticatedError);
    expect(t.auth.completeLogin).toHaveBeenCalledTimes(1);
  });

  it('refuses a user disabled between the callback and the exchange', async () => {
    const t = setup();
    const { binding, callbackUrl } = await started(t);
    const code = new URLSearchParams(new URL((await t.service.finish({ provider: 'idp-a', callbackUrl, binding })).redirectTo).hash.slice(1)).get('handoff')!;
    const user = t.users.get('usr_1')!;
    t.users.set(user.id, { ...user, disabledAt: new Date() });
    await expect(t.service.exchangeHandoff(ctx, { code })).rejects.toBeInstanceOf(ForbiddenError);
    expect(t.auth.completeLogin).not.toHaveBeenCalled();
  });
});

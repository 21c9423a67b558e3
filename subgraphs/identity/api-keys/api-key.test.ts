import { sha256 } from '../../../core/crypto';
import type { Principal } from '../../../core/principal';
import { TOPICS } from '../../../core/pubsub';
import { API_KEY_PREFIX } from '../../../core/tokens';
import { codeOf, startIdentityHarness, type IdentityHarness } from '../testing/identity-harness';

const CREATE = `mutation($name: String!, $days: Int) {
  createApiKey(name: $name, expiresInDays: $days) { id name prefix key createdAt expiresAt lastUsedAt }
}`;
const LIST = `{ apiKeys { id name prefix createdAt expiresAt lastUsedAt revokedAt } }`;
const REVOKE = `mutation($id: ID!) { revokeApiKey(id: $id) { id revokedAt } }`;

describe('identity API keys and the principal route', () => {
  let h: IdentityHarness;
  let alice: Principal;
  let bob: Principal;

  beforeAll(async () => {
    h = await startIdentityHarness();
    alice = await h.newUser('alice');
    bob = await h.newUser('bob');
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('resolves a user id to a principal with memberships, and null for unknown users', async () => {
    expect(alice).toEqual({
      userId: alice.userId,
      username: 'alice',
      isAdmin: false,
      via: 'jwt',
      defaultWorkspaceId: alice.defaultWorkspaceId,
      memberships: { [alice.defaultWorkspaceId]: 'owner' },
    });
    expect(await h.principal({ userId: 'usr_doesnotexist0000000' })).toBeNull();
  });

  it('creates a key shown once, lists it without the secret, and resolves it to a principal', async () => {
    const created = await h.gql(CREATE, { name: 'ci', days: 30 }, { principal: alice });
    expect(created.errors).toBeUndefined();
    const key = created.data!.createApiKey;
    expect(key.key).toMatch(new RegExp(`^${API_KEY_PREFIX}[A-Za-z0-9_-]{43}$`));
    expect(key.prefix).toBe(key.key.slice(0, 12));
    expect(Date.parse(key.expiresAt) - Date.parse(key.createdAt)).toBeCloseTo(30 * 86400_000, -4);
    expect(key.lastUsedAt).toBeNull();

    const stored = await h.subgraph.dataSource.query(`SELECT "key_hash" FROM "identity"."api_keys" WHERE "id" = $1`, [key.id]);
    expect(stored[0].key_hash).toBe(sha256(key.key));

    const listed = await h.gql(LIST, {}, { principal: alice });
    expect(listed.data!.apiKeys).toEqual([
      { id: key.id, name: 'ci', prefix: key.prefix, createdAt: key.createdAt, expiresAt: key.expiresAt, lastUsedAt: null, revokedAt: null },
    ]);
    expect(JSON.stringify(listed)).not.toContain(key.key);
    expect((await h.gql(LIST, {}, { principal: bob })).data!.apiKeys).toEqual([]);

    const principal = await h.principal({ apiKey: key.key });
    expect(principal).toEqual({ ...alice, via: 'api_key', apiKeyId: key.id });
  });

  it('writes last_used_at at most once a minute', async () => {
    const key = (await h.gql(CREATE, { name: 'usage' }, { principal: alice })).data!.createApiKey;
    h.queries.length = 0;
    await h.principal({ apiKey: key.key });
    await h.principal({ apiKey: key.key });
    await h.principal({ apiKey: key.key });
    const updates = h.queries.filter((sql) => /UPDATE "identity"\."api_keys"/.test(sql));
    expect(updates).toHaveLength(1);
    // Three lookups: each one key+user join and one memberships query, plus the one update.
    expect(h.queries.filter((sql) => /^\s*SELECT/.test(sql))).toHaveLength(6);
    const listed = (await h.gql(LIST, {}, { principal: alice })).data!.apiKeys.find((k: { id: string }) => k.id === key.id);
    expect(listed.lastUsedAt).not.toBeNull();
  });

  it('revokes a key: it resolves to null, leaves the list, and gateways are told', async () => {
    const key = (await h.gql(CREATE, { name: 'to-revoke' }, { principal: alice })).data!.createApiKey;
    const events: unknown[] = [];
    const stop = h.runtime.pubsub.on(TOPICS.principalChanged, (event) => events.push(event));
    try {
      await new Promise((resolve) => setTimeout(resolve, 100)); // let the Redis subscription settle
      expect(codeOf(await h.gql(REVOKE, { id: key.id }, { principal: bob }))).toBe('NOT_FOUND');
      const revoked = await h.gql(REVOKE, { id: key.id }, { principal: alice });
      expect(revoked.data!.revokeApiKey.revokedAt).not.toBeNull();
      expect(await h.principal({ apiKey: key.key })).toBeNull();
      expect((await h.gql(LIST, {}, { principal: alice })).data!.apiKeys.map((k: { id: string }) => k.id)).not.toContain(key.id);
      await waitFor(() => events.length > 0);
      expect(events).toContainEqual({ userId: alice.userId, apiKeyId: key.id });
    } finally {
      stop();
    }
  });

  it('resolves expired and unknown keys to null', async () => {
    const key = (await h.gql(CREATE, { name: 'expiring', days: 1 }, { principal: alice })).data!.createApiKey;
    await h.subgraph.dataSource.query(`UPDATE "identity"."api_keys" SET "expires_at" = now() - interval '1 second' WHERE "id" = $1`, [key.id]);
    expect(await h.principal({ apiKey: key.key })).toBeNull();
    expect(await h.principal({ apiKey: `${API_KEY_PREFIX}${'x'.repeat(43)}` })).toBeNull();
    expect(await h.principal({ apiKey: 'not-a-key' })).toBeNull();
  });

  it('validates the name and expiry and needs a caller', async () => {
    expect(codeOf(await h.gql(CREATE, { name: '  ' }, { principal: alice }))).toBe('VALIDATION_FAILED');
    const badDays = await h.gql(CREATE, { name: 'x', days: 0 }, { principal: alice });
    expect(codeOf(badDays)).toBe('VALIDATION_FAILED');
    expect(badDays.errors![0].extensions!.details).toEqual({ field: 'expiresInDays' });
    expect(codeOf(await h.gql(CREATE, { name: 'anon' }))).toBe('UNAUTHENTICATED');
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

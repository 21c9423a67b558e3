import { startTestPlatform, type TestPlatform } from './harness';
import { createUserAndLogin, gql, loginAdmin } from './helpers';

/**
 * Entity references across subgraphs are batched: 100 secrets (billing) created by 100
 * different users (identity) resolve their `createdBy` users with one users query.
 */
describe('federated entity references', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startTestPlatform({ services: ['identity', 'billing', 'gateway'], env: { LOGIN_FAILURES_PER_ADDRESS: '100000' } });
  });
  afterAll(() => platform?.stop());

  it('resolves 100 records referencing 100 users with one users query', async () => {
    const admin = await loginAdmin(platform);
    const ws = (await gql(platform, 'mutation { createWorkspace(name: "Shared") { id } }', {}, admin.auth)).data.createWorkspace.id;
    const users: string[] = [];
    // Sequential batches of 10 keep the machine responsive (argon2 hashing is deliberately slow).
    for (let batch = 0; batch < 10; batch++) {
      await Promise.all(
        Array.from({ length: 10 }, async (_, i) => {
          const n = batch * 10 + i;
          const user = await createUserAndLogin(platform, admin.auth, `batch-user-${n}`);
          const added = await gql(platform, 'mutation($ws: ID!, $u: ID!) { addWorkspaceMember(workspaceId: $ws, userId: $u, role: member) { id } }', { ws, u: user.userId }, admin.auth);
          expect(added.errors).toBeUndefined();
          const secret = await gql(platform, 'mutation($ws: ID!, $k: String!) { createSecret(workspaceId: $ws, key: $k, value: "v") { id } }', { ws, k: `KEY_${n}` }, user.auth);
          expect(secret.errors).toBeUndefined();
          users.push(user.userId);
        }),
      );
    }
    const query = 'query($ws: ID!) { secrets(workspaceId: $ws, limit: 100) { total data { id key createdBy { id username } } } }';
    // Warm the gateway's principal cache and query plan first, so only the measured query runs.
    await gql(platform, query, { ws }, admin.auth);
    platform.resetQueries();
    const result = await gql(platform, query, { ws }, admin.auth);
    expect(result.errors).toBeUndefined();
    const secrets = result.data.secrets;
    expect(secrets.total).toBe(100);
    expect(new Set(secrets.data.map((s: any) => s.createdBy.id))).toEqual(new Set(users));
    for (const s of secrets.data) expect(s.createdBy.username).toMatch(/^batch-user-\d+$/);
    const userQueries = platform.queries.identity.filter((sql) => /"users"/.test(sql));
    expect(userQueries).toHaveLength(1);
  }, 180_000);
});

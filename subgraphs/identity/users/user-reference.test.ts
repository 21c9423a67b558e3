import type { Principal } from '../../../core/principal';
import { startIdentityHarness, type IdentityHarness } from '../testing/identity-harness';

const ENTITIES = `query($representations: [_Any!]!) {
  _entities(representations: $representations) { ... on User { id username isAdmin workspaces { workspaceId } } }
}`;

/** SELECTs that read the users table. */
const usersSelects = (queries: string[]) => queries.filter((sql) => /^\s*SELECT/i.test(sql) && /"identity"\."users"/.test(sql));

describe('User entity references', () => {
  let h: IdentityHarness;
  let admin: Principal;
  const ids: string[] = [];

  beforeAll(async () => {
    h = await startIdentityHarness();
    admin = await h.admin();
    for (let i = 0; i < 10; i++) ids.push((await h.newUser(`ref-user-${i}`)).userId);
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('declares User as an entity keyed by id', async () => {
    const response = await h.gql(`{ _service { sdl } }`, {}, { principal: admin });
    expect(response.data!._service.sdl).toMatch(/type User\s+@key\(fields: "id"\)/);
  });

  it('resolves 100 references with one users query', async () => {
    // 100 representations: ten users, each referenced ten times, in scrambled order.
    const representations = Array.from({ length: 100 }, (_, i) => ({ __typename: 'User', id: ids[(i * 7) % 10] }));
    h.queries.length = 0;
    const response = await h.gql(ENTITIES, { representations }, { principal: admin });
    expect(response.errors).toBeUndefined();
    const entities = response.data!._entities as Array<{ id: string; username: string; workspaces: unknown[] }>;
    expect(entities).toHaveLength(100);
    entities.forEach((entity, i) => expect(entity.id).toBe(representations[i].id));
    expect(entities[0].username).toMatch(/^ref-user-/);
    expect(entities[0].workspaces).toHaveLength(1);
    expect(usersSelects(h.queries)).toHaveLength(1);
    expect(usersSelects(h.queries)[0]).toMatch(/= ANY\(\$1\)/);
    // And one for the memberships of all of them.
    expect(h.queries.filter((sql) => /"workspace_members"/.test(sql))).toHaveLength(1);
  });

  it('answers null for an unknown user and needs a signed-in caller', async () => {
    const unknown = await h.gql(ENTITIES, { representations: [{ __typename: 'User', id: 'usr_unknown' }, { __typename: 'User', id: ids[0] }] }, { principal: admin });
    expect(unknown.data!._entities[0]).toBeNull();
    expect(unknown.data!._entities[1].id).toBe(ids[0]);
    const anonymous = await h.gql(ENTITIES, { representations: [{ __typename: 'User', id: ids[0] }] });
    expect(anonymous.errors![0].extensions!.code).toBe('UNAUTHENTICATED');
  });

  it("shows another user's workspaces only where the caller shares them", async () => {
    const other = (await h.principal({ userId: ids[1] }))!;
    const response = await h.gql(ENTITIES, { representations: [{ __typename: 'User', id: ids[0] }] }, { principal: other });
    expect(response.data!._entities[0].workspaces).toEqual([]);
  });
});

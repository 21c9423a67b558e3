import type { Principal } from '../../../core/principal';
import { codeOf, startIdentityHarness, type IdentityHarness } from '../testing/identity-harness';

const CREATE_USER = `mutation($u: String!, $p: String!) { createUser(username: $u, password: $p) { id username isAdmin defaultWorkspaceId workspaces { workspaceId name role } } }`;
const CREATE_WS = `mutation($name: String!) { createWorkspace(name: $name) { id name personal myRole members { userId role user { username } } } }`;
const ADD = `mutation($w: ID!, $u: ID!, $r: WorkspaceRole!) { addWorkspaceMember(workspaceId: $w, userId: $u, role: $r) { id workspaceId userId role createdAt user { id username } } }`;
const REMOVE = `mutation($w: ID!, $u: ID!) { removeWorkspaceMember(workspaceId: $w, userId: $u) }`;
const GET = `query($id: ID!) { workspace(id: $id) { id name myRole members { userId role } } }`;

describe('identity users and workspaces', () => {
  let h: IdentityHarness;
  let admin: Principal;
  let alice: Principal;
  let bob: Principal;
  let carol: Principal;
  /** Re-reads a principal, as the gateway does after identity says it changed. */
  const fresh = async (p: Principal) => (await h.principal({ userId: p.userId }))!;

  beforeAll(async () => {
    h = await startIdentityHarness();
    admin = await h.admin();
    [alice, bob, carol] = [await h.newUser('alice'), await h.newUser('bob'), await h.newUser('carol')];
  });
  afterAll(async () => {
    await h?.stop();
  });

  describe('createUser', () => {
    it('lets administrators create users, each with a personal workspace it owns', async () => {
      const response = await h.gql(CREATE_USER, { u: 'dave.d-1', p: 'long enough password' }, { principal: admin });
      expect(response.errors).toBeUndefined();
      const user = response.data!.createUser;
      expect(user).toMatchObject({ username: 'dave.d-1', isAdmin: false });
      expect(user.workspaces).toEqual([{ workspaceId: user.defaultWorkspaceId, name: "dave.d-1's workspace", role: 'owner' }]);
      const [ws] = await h.subgraph.dataSource.query(`SELECT "personal" FROM "identity"."workspaces" WHERE "id" = $1`, [user.defaultWorkspaceId]);
      expect(ws.personal).toBe(true);
    });

    it('is forbidden to everyone else', async () => {
      expect(codeOf(await h.gql(CREATE_USER, { u: 'mallory', p: 'long enough password' }, { principal: alice }))).toBe('FORBIDDEN');
      expect(codeOf(await h.gql(CREATE_USER, { u: 'mallory', p: 'long enough password' }))).toBe('UNAUTHENTICATED');
    });

    it('validates username and password, and refuses a taken username (any case)', async () => {
      const shortName = await h.gql(CREATE_USER, { u: 'ab', p: 'long enough password' }, { principal: admin });
      expect(codeOf(shortName)).toBe('VALIDATION_FAILED');
      expect(shortName.errors![0].extensions!.details).toEqual({ field: 'username' });
      expect(codeOf(await h.gql(CREATE_USER, { u: 'bad name!', p: 'long enough password' }, { principal: admin }))).toBe('VALIDATION_FAILED');
      const shortPassword = await h.gql(CREATE_USER, { u: 'erin', p: 'short' }, { principal: admin });
      expect(shortPassword.errors![0].extensions!.details).toEqual({ field: 'password' });
      expect(codeOf(await h.gql(CREATE_USER, { u: 'erin', p: 'x'.repeat(257) }, { principal: admin }))).toBe('VALIDATION_FAILED');
      expect(codeOf(await h.gql(CREATE_USER, { u: 'ALICE', p: 'long enough password' }, { principal: admin }))).toBe('CONFLICT');
    });
  });

  describe('queries', () => {
    it('answers the profile and lets only administrators or oneself read a user', async () => {
      const profile = await h.gql(`{ profile { id username workspaces { workspaceId role } } }`, {}, { principal: alice });
      expect(profile.data!.profile).toEqual({ id: alice.userId, username: 'alice', workspaces: [{ workspaceId: alice.defaultWorkspaceId, role: 'owner' }] });
      const q = `query($id: ID!) { user(id: $id) { id } }`;
      expect((await h.gql(q, { id: alice.userId }, { principal: alice })).data).toEqual({ user: { id: alice.userId } });
      expect((await h.gql(q, { id: alice.userId }, { principal: admin })).data).toEqual({ user: { id: alice.userId } });
      expect(codeOf(await h.gql(q, { id: alice.userId }, { principal: bob }))).toBe('FORBIDDEN');
      expect(codeOf(await h.gql(q, { id: 'usr_nope' }, { principal: admin }))).toBe('NOT_FOUND');
    });
  });

  describe('workspaces and members', () => {
    let wsId: string;

    it('creates a shared workspace with the caller as owner', async () => {
      const response = await h.gql(CREATE_WS, { name: '  Team A ' }, { principal: alice });
      expect(response.errors).toBeUndefined();
      const ws = response.data!.createWorkspace;
      expect(ws).toMatchObject({ name: 'Team A', personal: false, myRole: 'owner', members: [{ userId: alice.userId, role: 'owner', user: { username: 'alice' } }] });
      wsId = ws.id;
      alice = await fresh(alice);
      expect(alice.memberships[wsId]).toBe('owner');
      const list = await h.gql(`{ workspaces { id name personal myRole } }`, {}, { principal: alice });
      expect(list.data!.workspaces.map((w: { id: string }) => w.id)).toEqual([alice.defaultWorkspaceId, wsId]);
      expect(codeOf(await h.gql(CREATE_WS, { name: '' }, { principal: alice }))).toBe('VALIDATION_FAILED');
    });

    it("keeps tenants apart: another user cannot see the workspace (404)", async () => {
      const response = await h.gql(GET, { id: wsId }, { principal: bob });
      expect(codeOf(response)).toBe('NOT_FOUND');
      expect(response.data).toBeNull();
      expect((await h.gql(`{ workspaces { id } }`, {}, { principal: bob })).data!.workspaces).toEqual([{ id: bob.defaultWorkspaceId }]);
      expect(codeOf(await h.gql(GET, { id: 'ws_doesnotexist' }, { principal: alice }))).toBe('NOT_FOUND');
    });

    it('refuses addWorkspaceMember by a non-member with NOT_FOUND', async () => {
      expect(codeOf(await h.gql(ADD, { w: wsId, u: bob.userId, r: 'member' }, { principal: bob }))).toBe('NOT_FOUND');
    });

    it('adds members; a viewer may not add (FORBIDDEN); unknown users are NOT_FOUND', async () => {
      const added = await h.gql(ADD, { w: wsId, u: bob.userId, r: 'viewer' }, { principal: alice });
      expect(added.errors).toBeUndefined();
      expect(added.data!.addWorkspaceMember).toMatchObject({ workspaceId: wsId, userId: bob.userId, role: 'viewer', user: { id: bob.userId, username: 'bob' } });
      bob = await fresh(bob);
      expect(bob.memberships[wsId]).toBe('viewer');
      expect(codeOf(await h.gql(ADD, { w: wsId, u: carol.userId, r: 'member' }, { principal: bob }))).toBe('FORBIDDEN');
      expect(codeOf(await h.gql(ADD, { w: wsId, u: 'usr_nobody', r: 'member' }, { principal: alice }))).toBe('NOT_FOUND');
      // Bob now sees the workspace, and alice's membership there, but not alice's personal workspace.
      expect((await h.gql(GET, { id: wsId }, { principal: bob })).data!.workspace.myRole).toBe('viewer');
      const other = await h.gql(`query($id: ID!) { workspace(id: $id) { members { user { username workspaces { workspaceId } } } } }`, { id: wsId }, { principal: bob });
      const aliceSeen = other.data!.workspace.members.find((m: { user: { username: string } }) => m.user.username === 'alice');
      expect(aliceSeen.user.workspaces).toEqual([{ workspaceId: wsId }]);
    });

    it('changes the role of an existing member (idempotent), and only owners grant owner', async () => {
      const changed = await h.gql(ADD, { w: wsId, u: bob.userId, r: 'admin' }, { principal: alice });
      expect(changed.data!.addWorkspaceMember.role).toBe('admin');
      const again = await h.gql(ADD, { w: wsId, u: bob.userId, r: 'admin' }, { principal: alice });
      expect(again.data!.addWorkspaceMember.id).toBe(changed.data!.addWorkspaceMember.id);
      bob = await fresh(bob);
      expect(codeOf(await h.gql(ADD, { w: wsId, u: carol.userId, r: 'owner' }, { principal: bob }))).toBe('FORBIDDEN');
      expect(codeOf(await h.gql(ADD, { w: wsId, u: alice.userId, r: 'member' }, { principal: bob }))).toBe('FORBIDDEN');
      expect((await h.gql(ADD, { w: wsId, u: carol.userId, r: 'member' }, { principal: bob })).errors).toBeUndefined();
    });

    it('cannot remove or demote the last owner (CONFLICT)', async () => {
      expect(codeOf(await h.gql(REMOVE, { w: wsId, u: alice.userId }, { principal: alice }))).toBe('CONFLICT');
      expect(codeOf(await h.gql(ADD, { w: wsId, u: alice.userId, r: 'admin' }, { principal: alice }))).toBe('CONFLICT');
      expect(codeOf(await h.gql(REMOVE, { w: alice.defaultWorkspaceId, u: alice.userId }, { principal: alice }))).toBe('CONFLICT');
    });

    it('removes members: admins remove others, anyone may leave, others are FORBIDDEN', async () => {
      carol = await fresh(carol);
      expect(codeOf(await h.gql(REMOVE, { w: wsId, u: bob.userId }, { principal: carol }))).toBe('FORBIDDEN');
      expect((await h.gql(REMOVE, { w: wsId, u: carol.userId }, { principal: bob })).data).toEqual({ removeWorkspaceMember: true });
      expect(codeOf(await h.gql(REMOVE, { w: wsId, u: carol.userId }, { principal: bob }))).toBe('NOT_FOUND');
      expect((await h.gql(REMOVE, { w: wsId, u: bob.userId }, { principal: bob })).data).toEqual({ removeWorkspaceMember: true });
      expect((await fresh(bob)).memberships[wsId]).toBeUndefined();
      const members = (await h.gql(GET, { id: wsId }, { principal: alice })).data!.workspace.members;
      expect(members).toEqual([{ userId: alice.userId, role: 'owner' }]);
    });

    it('lets a second owner be made, after which the first may leave', async () => {
      expect((await h.gql(ADD, { w: wsId, u: carol.userId, r: 'owner' }, { principal: alice })).errors).toBeUndefined();
      expect((await h.gql(REMOVE, { w: wsId, u: alice.userId }, { principal: alice })).data).toEqual({ removeWorkspaceMember: true });
    });
  });
});

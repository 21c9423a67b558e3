import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import type { Principal } from '../../../core/principal';
import { TOPICS } from '../../../core/pubsub';
import { eventually } from '../../../test/services';
import { startIdentityHarness, type IdentityHarness } from '../testing/identity-harness';

const SUBSCRIBE = `subscription($w: ID!) { workspaceMembershipChanged(workspaceId: $w) { workspaceId userId role kind at } }`;
const ADD = `mutation($w: ID!, $u: ID!, $r: WorkspaceRole!) { addWorkspaceMember(workspaceId: $w, userId: $u, role: $r) { id } }`;
const REMOVE = `mutation($w: ID!, $u: ID!) { removeWorkspaceMember(workspaceId: $w, userId: $u) }`;

interface Event {
  workspaceId: string;
  userId: string;
  role: string | null;
  kind: string;
  at: string;
}

describe('workspaceMembershipChanged over graphql-ws', () => {
  let h: IdentityHarness;
  let alice: Principal;
  let bob: Principal;
  const clients: Client[] = [];

  const connect = (principal: Principal): Client => {
    const client = createClient({
      url: h.subgraph.wsUrl,
      webSocketImpl: WebSocket,
      connectionParams: { envelope: h.envelope({ principal }) },
      retryAttempts: 0,
      lazy: true,
    });
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    h = await startIdentityHarness();
    alice = await h.newUser('alice');
    bob = await h.newUser('bob');
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.dispose()));
    await h?.stop();
  });

  it('sends ADDED, ROLE_CHANGED and REMOVED to a member of the workspace', async () => {
    const workspaceId = alice.defaultWorkspaceId;
    const events: Event[] = [];
    const errors: unknown[] = [];
    connect(alice).subscribe<{ workspaceMembershipChanged: Event }>(
      { query: SUBSCRIBE, variables: { w: workspaceId } },
      { next: (result) => (result.data ? events.push(result.data.workspaceMembershipChanged) : errors.push(result.errors)), error: (e) => errors.push(e), complete: () => undefined },
    );

    // The subscription is live once a probe published on its channel comes through.
    await eventually(() => {
      h.runtime.pubsub.publish(TOPICS.workspaceMembership, { workspaceId, userId: 'probe', role: null, kind: 'ADDED', at: new Date().toISOString() }, workspaceId);
      return events.some((e) => e.userId === 'probe');
    });
    // Probes may still be arriving; only real changes count from here.
    const real = () => events.filter((e) => e.userId !== 'probe');

    expect((await h.gql(ADD, { w: workspaceId, u: bob.userId, r: 'member' }, { principal: alice })).errors).toBeUndefined();
    await eventually(() => real().length >= 1, 5000);
    expect(real()[0]).toMatchObject({ workspaceId, userId: bob.userId, role: 'member', kind: 'ADDED' });
    expect(Date.parse(real()[0].at)).not.toBeNaN();

    await h.gql(ADD, { w: workspaceId, u: bob.userId, r: 'viewer' }, { principal: alice });
    await h.gql(REMOVE, { w: workspaceId, u: bob.userId }, { principal: alice });
    await eventually(() => real().length >= 3, 5000);
    expect(real().slice(1).map((e) => [e.kind, e.role])).toEqual([
      ['ROLE_CHANGED', 'viewer'],
      ['REMOVED', null],
    ]);
    expect(errors).toEqual([]);
  });

  it('refuses a non-member with NOT_FOUND', async () => {
    const outcome = await new Promise<unknown>((resolve) => {
      connect(bob).subscribe(
        { query: SUBSCRIBE, variables: { w: alice.defaultWorkspaceId } },
        { next: (result) => resolve(result), error: (e) => resolve(e), complete: () => resolve('complete') },
      );
    });
    const errors = (Array.isArray(outcome) ? outcome : (outcome as { errors?: unknown[] }).errors) as Array<{ extensions?: { code?: string } }>;
    expect(errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});

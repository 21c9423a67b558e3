import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { startTestPlatform, type TestPlatform } from './harness';
import { createUserAndLogin, eventually, gql, loginAdmin } from './helpers';

const SUBSCRIPTION = 'subscription($ws: ID!) { workspaceMembershipChanged(workspaceId: $ws) { workspaceId userId role kind at } }';

describe('subscriptions through the gateway (graphql-ws passthrough)', () => {
  let platform: TestPlatform;
  let admin: Awaited<ReturnType<typeof loginAdmin>>;
  let workspaceId: string;
  const clients: Client[] = [];

  const connect = (connectionParams: Record<string, unknown>) => {
    const client = createClient({ url: platform.wsUrl, webSocketImpl: WebSocket, connectionParams, retryAttempts: 0, lazy: false });
    clients.push(client);
    return client;
  };
  const upstreamSockets = () => platform.subgraphs.identity!.openSockets();

  beforeAll(async () => {
    platform = await startTestPlatform({ services: ['identity', 'billing', 'gateway'] });
    admin = await loginAdmin(platform);
    const created = await gql(platform, 'mutation { createWorkspace(name: "Team Rocket") { id } }', {}, admin.auth);
    workspaceId = created.data.createWorkspace.id;
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.dispose()));
    await platform?.stop();
  });

  it('relays membership events of the identity subgraph to a subscribed member', async () => {
    const bob = await createUserAndLogin(platform, admin.auth, 'bob-subs');
    const client = connect({ authorization: admin.auth.authorization });
    const events: any[] = [];
    const done = new Promise<void>((resolve, reject) => {
      client.subscribe(
        { query: SUBSCRIPTION, variables: { ws: workspaceId } },
        { next: (value) => { events.push(value); if (events.length === 2) resolve(); }, error: reject, complete: () => undefined },
      );
    });
    await eventually(() => upstreamSockets() === 1 && platform.gateway!.upstreamSockets() === 1, 5000, 'the upstream subscription');
    // Give the subgraph a moment to register the topic with Redis before publishing.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const added = await gql(platform, 'mutation($ws: ID!, $u: ID!) { addWorkspaceMember(workspaceId: $ws, userId: $u, role: member) { id role } }', { ws: workspaceId, u: bob.userId }, admin.auth);
    expect(added.errors).toBeUndefined();
    const removed = await gql(platform, 'mutation($ws: ID!, $u: ID!) { removeWorkspaceMember(workspaceId: $ws, userId: $u) }', { ws: workspaceId, u: bob.userId }, admin.auth);
    expect(removed.errors).toBeUndefined();
    await done;
    expect(events[0].data.workspaceMembershipChanged).toMatchObject({ workspaceId, userId: bob.userId, role: 'member', kind: 'ADDED' });
    expect(events[1].data.workspaceMembershipChanged).toMatchObject({ workspaceId, userId: bob.userId, kind: 'REMOVED' });

    // The client goes away: the upstream socket must close too.
    await client.dispose();
    await eventually(() => upstreamSockets() === 0 && platform.gateway!.upstreamSockets() === 0, 5000, 'upstream sockets to close');
  });

  it('closes the upstream socket when the client ends its only subscription but stays connected', async () => {
    const client = connect({ authorization: admin.auth.authorization });
    const unsubscribe = client.subscribe({ query: SUBSCRIPTION, variables: { ws: workspaceId } }, { next: () => undefined, error: () => undefined, complete: () => undefined });
    await eventually(() => upstreamSockets() === 1, 5000, 'the upstream subscription');
    unsubscribe();
    await eventually(() => upstreamSockets() === 0 && platform.gateway!.upstreamSockets() === 0, 5000, 'upstream socket to close');
    await client.dispose();
  });

  it('does not let a non-member subscribe to a workspace', async () => {
    const eve = await createUserAndLogin(platform, admin.auth, 'eve-subs');
    const client = connect({ authorization: eve.auth.authorization });
    const error = await new Promise<any>((resolve) => {
      client.subscribe({ query: SUBSCRIPTION, variables: { ws: workspaceId } }, { next: resolve, error: resolve, complete: () => resolve(undefined) });
    });
    expect(JSON.stringify(error)).toMatch(/NOT_FOUND/);
    await client.dispose();
    await eventually(() => upstreamSockets() === 0, 5000, 'upstream socket to close');
  });

  it('refuses a connection with bad credentials and validates operations', async () => {
    const bad = connect({ authorization: 'Bearer not-a-token' });
    const closed = await new Promise<any>((resolve) => {
      bad.subscribe({ query: SUBSCRIPTION, variables: { ws: workspaceId } }, { next: () => undefined, error: resolve, complete: () => resolve('complete') });
    });
    expect(closed.code ?? closed).toBe(4403);

    const client = connect({ authorization: admin.auth.authorization });
    const invalid = await new Promise<any>((resolve) => {
      client.subscribe({ query: 'subscription { noSuchField }' }, { next: () => undefined, error: resolve, complete: () => resolve('complete') });
    });
    expect(JSON.stringify(invalid)).toMatch(/VALIDATION_FAILED/);
    // Queries over the socket go through the gateway too.
    const result = await new Promise<any>((resolve, reject) => {
      client.subscribe({ query: '{ profile { id username } }' }, { next: resolve, error: reject, complete: () => undefined });
    });
    expect(result.data.profile.username).toBe(platform.config.adminUsername);
    await client.dispose();
  });
});

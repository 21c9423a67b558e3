import { randomBytes } from 'node:crypto';
import type { PlatformConfig } from '../../../core/config';
import { ENVELOPE_HEADER, signEnvelope, type Envelope, type Principal } from '../../../core/principal';
import { startSubgraph, type PlatformRuntime, type RunningSubgraph } from '../../../core/subgraph';
import { identitySubgraph } from '..';

import { createTestDatabase, createTestRuntime } from '../../../test/services';

export interface GraphQLResponse<T = Record<string, any>> {
  status: number;
  data?: T;
  errors?: Array<{ message: string; extensions?: { code?: string; details?: Record<string, unknown> } }>;
}

export interface CallOptions {
  /** The caller; null (the default) for an anonymous request. */
  principal?: Principal | null;
  clientIp?: string;
  /** Send no envelope at all. */
  unsigned?: boolean;
}

export interface IdentityHarness {
  config: PlatformConfig;
  runtime: PlatformRuntime;
  subgraph: RunningSubgraph;
  /** Every SQL statement the subgraph ran since the last reset. */
  queries: string[];
  envelope(options?: CallOptions): string;
  gql<T = Record<string, any>>(query: string, variables?: Record<string, unknown>, options?: CallOptions): Promise<GraphQLResponse<T>>;
  /** POST /internal/principal, as the gateway calls it. */
  principal(body: { userId: string } | { apiKey: string }): Promise<Principal | null>;
  /** The administrator created at boot, as a principal. */
  admin(): Promise<Principal>;
  /** A new user (created by the administrator) and its principal. */
  newUser(username: string, password?: string): Promise<Principal>;
  stop(): Promise<void>;
}

/**
 * The identity subgraph alone, on a fresh database and Redis prefix of its own, called over
 * HTTP with envelopes signed like the gateway's.
 */
export async function startIdentityHarness(overrides: Partial<PlatformConfig> = {}): Promise<IdentityHarness> {
  const database = await createTestDatabase('identity');
  const queries: string[] = [];
  const runtime: PlatformRuntime = createTestRuntime({
    databaseUrl: database.url,
    prefix: database.name,
    env: { LOG_LEVEL: 'error' },
    overrides,
    onQuery: (_name, sql) => queries.push(sql),
  });
  const { config, pubsub } = runtime;
  const subgraph = await startSubgraph(identitySubgraph, runtime, 0);
  const base = subgraph.url.replace(/\/graphql$/, '');

  const envelope = (options: CallOptions = {}): string => {
    const body: Envelope = {
      principal: options.principal ?? null,
      requestId: `req_${randomBytes(4).toString('hex')}`,
      clientIp: options.clientIp ?? '10.0.0.1',
      iat: Math.floor(Date.now() / 1000),
    };
    return signEnvelope(config.internalSigningSecret, body);
  };

  const gql: IdentityHarness['gql'] = async (query, variables, options = {}) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (!options.unsigned) headers[ENVELOPE_HEADER] = envelope(options);
    const response = await fetch(subgraph.url, { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
    const json = (await response.json()) as Omit<GraphQLResponse, 'status'>;
    return { status: response.status, ...json } as never;
  };

  const principal: IdentityHarness['principal'] = async (body) => {
    const response = await fetch(`${base}/internal/principal`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [ENVELOPE_HEADER]: envelope() },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`principal lookup answered ${response.status}`);
    return ((await response.json()) as { data: Principal | null }).data;
  };

  const admin = async (): Promise<Principal> => {
    const login = await gql<{ login: { user: { id: string } } }>(
      `mutation($u: String!, $p: String!) { login(username: $u, password: $p) { user { id } } }`,
      { u: config.adminUsername, p: config.adminPassword },
      { clientIp: '10.255.255.254' },
    );
    const found = login.data && (await principal({ userId: login.data.login.user.id }));
    if (!found) throw new Error(`admin login failed: ${JSON.stringify(login.errors)}`);
    return found;
  };

  const newUser = async (username: string, password = 'correct horse battery'): Promise<Principal> => {
    const created = await gql<{ createUser: { id: string } }>(
      `mutation($u: String!, $p: String!) { createUser(username: $u, password: $p) { id } }`,
      { u: username, p: password },
      { principal: await admin() },
    );
    if (!created.data) throw new Error(`createUser failed: ${JSON.stringify(created.errors)}`);
    return (await principal({ userId: created.data.createUser.id }))!;
  };

  return {
    config,
    runtime,
    subgraph,
    queries,
    envelope,
    gql,
    principal,
    admin,
    newUser,
    async stop() {
      await subgraph.stop();
      await pubsub.close();
      await database.drop();
    },
  };
}

/** The error code of the first error, for terse assertions. */
export function codeOf(response: GraphQLResponse): string | undefined {
  return response.errors?.[0]?.extensions?.code;
}

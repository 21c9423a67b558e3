import { buildSchema, execute, type GraphQLSchema } from 'graphql';
import { NotFoundError, RateLimitedError, UnauthenticatedError, ValidationError, maskError } from '../../core/errors';
import type { RestExecutor, RestOperation } from '../types';

/**
 * A small in-process stand-in for the gateway in unit tests: a graphql-js schema with the field
 * names of the served routes, resolvers that throw core/errors DomainErrors, and an executor that
 * masks errors the way the gateway does.
 */
export const LOCAL_SDL = /* GraphQL */ `
  scalar DateTime

  enum Role { ADMIN MEMBER }
  enum SecretKind { PLAIN FILE }

  type User {
    id: ID!
    username: String!
    role: Role!
    createdAt: DateTime!
    "Has an argument: sofa must select it without one."
    workspaces(page: Int): [Workspace!]!
    "Has a required argument: left out of REST selections."
    membership(workspaceId: ID!): String
  }

  type Workspace {
    id: ID!
    name: String!
    owner: User!
  }

  type LoginPayload {
    accessToken: String!
    refreshToken: String!
    tokenType: String!
    expiresIn: Int!
    user: User!
  }

  type ApiKey {
    id: ID!
    name: String!
    key: String!
    expiresAt: DateTime
  }

  type Secret {
    id: ID!
    workspaceId: ID!
    key: String!
    kind: SecretKind!
    createdAt: DateTime!
    updatedAt: DateTime!
    createdBy: User
  }

  type SecretPage {
    data: [Secret!]!
    total: Int!
    page: Int!
    limit: Int!
  }

  enum OAuthProvider { IDP_A IDP_B }

  type OAuthConnection {
    id: ID!
    workspaceId: ID!
    provider: OAuthProvider!
    subject: String!
  }

  type OAuthConnectionPage {
    data: [OAuthConnection!]!
    total: Int!
    page: Int!
    limit: Int!
  }

  type OAuthAuthorizationUrl {
    url: String!
    state: String!
    expiresAt: String!
  }

  type DeletedOAuthConnection {
    id: ID!
    deleted: Boolean!
  }

  type WorkspaceRateLimits {
    workspaceId: ID!
    plan: String!
  }

  type SearchResult {
    kind: SecretKind
    exact: Boolean
    score: Float
    tags: [String!]
    page: Int
  }

  type TotpSetup {
    secret: String!
    otpauthUrl: String!
    qrCodeDataUrl: String!
    expiresIn: Int!
  }

  type TotpRecoveryCodes {
    enabled: Boolean!
    recoveryCodes: [String!]!
  }

  type TotpStatus {
    enabled: Boolean!
    enabledAt: String
    recoveryCodesRemaining: Int!
  }

  scalar JSON
  scalar JSONObject

  "Stand-in result of the compute fields: the unit tests only need the routes to resolve."
  type ComputeStub {
    id: ID
  }

  "Stand-in result of the workflows fields."
  type WorkflowStub {
    id: ID
  }

  "Stand-in result of the ai gateway fields."
  type AiStub {
    id: ID
  }

  "Stand-in result of the analytics fields."
  type AnalyticsStub {
    id: ID
  }

  input AnalyticsFunnelStepInput {
    type: String!
    match: String!
    label: String
  }

  input AiPoolMemberInput {
    upstreamId: ID
    platformModelId: ID
    weight: Int
    priority: Int
  }

  type Query {
    "The caller's profile."
    profile: User!
    sandboxes(workspaceId: ID, status: String, name: String, page: Int, limit: Int): ComputeStub!
    sandbox(id: ID!): ComputeStub!
    sandboxFiles(id: ID!, path: String = "/", recursive: Boolean = false, limit: Int): ComputeStub!
    sandboxFileContent(id: ID!, path: String!): ComputeStub!
    sandboxLogs(id: ID!, tail: Int, since: String): ComputeStub!
    sandboxLifecycle(id: ID!, page: Int, limit: Int): ComputeStub!
    sandboxStatsHistory(id: ID!, from: String, to: String, limit: Int): ComputeStub!
    sandboxPorts(id: ID!): [ComputeStub!]!
    snapshots(workspaceId: ID, sandboxId: ID, page: Int, limit: Int): ComputeStub!
    snapshot(id: ID!): ComputeStub!
    secrets(workspaceId: ID!, page: Int, limit: Int): SecretPage!
    secret(workspaceId: ID!, secretId: ID!): Secret!
    "Test-only: echoes its coerced arguments."
    search(kind: SecretKind, exact: Boolean, score: Float, tags: [String!], page: Int = 1): SearchResult!
    notServed: String
    rateLimits(workspaceId: ID!): WorkspaceRateLimits!
    oauthConnections(workspaceId: ID!, provider: OAuthProvider! = IDP_A, page: Int, limit: Int): OAuthConnectionPage!
    aiProviders: [AiStub!]!
    aiPlatformModels: [AiStub!]!
    aiUpstreams(workspaceId: ID, page: Int, limit: Int): AiStub!
    aiUpstream(id: ID!): AiStub!
    aiUpstreamUsage(id: ID!, from: String, to: String): AiStub!
    aiPools(workspaceId: ID, page: Int, limit: Int): AiStub!
    aiPool(id: ID!): AiStub!
    aiKeys(workspaceId: ID, page: Int, limit: Int): AiStub!
    aiUsage(workspaceId: ID, from: String, to: String, groupBy: String, model: String, keyId: ID, upstreamId: ID, poolId: ID): AiStub!
    aiUsageRealtime(workspaceId: ID): AiStub!
    aiConversations(workspaceId: ID, keyId: ID, page: Int, limit: Int): AiStub!
    aiConversation(requestId: ID!): AiStub!
    workflows(workspaceId: ID, page: Int, limit: Int): WorkflowStub!
    workflow(id: ID!): WorkflowStub!
    workflowExecutions(id: ID!, status: String, page: Int, limit: Int): WorkflowStub!
    workflowExecution(id: ID!, executionId: ID!): WorkflowStub!
    workflowMetrics(id: ID!, from: String, to: String): WorkflowStub!
    workflowMetricsTimeseries(id: ID!, from: String, to: String, interval: String = "1h"): WorkflowStub!
    workflowNodeDefinitions: [WorkflowStub!]!
    workflowNodeDefinition(type: String!): WorkflowStub!
    trustedWorkflowPlugins: [WorkflowStub!]!
    analyticsInstallations(page: Int, limit: Int, workspaceId: ID, includeHidden: Boolean = false): AnalyticsStub!
    analyticsInstallation(id: ID!): AnalyticsStub!
    analyticsInstallationScript(id: ID!): AnalyticsStub!
    analyticsRealtime(installationId: ID!, limit: Int): AnalyticsStub!
    analyticsTimeseries(installationId: ID!, from: String, to: String, interval: String = "day", metric: String = "pageviews"): AnalyticsStub!
    analyticsEvents(installationId: ID!, from: String, to: String, name: String, kind: String, path: String, visitorId: String, userId: String, page: Int, limit: Int): AnalyticsStub!
    analyticsStats(installationId: ID!, from: String, to: String, limit: Int): AnalyticsStub!
    analyticsTrajectory(installationId: ID!, from: String, to: String, visitorId: String, userId: String, limit: Int): AnalyticsStub!
    analyticsUsers(installationId: ID!, from: String, to: String, page: Int, limit: Int): AnalyticsStub!
    analyticsUserProfile(installationId: ID!, from: String, to: String, userId: String!, limit: Int): AnalyticsStub!
    analyticsFunnels(page: Int, limit: Int, installationId: ID, workspaceId: ID): AnalyticsStub!
    analyticsFunnel(id: ID!): AnalyticsStub!
    analyticsFunnelAnalysis(id: ID!, from: String, to: String): AnalyticsStub!
  }

  type Mutation {
    login(username: String!, password: String!): LoginPayload!
    refresh(refreshToken: String!): LoginPayload!
    createApiKey(name: String!, expiresInDays: Int): ApiKey!
    createSecret(workspaceId: ID!, key: String!, value: String!, kind: SecretKind = PLAIN): Secret!
    updateSecret(workspaceId: ID!, secretId: ID!, key: String, value: String): Secret!
    deleteSecret(workspaceId: ID!, secretId: ID!): Boolean!
    createOAuthConnectionUrl(workspaceId: ID!, provider: OAuthProvider! = IDP_A, redirectUri: String, scopes: [String!]): OAuthAuthorizationUrl!
    exchangeOAuthConnectionCode(workspaceId: ID!, provider: OAuthProvider! = IDP_A, code: String!, state: String!, iss: String): OAuthConnection!
    deleteOAuthConnection(workspaceId: ID!, provider: OAuthProvider! = IDP_A, connectionId: ID!): DeletedOAuthConnection!
    refreshRateLimits(workspaceId: ID!): WorkspaceRateLimits!
    setupTotp: TotpSetup!
    verifyTotpSetup(code: String!): TotpRecoveryCodes!
    verifyTotp(challenge: String!, code: String, recoveryCode: String): LoginPayload!
    disableTotp(code: String, recoveryCode: String): TotpStatus!
    createSandbox(name: String!, workspaceId: ID!, image: String, snapshotId: ID, cpuMillis: Int, memoryMb: Int, gpuCount: Int, gpuType: String, env: JSONObject, args: [String!], maxLifetimeSeconds: Int, labels: JSONObject): ComputeStub!
    updateSandbox(id: ID!, name: String, labels: JSONObject): ComputeStub!
    deleteSandbox(id: ID!): ComputeStub!
    startSandbox(id: ID!): ComputeStub!
    stopSandbox(id: ID!): ComputeStub!
    extendSandboxTtl(id: ID!, seconds: Int!): ComputeStub!
    snapshotSandbox(id: ID!, name: String, description: String, labels: JSONObject): ComputeStub!
    startSandboxFromLatest(id: ID!): ComputeStub!
    startSandboxFromSnapshot(id: ID!, snapshotId: ID!): ComputeStub!
    stopSandboxWithSnapshot(id: ID!, name: String, description: String, labels: JSONObject): ComputeStub!
    execSandbox(id: ID!, command: JSON!, cwd: String, env: JSONObject, timeout: Float, stdin: String, stdinEncoding: String): ComputeStub!
    writeSandboxFiles(id: ID!, files: [JSONObject!]!): ComputeStub!
    addSandboxPort(id: ID!, port: Int!, protocol: String = "http", public: Boolean = false): ComputeStub!
    createSnapshot(workspaceId: ID, sandboxId: ID, image: String, name: String, description: String, labels: JSONObject): ComputeStub!
    updateSnapshot(id: ID!, name: String, description: String, labels: JSONObject): ComputeStub!
    deleteSnapshot(id: ID!): ComputeStub!
    restoreSnapshot(id: ID!, sandboxId: ID, name: String): ComputeStub!
    createAiUpstream(workspaceId: ID, name: String!, provider: String!, baseUrl: String!, apiKey: String!, models: [String!], modelMap: JSONObject, weight: Int, timeoutMs: Int, enabled: Boolean): AiStub!
    updateAiUpstream(id: ID!, name: String, baseUrl: String, apiKey: String, models: [String!], modelMap: JSONObject, weight: Int, timeoutMs: Int, enabled: Boolean): AiStub!
    deleteAiUpstream(id: ID!): AiStub!
    testAiUpstream(id: ID!, model: String): AiStub!
    createAiPool(workspaceId: ID, name: String!, strategy: String, storeConversations: Boolean, maxAttempts: Int, members: [AiPoolMemberInput!]): AiStub!
    deleteAiPool(id: ID!): AiStub!
    addAiPoolMember(id: ID!, upstreamId: ID, platformModelId: ID, weight: Int, priority: Int): AiStub!
    removeAiPoolMember(id: ID!, upstreamId: ID!): AiStub!
    removeAiPoolPlatformMember(id: ID!, platformModelId: ID!): AiStub!
    createAiKey(workspaceId: ID, name: String!, poolId: ID!, requestsPerMinute: Int, tokensPerMinute: Int, monthlyBudgetUsd: Float, storeConversations: Boolean, expiresAt: String): AiStub!
    deleteAiKey(id: ID!): AiStub!
    aiPlaygroundChat(workspaceId: ID, poolId: ID, upstreamId: ID, model: String!, messages: JSON!, system: String, maxTokens: Int, temperature: Float): AiStub!
    aiPlaygroundEmbeddings(workspaceId: ID, poolId: ID, upstreamId: ID, model: String!, input: JSON!): AiStub!
    createWorkflow(workspaceId: ID, name: String!, description: String, nodes: JSON!, connections: JSON, settings: JSONObject): WorkflowStub!
    updateWorkflow(id: ID!, name: String, description: String, nodes: JSON, connections: JSON, settings: JSONObject): WorkflowStub!
    deleteWorkflow(id: ID!): WorkflowStub!
    deployWorkflow(id: ID!): WorkflowStub!
    undeployWorkflow(id: ID!): WorkflowStub!
    executeWorkflow(id: ID!, input: JSON, wait: Boolean = false, timeoutSeconds: Int): WorkflowStub!
    executeWorkflowInMemory(workspaceId: ID, name: String, nodes: JSON!, connections: JSON, settings: JSONObject, input: JSON, wait: Boolean = false, timeoutSeconds: Int): WorkflowStub!
    cancelWorkflowExecution(id: ID!, executionId: ID!): WorkflowStub!
    createAnalyticsInstallation(workspaceId: ID, name: String!, domains: [String!]!): AnalyticsStub!
    updateAnalyticsInstallation(id: ID!, name: String, domains: [String!]): AnalyticsStub!
    deleteAnalyticsInstallation(id: ID!): AnalyticsStub!
    hideAnalyticsInstallation(id: ID!): AnalyticsStub!
    unhideAnalyticsInstallation(id: ID!): AnalyticsStub!
    createAnalyticsFunnel(installationId: ID!, name: String!, steps: [AnalyticsFunnelStepInput!]!, windowSeconds: Int): AnalyticsStub!
    updateAnalyticsFunnel(id: ID!, name: String, steps: [AnalyticsFunnelStepInput!], windowSeconds: Int): AnalyticsStub!
    deleteAnalyticsFunnel(id: ID!): AnalyticsStub!
    "Test-only: always rate limited."
    burst: Boolean!
    "Test-only: fails with an unexpected error."
    explode: Boolean!
  }
`;

const NOW = '2024-01-01T00:00:00.000Z';
const USER = { id: 'usr_1', username: 'admin', role: 'ADMIN', createdAt: NOW, workspaces: [{ id: 'wsp_1', name: 'Main', owner: null as unknown }], membership: 'owner' };
USER.workspaces[0].owner = USER;

export interface LocalGraph {
  schema: GraphQLSchema;
  execute: RestExecutor;
  /** Every operation the executor received. */
  calls: RestOperation[];
}

export function createLocalGraph(): LocalGraph {
  const schema = buildSchema(LOCAL_SDL);
  const secrets = new Map<string, Record<string, unknown>>();
  let nextId = 1;

  const requireKey = (req: RestOperation['req']) => {
    if (req.headers['x-api-key'] !== 'test-key' && req.headers.authorization !== 'Bearer test-token') throw new UnauthenticatedError();
  };
  const findSecret = (workspaceId: string, secretId: string) => {
    const secret = secrets.get(secretId);
    if (!secret || secret.workspaceId !== workspaceId) throw new NotFoundError('Secret', secretId);
    return secret;
  };

  const root = {
    profile: (_: unknown, ctx: RestOperation) => (requireKey(ctx.req), USER),
    secrets: (args: { workspaceId: string; page?: number; limit?: number }, ctx: RestOperation) => {
      requireKey(ctx.req);
      const page = args.page ?? 1;
      const limit = args.limit ?? 20;
      if (limit > 100) throw new ValidationError('limit must be at most 100', { field: 'limit' });
      const all = [...secrets.values()].filter((s) => s.workspaceId === args.workspaceId);
      return { data: all.slice((page - 1) * limit, page * limit), total: all.length, page, limit };
    },
    secret: (args: { workspaceId: string; secretId: string }, ctx: RestOperation) => (requireKey(ctx.req), findSecret(args.workspaceId, args.secretId)),
    search: (args: Record<string, unknown>) => args,
    login: (args: { username: string; password: string }) => {
      if (args.username !== 'admin' || args.password !== 'pw') throw new UnauthenticatedError('Invalid username or password');
      return { accessToken: 'test-token', refreshToken: 'refresh', tokenType: 'Bearer', expiresIn: 900, user: USER };
    },
    refresh: (args: { refreshToken: string }) => {
      if (args.refreshToken !== 'refresh') throw new UnauthenticatedError('Invalid refresh token');
      return { accessToken: 'test-token', refreshToken: 'refresh2', tokenType: 'Bearer', expiresIn: 900, user: USER };
    },
    createApiKey: (args: { name: string; expiresInDays?: number }, ctx: RestOperation) => {
      requireKey(ctx.req);
      return { id: 'key_1', name: args.name, key: 'pk_secret', expiresAt: args.expiresInDays ? NOW : null };
    },
    createSecret: (args: { workspaceId: string; key: string; value: string; kind: string }, ctx: RestOperation) => {
      requireKey(ctx.req);
      const secret = { id: `sec_${nextId++}`, workspaceId: args.workspaceId, key: args.key, kind: args.kind, createdAt: NOW, updatedAt: NOW, createdBy: USER };
      secrets.set(secret.id, secret);
      return secret;
    },
    updateSecret: (args: { workspaceId: string; secretId: string; key?: string; value?: string }, ctx: RestOperation) => {
      requireKey(ctx.req);
      const secret = findSecret(args.workspaceId, args.secretId);
      if (args.key !== undefined) secret.key = args.key;
      return secret;
    },
    deleteSecret: (args: { workspaceId: string; secretId: string }, ctx: RestOperation) => {
      requireKey(ctx.req);
      findSecret(args.workspaceId, args.secretId);
      return secrets.delete(args.secretId);
    },
    burst: () => {
      throw new RateLimitedError('Too many requests', 2.5);
    },
    explode: () => {
      throw new Error('database password is hunter2');
    },
  };

  const calls: RestOperation[] = [];
  const executor: RestExecutor = async (op) => {
    calls.push(op);
    const result = await execute({ schema, document: op.document, variableValues: op.variables, operationName: op.operationName, rootValue: root, contextValue: op });
    return {
      data: result.data as Record<string, unknown> | null | undefined,
      errors: result.errors?.map((error) => maskError(error.toJSON(), error)),
      headers: { 'x-ratelimit-remaining': '99' },
    };
  };
  return { schema, execute: executor, calls };
}

/**
 * The REST route table: every route of the spec (`/work/shared/spec`, "Endpoints"), each either
 * served by one GraphQL root field or pending with the reason it is not served yet. This file is
 * data only; `test/spec-routes.test.ts` checks it against the spec in both directions.
 *
 * - `path` is the spec's path, appended literally to the base URL `/v1` (so `/v1/vendor-proxy/...`
 *   is served at `/v1/v1/vendor-proxy/...`). `{name}` is a path parameter; a trailing `*` matches
 *   one or more further segments.
 * - `method: '*'` stands for routes whose methods the spec does not give (TOTP, webhook triggers,
 *   vendor proxy families).
 * - `field` is `Query.x` or `Mutation.y`. Path parameters, query parameters and the keys of the
 *   flat JSON body are the field's arguments, by name.
 * - `status` is the success status (200 unless given). `public` routes need no credentials
 *   (documentation only: the gateway decides).
 * - `raw` routes are not GraphQL operations (browser redirects, streams, uploads): the gateway
 *   serves them with the raw HTTP handler of that name (`RestCompatOptions.rawHandlers`).
 * - A route the spec gives without a method (`*`) may be served under the one method it needs.
 */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteDefinition {
  method: HttpMethod | '*';
  path: string;
  /** The GraphQL root field that serves the route. */
  field?: `Query.${string}` | `Mutation.${string}`;
  /** Success status. @defaultValue 200 */
  status?: 200 | 201 | 202;
  /** Served without credentials. @defaultValue false */
  public?: boolean;
  /** Why the route is not served yet, and the issue that will serve it. */
  pending?: string;
  /**
   * Arguments the path itself fixes (`provider` of `/oauth-connections/idp-a`): the field's
   * default applies, and a request that sets one is refused with 400.
   */
  fixedArgs?: string[];
  /** The raw HTTP handler that serves the route (see RestCompatOptions.rawHandlers). */
  raw?: RawHandlerName;
}

/** Raw HTTP handlers the gateway provides. */
export type RawHandlerName = 'idpLogin' | 'sandboxFileContent' | 'aiVendor' | 'aiOAuth' | 'workflowWebhook' | 'analyticsIngest';

const SESSIONS = 'sessions subgraph (issue: sessions)';
const COMPUTE = 'compute subgraph (issue: compute)';
const BILLING = 'billing subgraph (issue: billing)';
const CAPTCHA = 'sessions subgraph, captcha (issue: sessions)';
const PROXY_METERING = 'sessions subgraph, proxy metering (issue: sessions)';
const RAW_INGEST = 'raw HTTP ingest route for in-container callers (issue: sessions)';
const RAW_UPLOAD = 'multipart or ZIP upload: raw HTTP handler (issue: raw routes)';
const RAW_DOWNLOAD = 'file download: raw HTTP handler (issue: raw routes)';
const RAW_SSE = 'server-sent event stream: raw HTTP handler (issue: raw routes)';
const RAW_TELEMETRY = 'telemetry sink without a JSON response: raw HTTP handler (issue: sessions)';

export const ROUTES: readonly RouteDefinition[] = [
  // /auth
  { method: 'POST', path: '/auth/login', field: 'Mutation.login', public: true },
  { method: 'POST', path: '/auth/refresh', field: 'Mutation.refresh', public: true },
  { method: 'POST', path: '/auth/api-keys', field: 'Mutation.createApiKey', status: 201 },
  { method: 'GET', path: '/auth/profile', field: 'Query.profile' },
  { method: 'GET', path: '/auth/idp-a', raw: 'idpLogin', public: true },
  { method: 'GET', path: '/auth/idp-b', raw: 'idpLogin', public: true },
  { method: 'POST', path: '/auth/totp/setup', field: 'Mutation.setupTotp' },
  { method: 'POST', path: '/auth/totp/verify', field: 'Mutation.verifyTotp', public: true },
  { method: 'POST', path: '/auth/totp/verify-setup', field: 'Mutation.verifyTotpSetup' },
  { method: 'POST', path: '/auth/totp/disable', field: 'Mutation.disableTotp' },

  // /browser
  { method: 'GET', path: '/browser/sessions', pending: SESSIONS },
  { method: 'POST', path: '/browser/sessions', pending: SESSIONS },
  { method: 'GET', path: '/browser/sessions/{id}', pending: SESSIONS },
  { method: 'DELETE', path: '/browser/sessions/{id}', pending: SESSIONS },
  { method: 'PUT', path: '/browser/sessions/{id}/stop', pending: SESSIONS },
  { method: 'GET', path: '/browser/sessions/{id}/cdp-url', pending: SESSIONS },
  { method: 'GET', path: '/browser/sessions/{id}/vnc-url', pending: SESSIONS },
  { method: 'GET', path: '/browser/sessions/{id}/logs', pending: SESSIONS },
  { method: 'GET', path: '/browser/sessions/{id}/usage', pending: SESSIONS },
  { method: 'GET', path: '/browser/sessions/{id}/recording-status', pending: SESSIONS },
  { method: 'POST', path: '/browser/sessions/{id}/recording/start', pending: SESSIONS },
  { method: 'POST', path: '/browser/sessions/{id}/recording/stop', pending: SESSIONS },
  { method: 'GET', path: '/browser/sessions/{id}/rrweb-events', pending: SESSIONS },
  { method: 'POST', path: '/browser/sessions/{id}/rrweb-events', pending: RAW_INGEST },
  { method: 'GET', path: '/browser/replays', pending: SESSIONS },

  // /notebooks
  { method: 'GET', path: '/notebooks', pending: SESSIONS },
  { method: 'POST', path: '/notebooks', pending: SESSIONS },
  { method: 'GET', path: '/notebooks/{id}', pending: SESSIONS },
  { method: 'PUT', path: '/notebooks/{id}', pending: SESSIONS },
  { method: 'DELETE', path: '/notebooks/{id}', pending: SESSIONS },
  { method: 'GET', path: '/notebooks/config', pending: SESSIONS },
  { method: 'GET', path: '/notebooks/{id}/cells', pending: SESSIONS },
  { method: 'GET', path: '/notebooks/{id}/cells/by-index/{cellIndex}', pending: SESSIONS },
  { method: 'GET', path: '/notebooks/{id}/cells/{cellId}', pending: SESSIONS },
  { method: 'POST', path: '/notebooks/{id}/cells', pending: SESSIONS },
  { method: 'PUT', path: '/notebooks/{id}/cells/{cellId}', pending: SESSIONS },
  { method: 'PUT', path: '/notebooks/{id}/cells/{cellId}/move', pending: SESSIONS },
  { method: 'PUT', path: '/notebooks/{id}/cells/{cellId}/source', pending: SESSIONS },
  { method: 'DELETE', path: '/notebooks/{id}/cells/{cellId}', pending: SESSIONS },
  { method: 'GET', path: '/notebooks/{id}/events', pending: SESSIONS },
  { method: 'GET', path: '/notebooks/{id}/collaborators', pending: SESSIONS },
  { method: 'POST', path: '/notebooks/{id}/duplicate', pending: SESSIONS },
  { method: 'POST', path: '/notebooks/import', pending: RAW_UPLOAD },
  { method: 'GET', path: '/notebooks/{id}/export', pending: RAW_DOWNLOAD },
  { method: 'GET', path: '/notebooks/{id}/files', pending: SESSIONS },
  { method: 'POST', path: '/notebooks/{id}/files/upload', pending: RAW_UPLOAD },
  { method: 'GET', path: '/notebooks/{id}/files/content', pending: SESSIONS },
  { method: 'POST', path: '/notebooks/{id}/files/directory', pending: SESSIONS },
  { method: 'POST', path: '/notebooks/{id}/files/move', pending: SESSIONS },
  { method: 'POST', path: '/notebooks/{id}/files/delete', pending: SESSIONS },
  { method: 'POST', path: '/notebooks/{id}/kernel/execute', pending: SESSIONS },
  { method: 'POST', path: '/notebooks/{id}/kernel/interrupt', pending: SESSIONS },
  { method: 'POST', path: '/notebooks/{id}/kernel/restart', pending: SESSIONS },
  { method: 'POST', path: '/notebooks/{id}/kernel/keepalive', pending: SESSIONS },
  { method: 'POST', path: '/notebooks/{id}/kernel/wake', pending: SESSIONS },
  { method: 'PUT', path: '/notebooks/{id}/kernel/ttl-policy', pending: SESSIONS },
  { method: 'GET', path: '/notebooks/{id}/instance', pending: SESSIONS },
  { method: 'PUT', path: '/notebooks/{id}/instance', pending: SESSIONS },
  { method: 'GET', path: '/notebooks/{id}/outputs/{cellId}', pending: SESSIONS },
  { method: 'DELETE', path: '/notebooks/{id}/outputs/{cellId}', pending: SESSIONS },
  { method: 'DELETE', path: '/notebooks/{id}/outputs', pending: SESSIONS },
  { method: 'GET', path: '/notebooks/sessions', pending: SESSIONS },
  { method: 'POST', path: '/notebooks/sessions', pending: SESSIONS },
  { method: 'GET', path: '/notebooks/sessions/{id}', pending: SESSIONS },
  { method: 'DELETE', path: '/notebooks/sessions/{id}', pending: SESSIONS },
  { method: 'PUT', path: '/notebooks/sessions/{id}/stop', pending: SESSIONS },
  { method: 'PUT', path: '/notebooks/sessions/{id}/wake', pending: SESSIONS },

  // /sandboxes
  { method: 'GET', path: '/sandboxes', field: 'Query.sandboxes' },
  { method: 'POST', path: '/sandboxes', field: 'Mutation.createSandbox', status: 201 },
  { method: 'GET', path: '/sandboxes/{id}', field: 'Query.sandbox' },
  { method: 'PUT', path: '/sandboxes/{id}', field: 'Mutation.updateSandbox' },
  { method: 'DELETE', path: '/sandboxes/{id}', field: 'Mutation.deleteSandbox', status: 202 },
  { method: 'POST', path: '/sandboxes/{id}/start', field: 'Mutation.startSandbox', status: 202 },
  { method: 'POST', path: '/sandboxes/{id}/stop', field: 'Mutation.stopSandbox', status: 202 },
  { method: 'POST', path: '/sandboxes/{id}/extend-ttl', field: 'Mutation.extendSandboxTtl' },
  { method: 'POST', path: '/sandboxes/{id}/snapshots', field: 'Mutation.snapshotSandbox', status: 202 },
  { method: 'POST', path: '/sandboxes/{id}/start-from-latest', field: 'Mutation.startSandboxFromLatest', status: 202 },
  { method: 'POST', path: '/sandboxes/{id}/start-from-snapshot', field: 'Mutation.startSandboxFromSnapshot', status: 202 },
  { method: 'POST', path: '/sandboxes/{id}/stop-with-snapshot', field: 'Mutation.stopSandboxWithSnapshot', status: 202 },
  { method: 'POST', path: '/sandboxes/{id}/exec', field: 'Mutation.execSandbox' },
  { method: 'GET', path: '/sandboxes/{id}/files', field: 'Query.sandboxFiles' },
  { method: 'POST', path: '/sandboxes/{id}/files', field: 'Mutation.writeSandboxFiles' },
  { method: 'GET', path: '/sandboxes/{id}/file-content', raw: 'sandboxFileContent' },
  { method: 'GET', path: '/sandboxes/{id}/logs', field: 'Query.sandboxLogs' },
  { method: 'GET', path: '/sandboxes/{id}/logs/lifecycle', field: 'Query.sandboxLifecycle' },
  { method: 'GET', path: '/sandboxes/{id}/stats/history', field: 'Query.sandboxStatsHistory' },
  { method: 'GET', path: '/sandboxes/{id}/ports', field: 'Query.sandboxPorts' },
  { method: 'POST', path: '/sandboxes/{id}/ports', field: 'Mutation.addSandboxPort', status: 201 },

  // /snapshots
  { method: 'GET', path: '/snapshots', field: 'Query.snapshots' },
  { method: 'POST', path: '/snapshots', field: 'Mutation.createSnapshot', status: 202 },
  { method: 'GET', path: '/snapshots/{id}', field: 'Query.snapshot' },
  { method: 'PUT', path: '/snapshots/{id}', field: 'Mutation.updateSnapshot' },
  { method: 'DELETE', path: '/snapshots/{id}', field: 'Mutation.deleteSnapshot' },
  { method: 'POST', path: '/snapshots/{id}/restore', field: 'Mutation.restoreSnapshot', status: 202 },

  // /managed-agents
  { method: 'GET', path: '/managed-agents', pending: SESSIONS },
  { method: 'POST', path: '/managed-agents', pending: SESSIONS },
  { method: 'GET', path: '/managed-agents/{id}', pending: SESSIONS },
  { method: 'POST', path: '/managed-agents/{id}/wake', pending: SESSIONS },
  { method: 'DELETE', path: '/managed-agents/{id}', pending: SESSIONS },
  { method: 'POST', path: '/managed-agents/{id}/fork', pending: SESSIONS },
  { method: 'GET', path: '/managed-agents/{id}/file-content/{hash}', pending: SESSIONS },
  { method: 'GET', path: '/managed-agents/{id}/file', pending: SESSIONS },
  { method: 'GET', path: '/managed-agents/{id}/git-show', pending: SESSIONS },
  { method: 'GET', path: '/managed-agents/{id}/browser-sessions', pending: SESSIONS },
  { method: 'GET', path: '/managed-agents/{id}/messages', pending: SESSIONS },
  { method: 'POST', path: '/managed-agents/{id}/messages', pending: RAW_SSE },

  // /apps
  { method: 'GET', path: '/apps', pending: COMPUTE },
  { method: 'POST', path: '/apps', pending: COMPUTE },
  { method: 'GET', path: '/apps/{idOrSlug}', pending: COMPUTE },
  { method: 'PATCH', path: '/apps/{idOrSlug}', pending: COMPUTE },
  { method: 'DELETE', path: '/apps/{idOrSlug}', pending: COMPUTE },
  { method: 'POST', path: '/apps/{idOrSlug}/deploy', pending: COMPUTE },
  { method: 'POST', path: '/apps/{idOrSlug}/rollback', pending: COMPUTE },
  { method: 'GET', path: '/apps/{idOrSlug}/instances', pending: COMPUTE },
  { method: 'GET', path: '/apps/{idOrSlug}/logs', pending: COMPUTE },
  { method: 'GET', path: '/apps/{idOrSlug}/versions', pending: COMPUTE },
  { method: 'DELETE', path: '/apps/{idOrSlug}/versions/{version}', pending: COMPUTE },

  // /sites
  { method: 'GET', path: '/sites', pending: COMPUTE },
  { method: 'POST', path: '/sites', pending: COMPUTE },
  { method: 'GET', path: '/sites/{id}', pending: COMPUTE },
  { method: 'PATCH', path: '/sites/{id}', pending: COMPUTE },
  { method: 'DELETE', path: '/sites/{id}', pending: COMPUTE },
  { method: 'POST', path: '/sites/{id}/deploy', pending: RAW_UPLOAD },
  { method: 'POST', path: '/sites/{id}/rollback', pending: COMPUTE },
  { method: 'GET', path: '/sites/{id}/versions', pending: COMPUTE },
  { method: 'DELETE', path: '/sites/{id}/versions/{version}', pending: COMPUTE },
  { method: 'GET', path: '/sites/check-slug/{slug}', pending: COMPUTE },

  // /images
  { method: 'GET', path: '/images', pending: COMPUTE },
  { method: 'GET', path: '/images/{id}', pending: COMPUTE },
  { method: 'DELETE', path: '/images/{id}', pending: COMPUTE },
  { method: 'POST', path: '/images/{id}/cancel', pending: COMPUTE },
  { method: 'POST', path: '/images/{id}/tags', pending: COMPUTE },
  { method: 'DELETE', path: '/images/{id}/tags/{tag}', pending: COMPUTE },
  { method: 'GET', path: '/images/tags/list', pending: COMPUTE },
  { method: 'POST', path: '/images/ensure', pending: COMPUTE },
  { method: 'GET', path: '/images/resolve', pending: COMPUTE },

  // /image-registry
  { method: 'POST', path: '/image-registry/check', pending: COMPUTE },
  { method: 'GET', path: '/image-registry/search', pending: COMPUTE },

  // /clusters
  { method: 'POST', path: '/clusters/kind-a', pending: COMPUTE },
  { method: 'POST', path: '/clusters/kind-b', pending: COMPUTE },
  { method: 'GET', path: '/clusters', pending: COMPUTE },
  { method: 'GET', path: '/clusters/{id}', pending: COMPUTE },
  { method: 'PUT', path: '/clusters/{id}/stop', pending: COMPUTE },

  // /workflows
  { method: 'GET', path: '/workflows', field: 'Query.workflows' },
  { method: 'POST', path: '/workflows', field: 'Mutation.createWorkflow', status: 201 },
  { method: 'GET', path: '/workflows/{id}', field: 'Query.workflow' },
  { method: 'PUT', path: '/workflows/{id}', field: 'Mutation.updateWorkflow' },
  { method: 'DELETE', path: '/workflows/{id}', field: 'Mutation.deleteWorkflow' },
  { method: 'POST', path: '/workflows/{id}/deploy', field: 'Mutation.deployWorkflow' },
  { method: 'POST', path: '/workflows/{id}/undeploy', field: 'Mutation.undeployWorkflow' },
  { method: 'POST', path: '/workflows/{id}/execute', field: 'Mutation.executeWorkflow', status: 202 },
  { method: 'POST', path: '/workflows/execute-in-memory', field: 'Mutation.executeWorkflowInMemory', status: 202 },
  { method: 'GET', path: '/workflows/{id}/executions', field: 'Query.workflowExecutions' },
  { method: 'GET', path: '/workflows/{id}/executions/{executionId}', field: 'Query.workflowExecution' },
  { method: 'POST', path: '/workflows/{id}/executions/{executionId}/cancel', field: 'Mutation.cancelWorkflowExecution' },
  { method: 'GET', path: '/workflows/{id}/metrics', field: 'Query.workflowMetrics' },
  { method: 'GET', path: '/workflows/{id}/metrics/timeseries', field: 'Query.workflowMetricsTimeseries' },
  { method: 'GET', path: '/workflows/node-definitions', field: 'Query.workflowNodeDefinitions' },
  { method: 'GET', path: '/workflows/node-definitions/{type}', field: 'Query.workflowNodeDefinition' },
  { method: 'GET', path: '/workflows/plugins/trusted', field: 'Query.trustedWorkflowPlugins' },

  // /webhooks
  { method: '*', path: '/webhooks/v1/{workflowId}/{nodeId}', raw: 'workflowWebhook', public: true },
  { method: '*', path: '/webhooks/v1/{workflowId}/{nodeId}/*', raw: 'workflowWebhook', public: true },

  // /workspaces
  { method: 'GET', path: '/workspaces/{workspaceId}/billing/accounts', pending: BILLING },
  { method: 'POST', path: '/workspaces/{workspaceId}/billing/accounts', pending: BILLING },
  { method: 'POST', path: '/workspaces/{workspaceId}/billing/accounts/link', pending: BILLING },
  { method: 'POST', path: '/workspaces/{workspaceId}/billing/accounts/{billingAccountId}/default', pending: BILLING },
  { method: 'DELETE', path: '/workspaces/{workspaceId}/billing/accounts/{billingAccountId}', pending: BILLING },
  { method: 'GET', path: '/workspaces/{workspaceId}/billing/balance', pending: BILLING },
  { method: 'POST', path: '/workspaces/{workspaceId}/billing/checkout', pending: BILLING },
  { method: 'POST', path: '/workspaces/{workspaceId}/billing/checkout/x402', pending: BILLING },
  { method: 'GET', path: '/workspaces/{workspaceId}/billing/transactions', pending: BILLING },
  { method: 'GET', path: '/workspaces/{workspaceId}/billing/summary', pending: BILLING },
  { method: 'GET', path: '/workspaces/{workspaceId}/billing/usage-overview', pending: BILLING },
  { method: 'GET', path: '/workspaces/{workspaceId}/secrets', field: 'Query.secrets' },
  { method: 'POST', path: '/workspaces/{workspaceId}/secrets', field: 'Mutation.createSecret', status: 201 },
  { method: 'GET', path: '/workspaces/{workspaceId}/secrets/{secretId}', field: 'Query.secret' },
  { method: 'PATCH', path: '/workspaces/{workspaceId}/secrets/{secretId}', field: 'Mutation.updateSecret' },
  { method: 'DELETE', path: '/workspaces/{workspaceId}/secrets/{secretId}', field: 'Mutation.deleteSecret' },
  { method: 'GET', path: '/workspaces/{workspaceId}/rate-limits', field: 'Query.rateLimits' },
  { method: 'POST', path: '/workspaces/{workspaceId}/rate-limits/refresh', field: 'Mutation.refreshRateLimits' },
  { method: 'GET', path: '/workspaces/{workspaceId}/oauth-connections/idp-a', field: 'Query.oauthConnections', fixedArgs: ['provider'] },
  { method: 'POST', path: '/workspaces/{workspaceId}/oauth-connections/idp-a/auth-url', field: 'Mutation.createOAuthConnectionUrl', fixedArgs: ['provider'] },
  { method: 'POST', path: '/workspaces/{workspaceId}/oauth-connections/idp-a/exchange', field: 'Mutation.exchangeOAuthConnectionCode', status: 201, fixedArgs: ['provider'] },
  { method: 'DELETE', path: '/workspaces/{workspaceId}/oauth-connections/idp-a/{connectionId}', field: 'Mutation.deleteOAuthConnection', fixedArgs: ['provider'] },

  // /ai-gateway
  { method: 'GET', path: '/ai-gateway/providers', field: 'Query.aiProviders' },
  { method: 'GET', path: '/ai-gateway/platform-models', field: 'Query.aiPlatformModels' },
  { method: 'GET', path: '/ai-gateway/vendor-b/v1/models', raw: 'aiVendor' },
  { method: 'GET', path: '/ai-gateway/vendor-a/v1/models', raw: 'aiVendor' },
  { method: 'GET', path: '/ai-gateway/vendor-c/v1beta/models', raw: 'aiVendor' },
  { method: 'GET', path: '/ai-gateway/upstreams', field: 'Query.aiUpstreams' },
  { method: 'POST', path: '/ai-gateway/upstreams', field: 'Mutation.createAiUpstream', status: 201 },
  { method: 'GET', path: '/ai-gateway/upstreams/{id}', field: 'Query.aiUpstream' },
  { method: 'PUT', path: '/ai-gateway/upstreams/{id}', field: 'Mutation.updateAiUpstream' },
  { method: 'DELETE', path: '/ai-gateway/upstreams/{id}', field: 'Mutation.deleteAiUpstream' },
  { method: 'POST', path: '/ai-gateway/upstreams/{id}/test', field: 'Mutation.testAiUpstream' },
  { method: 'GET', path: '/ai-gateway/upstreams/{id}/usage', field: 'Query.aiUpstreamUsage' },
  { method: 'GET', path: '/ai-gateway/pools', field: 'Query.aiPools' },
  { method: 'POST', path: '/ai-gateway/pools', field: 'Mutation.createAiPool', status: 201 },
  { method: 'GET', path: '/ai-gateway/pools/{id}', field: 'Query.aiPool' },
  { method: 'DELETE', path: '/ai-gateway/pools/{id}', field: 'Mutation.deleteAiPool' },
  { method: 'POST', path: '/ai-gateway/pools/{id}/members', field: 'Mutation.addAiPoolMember', status: 201 },
  { method: 'DELETE', path: '/ai-gateway/pools/{id}/members/{upstreamId}', field: 'Mutation.removeAiPoolMember' },
  { method: 'DELETE', path: '/ai-gateway/pools/{id}/platform-members/{platformModelId}', field: 'Mutation.removeAiPoolPlatformMember' },
  { method: 'GET', path: '/ai-gateway/keys', field: 'Query.aiKeys' },
  { method: 'POST', path: '/ai-gateway/keys', field: 'Mutation.createAiKey', status: 201 },
  { method: 'DELETE', path: '/ai-gateway/keys/{id}', field: 'Mutation.deleteAiKey' },
  { method: 'POST', path: '/ai-gateway/oauth/vendor-a/*', raw: 'aiOAuth' },
  { method: 'POST', path: '/ai-gateway/oauth/vendor-c/*', raw: 'aiOAuth' },
  { method: 'POST', path: '/ai-gateway/oauth/vendor-b/*', raw: 'aiOAuth' },
  { method: 'GET', path: '/ai-gateway/usage', field: 'Query.aiUsage' },
  { method: 'GET', path: '/ai-gateway/usage/realtime', field: 'Query.aiUsageRealtime' },
  { method: 'GET', path: '/ai-gateway/conversations', field: 'Query.aiConversations' },
  { method: 'GET', path: '/ai-gateway/conversations/{requestId}', field: 'Query.aiConversation' },
  { method: 'POST', path: '/ai-gateway/playground/chat', field: 'Mutation.aiPlaygroundChat' },
  { method: 'POST', path: '/ai-gateway/playground/embeddings', field: 'Mutation.aiPlaygroundEmbeddings' },
  { method: '*', path: '/ai-gateway/vendor-a/v1/*', raw: 'aiVendor' },
  { method: '*', path: '/ai-gateway/vendor-b/v1/*', raw: 'aiVendor' },
  { method: '*', path: '/ai-gateway/vendor-c/v1beta/*', raw: 'aiVendor' },

  // /analytics
  // Public, matched by the edge before the REST layer and forwarded to the analytics subgraph's raw routes (CORS preflights too).
  { method: 'GET', path: '/analytics/track.js', raw: 'analyticsIngest', public: true },
  { method: 'POST', path: '/analytics/track', raw: 'analyticsIngest', public: true },
  { method: 'POST', path: '/analytics/event', raw: 'analyticsIngest', public: true },
  { method: 'POST', path: '/analytics/identify', raw: 'analyticsIngest', public: true },
  { method: 'GET', path: '/analytics/installations', field: 'Query.analyticsInstallations' },
  { method: 'POST', path: '/analytics/installations', field: 'Mutation.createAnalyticsInstallation', status: 201 },
  { method: 'GET', path: '/analytics/installations/{id}', field: 'Query.analyticsInstallation' },
  { method: 'POST', path: '/analytics/installations/{id}', field: 'Mutation.updateAnalyticsInstallation' },
  { method: 'DELETE', path: '/analytics/installations/{id}', field: 'Mutation.deleteAnalyticsInstallation' },
  { method: 'POST', path: '/analytics/installations/{id}/hide', field: 'Mutation.hideAnalyticsInstallation' },
  { method: 'POST', path: '/analytics/installations/{id}/unhide', field: 'Mutation.unhideAnalyticsInstallation' },
  { method: 'GET', path: '/analytics/installations/{id}/script', field: 'Query.analyticsInstallationScript' },
  { method: 'GET', path: '/analytics/dashboard/realtime', field: 'Query.analyticsRealtime' },
  { method: 'GET', path: '/analytics/dashboard/timeseries', field: 'Query.analyticsTimeseries' },
  { method: 'GET', path: '/analytics/dashboard/events', field: 'Query.analyticsEvents' },
  { method: 'GET', path: '/analytics/stats', field: 'Query.analyticsStats' },
  { method: 'GET', path: '/analytics/trajectory', field: 'Query.analyticsTrajectory' },
  { method: 'GET', path: '/analytics/users', field: 'Query.analyticsUsers' },
  { method: 'GET', path: '/analytics/users/profile', field: 'Query.analyticsUserProfile' },
  { method: 'GET', path: '/analytics/funnels', field: 'Query.analyticsFunnels' },
  { method: 'POST', path: '/analytics/funnels', field: 'Mutation.createAnalyticsFunnel', status: 201 },
  { method: 'GET', path: '/analytics/funnels/{id}', field: 'Query.analyticsFunnel' },
  { method: 'POST', path: '/analytics/funnels/{id}', field: 'Mutation.updateAnalyticsFunnel' },
  { method: 'DELETE', path: '/analytics/funnels/{id}', field: 'Mutation.deleteAnalyticsFunnel' },
  { method: 'GET', path: '/analytics/funnels/{id}/analyze', field: 'Query.analyticsFunnelAnalysis' },

  // /v1
  { method: 'GET', path: '/v1/vendor-proxy/status', pending: PROXY_METERING },
  { method: 'GET', path: '/v1/vendor-proxy/usage/{workspaceId}', pending: PROXY_METERING },
  { method: 'POST', path: '/v1/vendor-proxy/report-bandwidth', pending: PROXY_METERING },
  { method: 'GET', path: '/v1/proxy/usage/{workspaceId}', pending: PROXY_METERING },

  // /captcha
  { method: 'POST', path: '/captcha/createTask', pending: CAPTCHA },
  { method: 'POST', path: '/captcha/getTaskResult', pending: CAPTCHA },
  { method: 'GET', path: '/captcha/balance', pending: CAPTCHA },
  { method: 'GET', path: '/captcha/usage', pending: CAPTCHA },
  { method: 'GET', path: '/captcha/getResponse', pending: CAPTCHA },
  { method: 'POST', path: '/captcha/reportAccuracy', pending: CAPTCHA },
  { method: 'POST', path: '/captcha/collect', pending: RAW_TELEMETRY },
];

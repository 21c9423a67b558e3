import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { apiSchemaOf } from '../gateway';
import { SUPERGRAPH_PATH } from '../gateway/compose';
import { loadConfig } from '../core/config';
import { createLogger } from '../core/logger';
import { createRestHandler } from '../rest-compat';
import { ROUTES } from '../rest-compat/routes';

/**
 * The route table against the spec, both ways: every method and path of the spec's Endpoints
 * section is in the table (served or pending), the table has nothing the spec lacks, and every
 * served route's field exists in the composed API schema.
 */
const SPEC_PATH = path.resolve(__dirname, '../../shared/spec/000_96a837eb879bfde7.txt');
const METHOD_LIST = /^(GET|POST|PUT|PATCH|DELETE)(, (GET|POST|PUT|PATCH|DELETE))*$/;

interface SpecRoute {
  method: string;
  path: string;
}

/** Every route of the spec's Endpoints section: table rows, and the prose routes without methods (`*`). */
function specRoutes(text: string): { table: SpecRoute[]; prose: SpecRoute[] } {
  const section = text.slice(text.indexOf('\n## Endpoints'), text.indexOf('\n## ', text.indexOf('\n## Endpoints') + 1));
  const table: SpecRoute[] = [];
  const prose: SpecRoute[] = [];
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (line.startsWith('|') && METHOD_LIST.test(cells[1])) {
      // "/notebooks/config (defaults)": the parenthetical is a note, not part of the path.
      const routePath = cells[2].replace(/\s*\(.*\)$/, '');
      for (const method of cells[1].split(', ')) table.push({ method, path: routePath });
    } else if (/routes exist|route families/.test(line)) {
      // "Four TOTP routes exist: /a, /b." / "…routes exist outside the /workflows prefix at /x and /y."
      const list = line.includes(': ') ? line.slice(line.indexOf(': ') + 2) : line.slice(line.lastIndexOf(' at ') + 4);
      for (const match of list.matchAll(/\/[A-Za-z0-9_\-{}./*]+/g)) prose.push({ method: '*', path: match[0].replace(/\.$/, '') });
    }
  }
  return { table, prose };
}

const key = (r: SpecRoute) => `${r.method} ${r.path}`;
const spec = specRoutes(readFileSync(SPEC_PATH, 'utf8'));
/** A route the spec gives without a method may be served under the one it needs: it stays `*` here. */
const prosePaths = new Set(spec.prose.map((r) => r.path));
const specKey = (r: SpecRoute) => (prosePaths.has(r.path) ? `* ${r.path}` : key(r));

describe('route table against the spec', () => {
  it('reads the whole Endpoints section of the spec', () => {
    expect(spec.table.length).toBe(245);
    expect(spec.prose.map(key).sort()).toEqual(
      [
        '* /auth/totp/setup',
        '* /auth/totp/verify',
        '* /auth/totp/verify-setup',
        '* /auth/totp/disable',
        '* /webhooks/v1/{workflowId}/{nodeId}',
        '* /webhooks/v1/{workflowId}/{nodeId}/*',
        '* /ai-gateway/vendor-a/v1/*',
        '* /ai-gateway/vendor-b/v1/*',
        '* /ai-gateway/vendor-c/v1beta/*',
      ].sort(),
    );
    expect(spec.table.map(key)).toEqual(expect.arrayContaining(['GET /notebooks/config', 'GET /v1/vendor-proxy/status', 'POST /ai-gateway/oauth/vendor-a/*', 'DELETE /analytics/funnels/{id}']));
  });

  it('has every spec route, served or pending', () => {
    const inTable = new Set(ROUTES.map(specKey));
    const missing = [...spec.table, ...spec.prose].map(key).filter((k) => !inTable.has(k));
    expect(missing).toEqual([]);
  });

  it('has no route the spec lacks, and each route once', () => {
    const inSpec = new Set([...spec.table, ...spec.prose].map(key));
    expect(ROUTES.map(specKey).filter((k) => !inSpec.has(k))).toEqual([]);
    expect(new Set(ROUTES.map(specKey)).size).toBe(ROUTES.length);
  });

  it('marks each route served (a Query or Mutation field, or a raw handler) or pending (with a reason), never two of these', () => {
    for (const route of ROUTES) {
      expect({ route: key(route), ok: [route.field, route.raw, route.pending].filter(Boolean).length === 1 }).toEqual({ route: key(route), ok: true });
      if (route.field) expect(route.field).toMatch(/^(Query|Mutation)\.[A-Za-z_]\w*$/);
      if (route.pending) expect(route.pending.length).toBeGreaterThan(10);
    }
  });

  it('serves the routes given to the REST layer so far', () => {
    expect(ROUTES.filter((r) => r.field).map((r) => `${key(r)} → ${r.field}${r.status ? ` ${r.status}` : ''}`)).toEqual([
      'POST /auth/login → Mutation.login',
      'POST /auth/refresh → Mutation.refresh',
      'POST /auth/api-keys → Mutation.createApiKey 201',
      'GET /auth/profile → Query.profile',
      'POST /auth/totp/setup → Mutation.setupTotp',
      'POST /auth/totp/verify → Mutation.verifyTotp',
      'POST /auth/totp/verify-setup → Mutation.verifyTotpSetup',
      'POST /auth/totp/disable → Mutation.disableTotp',
      'GET /sandboxes → Query.sandboxes',
      'POST /sandboxes → Mutation.createSandbox 201',
      'GET /sandboxes/{id} → Query.sandbox',
      'PUT /sandboxes/{id} → Mutation.updateSandbox',
      'DELETE /sandboxes/{id} → Mutation.deleteSandbox 202',
      'POST /sandboxes/{id}/start → Mutation.startSandbox 202',
      'POST /sandboxes/{id}/stop → Mutation.stopSandbox 202',
      'POST /sandboxes/{id}/extend-ttl → Mutation.extendSandboxTtl',
      'POST /sandboxes/{id}/snapshots → Mutation.snapshotSandbox 202',
      'POST /sandboxes/{id}/start-from-latest → Mutation.startSandboxFromLatest 202',
      'POST /sandboxes/{id}/start-from-snapshot → Mutation.startSandboxFromSnapshot 202',
      'POST /sandboxes/{id}/stop-with-snapshot → Mutation.stopSandboxWithSnapshot 202',
      'POST /sandboxes/{id}/exec → Mutation.execSandbox',
      'GET /sandboxes/{id}/files → Query.sandboxFiles',
      'POST /sandboxes/{id}/files → Mutation.writeSandboxFiles',
      'GET /sandboxes/{id}/logs → Query.sandboxLogs',
      'GET /sandboxes/{id}/logs/lifecycle → Query.sandboxLifecycle',
      'GET /sandboxes/{id}/stats/history → Query.sandboxStatsHistory',
      'GET /sandboxes/{id}/ports → Query.sandboxPorts',
      'POST /sandboxes/{id}/ports → Mutation.addSandboxPort 201',
      'GET /snapshots → Query.snapshots',
      'POST /snapshots → Mutation.createSnapshot 202',
      'GET /snapshots/{id} → Query.snapshot',
      'PUT /snapshots/{id} → Mutation.updateSnapshot',
      'DELETE /snapshots/{id} → Mutation.deleteSnapshot',
      'POST /snapshots/{id}/restore → Mutation.restoreSnapshot 202',
      'GET /workflows → Query.workflows',
      'POST /workflows → Mutation.createWorkflow 201',
      'GET /workflows/{id} → Query.workflow',
      'PUT /workflows/{id} → Mutation.updateWorkflow',
      'DELETE /workflows/{id} → Mutation.deleteWorkflow',
      'POST /workflows/{id}/deploy → Mutation.deployWorkflow',
      'POST /workflows/{id}/undeploy → Mutation.undeployWorkflow',
      'POST /workflows/{id}/execute → Mutation.executeWorkflow 202',
      'POST /workflows/execute-in-memory → Mutation.executeWorkflowInMemory 202',
      'GET /workflows/{id}/executions → Query.workflowExecutions',
      'GET /workflows/{id}/executions/{executionId} → Query.workflowExecution',
      'POST /workflows/{id}/executions/{executionId}/cancel → Mutation.cancelWorkflowExecution',
      'GET /workflows/{id}/metrics → Query.workflowMetrics',
      'GET /workflows/{id}/metrics/timeseries → Query.workflowMetricsTimeseries',
      'GET /workflows/node-definitions → Query.workflowNodeDefinitions',
      'GET /workflows/node-definitions/{type} → Query.workflowNodeDefinition',
      'GET /workflows/plugins/trusted → Query.trustedWorkflowPlugins',
      'GET /workspaces/{workspaceId}/secrets → Query.secrets',
      'POST /workspaces/{workspaceId}/secrets → Mutation.createSecret 201',
      'GET /workspaces/{workspaceId}/secrets/{secretId} → Query.secret',
      'PATCH /workspaces/{workspaceId}/secrets/{secretId} → Mutation.updateSecret',
      'DELETE /workspaces/{workspaceId}/secrets/{secretId} → Mutation.deleteSecret',
      'GET /workspaces/{workspaceId}/rate-limits → Query.rateLimits',
      'POST /workspaces/{workspaceId}/rate-limits/refresh → Mutation.refreshRateLimits',
      'GET /workspaces/{workspaceId}/oauth-connections/idp-a → Query.oauthConnections',
      'POST /workspaces/{workspaceId}/oauth-connections/idp-a/auth-url → Mutation.createOAuthConnectionUrl',
      'POST /workspaces/{workspaceId}/oauth-connections/idp-a/exchange → Mutation.exchangeOAuthConnectionCode 201',
      'DELETE /workspaces/{workspaceId}/oauth-connections/idp-a/{connectionId} → Mutation.deleteOAuthConnection',
      'GET /ai-gateway/providers → Query.aiProviders',
      'GET /ai-gateway/platform-models → Query.aiPlatformModels',
      'GET /ai-gateway/upstreams → Query.aiUpstreams',
      'POST /ai-gateway/upstreams → Mutation.createAiUpstream 201',
      'GET /ai-gateway/upstreams/{id} → Query.aiUpstream',
      'PUT /ai-gateway/upstreams/{id} → Mutation.updateAiUpstream',
      'DELETE /ai-gateway/upstreams/{id} → Mutation.deleteAiUpstream',
      'POST /ai-gateway/upstreams/{id}/test → Mutation.testAiUpstream',
      'GET /ai-gateway/upstreams/{id}/usage → Query.aiUpstreamUsage',
      'GET /ai-gateway/pools → Query.aiPools',
      'POST /ai-gateway/pools → Mutation.createAiPool 201',
      'GET /ai-gateway/pools/{id} → Query.aiPool',
      'DELETE /ai-gateway/pools/{id} → Mutation.deleteAiPool',
      'POST /ai-gateway/pools/{id}/members → Mutation.addAiPoolMember 201',
      'DELETE /ai-gateway/pools/{id}/members/{upstreamId} → Mutation.removeAiPoolMember',
      'DELETE /ai-gateway/pools/{id}/platform-members/{platformModelId} → Mutation.removeAiPoolPlatformMember',
      'GET /ai-gateway/keys → Query.aiKeys',
      'POST /ai-gateway/keys → Mutation.createAiKey 201',
      'DELETE /ai-gateway/keys/{id} → Mutation.deleteAiKey',
      'GET /ai-gateway/usage → Query.aiUsage',
      'GET /ai-gateway/usage/realtime → Query.aiUsageRealtime',
      'GET /ai-gateway/conversations → Query.aiConversations',
      'GET /ai-gateway/conversations/{requestId} → Query.aiConversation',
      'POST /ai-gateway/playground/chat → Mutation.aiPlaygroundChat',
      'POST /ai-gateway/playground/embeddings → Mutation.aiPlaygroundEmbeddings',
      'GET /analytics/installations → Query.analyticsInstallations',
      'POST /analytics/installations → Mutation.createAnalyticsInstallation 201',
      'GET /analytics/installations/{id} → Query.analyticsInstallation',
      'POST /analytics/installations/{id} → Mutation.updateAnalyticsInstallation',
      'DELETE /analytics/installations/{id} → Mutation.deleteAnalyticsInstallation',
      'POST /analytics/installations/{id}/hide → Mutation.hideAnalyticsInstallation',
      'POST /analytics/installations/{id}/unhide → Mutation.unhideAnalyticsInstallation',
      'GET /analytics/installations/{id}/script → Query.analyticsInstallationScript',
      'GET /analytics/dashboard/realtime → Query.analyticsRealtime',
      'GET /analytics/dashboard/timeseries → Query.analyticsTimeseries',
      'GET /analytics/dashboard/events → Query.analyticsEvents',
      'GET /analytics/stats → Query.analyticsStats',
      'GET /analytics/trajectory → Query.analyticsTrajectory',
      'GET /analytics/users → Query.analyticsUsers',
      'GET /analytics/users/profile → Query.analyticsUserProfile',
      'GET /analytics/funnels → Query.analyticsFunnels',
      'POST /analytics/funnels → Mutation.createAnalyticsFunnel 201',
      'GET /analytics/funnels/{id} → Query.analyticsFunnel',
      'POST /analytics/funnels/{id} → Mutation.updateAnalyticsFunnel',
      'DELETE /analytics/funnels/{id} → Mutation.deleteAnalyticsFunnel',
      'GET /analytics/funnels/{id}/analyze → Query.analyticsFunnelAnalysis',
    ]);
    expect(ROUTES.filter((r) => r.raw).map((r) => `${key(r)} → ${r.raw}`)).toEqual([
      'GET /auth/idp-a → idpLogin',
      'GET /auth/idp-b → idpLogin',
      'GET /sandboxes/{id}/file-content → sandboxFileContent',
      '* /webhooks/v1/{workflowId}/{nodeId} → workflowWebhook',
      '* /webhooks/v1/{workflowId}/{nodeId}/* → workflowWebhook',
      'GET /ai-gateway/vendor-b/v1/models → aiVendor',
      'GET /ai-gateway/vendor-a/v1/models → aiVendor',
      'GET /ai-gateway/vendor-c/v1beta/models → aiVendor',
      'POST /ai-gateway/oauth/vendor-a/* → aiOAuth',
      'POST /ai-gateway/oauth/vendor-c/* → aiOAuth',
      'POST /ai-gateway/oauth/vendor-b/* → aiOAuth',
      '* /ai-gateway/vendor-a/v1/* → aiVendor',
      '* /ai-gateway/vendor-b/v1/* → aiVendor',
      '* /ai-gateway/vendor-c/v1beta/* → aiVendor',
      'GET /analytics/track.js → analyticsIngest',
      'POST /analytics/track → analyticsIngest',
      'POST /analytics/event → analyticsIngest',
      'POST /analytics/identify → analyticsIngest',
    ]);
    expect(ROUTES.filter((r) => r.pending)).toHaveLength(128);
  });
});

describe('route table against the composed API schema', () => {
  const composed = existsSync(SUPERGRAPH_PATH);
  (composed ? it : it.skip)('finds every served field in gateway/supergraph.graphql, with its path parameters as arguments', () => {
    const schema = apiSchemaOf(readFileSync(SUPERGRAPH_PATH, 'utf8'));
    for (const route of ROUTES.filter((r) => r.field)) {
      const [root, name] = route.field!.split('.');
      const field = (root === 'Query' ? schema.getQueryType() : schema.getMutationType())?.getFields()[name];
      expect({ route: key(route), found: Boolean(field) }).toEqual({ route: key(route), found: true });
      for (const [, param] of route.path.matchAll(/\{([^}]+)\}/g)) expect(field!.args.map((a) => a.name)).toContain(param);
    }
    // The same check the gateway makes at startup, plus sofa's operations validated against the schema.
    const handler = createRestHandler({ config: loadConfig({ NODE_ENV: 'test' }), logger: createLogger('silent'), schema, execute: async () => ({}) });
    expect(Object.keys(handler.operations)).toHaveLength(ROUTES.filter((r) => r.field).length);
  });
});

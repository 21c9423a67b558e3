import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { PLAN_NAMES, parseRateLimitOverrides, type PlanName, type RateLimitOverrides } from './rate-limits';

/** The seven domains of the graph, in the order they are composed and started. */
export const SUBGRAPH_NAMES = ['identity', 'compute', 'sessions', 'workflows', 'ai', 'billing', 'analytics'] as const;
export type SubgraphName = (typeof SUBGRAPH_NAMES)[number];

/** Everything `PLATFORM_SERVICES` may select. `gateway` also serves the REST layer. */
export const SERVICE_NAMES = [...SUBGRAPH_NAMES, 'gateway', 'worker'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

const DEFAULT_SUBGRAPH_PORTS: Record<SubgraphName, number> = {
  identity: 4001,
  compute: 4002,
  sessions: 4003,
  workflows: 4004,
  ai: 4005,
  billing: 4006,
  analytics: 4007,
};

/**
 * Development defaults of the secrets. They are public (this file is), so production refuses
 * to start with any of them missing.
 */
const DEV_SECRETS = {
  internalSigningSecret: 'dev-internal-signing-secret-change-me',
  jwtSecret: 'dev-jwt-secret-change-me-please-32b',
  secretsEncryptionKey: Buffer.alloc(32, 7).toString('base64'),
  adminPassword: 'admin-dev-password',
};

export interface PlatformConfig {
  /** `development`, `test` or `production`. @defaultValue development */
  env: 'development' | 'test' | 'production';
  /** Address every listener binds to. @defaultValue 127.0.0.1 */
  bindHost: string;
  /** Port of the edge: REST under /v1 and GraphQL (HTTP and graphql-ws) under /graphql. @defaultValue 8080 */
  port: number;
  /** Services this process runs (`PLATFORM_SERVICES`). @defaultValue all of them */
  services: ServiceName[];
  /** Port each subgraph listens on; 0 picks a free one. */
  subgraphPorts: Record<SubgraphName, number>;
  /** Where the gateway finds each subgraph; unset ones are found on this host at their port. */
  subgraphUrls: Partial<Record<SubgraphName, string>>;
  /** PostgreSQL connection string; unset means an embedded PostgreSQL under dataDir. */
  databaseUrl?: string;
  /** Redis connection string; unset means a redis-server the launcher starts. */
  redisUrl?: string;
  /** Prefix of every Redis key, queue and channel of this deployment. @defaultValue platform */
  redisPrefix: string;
  /** Folder for the embedded PostgreSQL and Redis. @defaultValue .data */
  dataDir: string;
  /** HMAC key the gateway signs forwarded principals with. */
  internalSigningSecret: string;
  /** HS256 key of access tokens. */
  jwtSecret: string;
  /** 32-byte AES-256-GCM key for secrets at rest (base64). */
  secretsEncryptionKey: Buffer;
  /** Port of the embedded PostgreSQL of `npm start`; unset: 5433, or a free one when taken. */
  embeddedPostgresPort?: number;
  /** Port of the redis-server of `npm start`; unset: 6380, or a free one when taken. */
  embeddedRedisPort?: number;
  /** Whether PLATFORM_ADMIN_PASSWORD was given (else the development default applies). */
  adminPasswordConfigured: boolean;
  /** Admin created on first boot. @defaultValue admin */
  adminUsername: string;
  adminPassword: string;
  /** Lifetime of access tokens in seconds. @defaultValue 900 */
  accessTokenTtlSeconds: number;
  /** Lifetime of refresh tokens in seconds. @defaultValue 2592000 (30 days) */
  refreshTokenTtlSeconds: number;
  /** Largest request body accepted, in bytes. @defaultValue 1048576 */
  maxBodyBytes: number;
  /** Deepest GraphQL selection accepted. @defaultValue 12 */
  graphqlMaxDepth: number;
  /** Highest estimated GraphQL cost accepted. @defaultValue 10000 */
  graphqlMaxCost: number;
  /** Failed logins allowed per username per window. @defaultValue 5 */
  loginFailuresPerUsername: number;
  /** Failed logins allowed per client address per window. @defaultValue 20 */
  loginFailuresPerAddress: number;
  /** Window of the failed-login throttle, seconds. @defaultValue 900 */
  loginFailureWindowSeconds: number;
  /** Apollo Studio usage reporting, on when set. */
  apolloKey?: string;
  apolloGraphRef?: string;
  /** Where usage reports go (Apollo's ingress unless set; tests point it at a stand-in). */
  apolloUsageReportingUrl?: string;
  /** Port of the worker's /healthz and /readyz; 0 picks a free one. @defaultValue 4010 */
  workerHealthPort: number;
  /** Worker concurrency per queue. @defaultValue 4 */
  workerConcurrency: number;
  /** Cron of the maintenance purge of expired refresh tokens. @defaultValue every hour */
  refreshTokenPurgeCron: string;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /**
   * External base URL of the edge, without /v1 (`PUBLIC_URL`), used in redirect URIs given to
   * identity providers. Unset: the address the gateway listens on.
   */
  publicUrl?: string;
  /**
   * Where a browser sign-in through an identity provider ends (`CONSOLE_URL`): the console is
   * sent there with a one-time handoff code. Unset: publicUrl.
   */
  consoleUrl?: string;
  /** Configured identity providers (`IDP_A_*`, `IDP_B_*`); an absent one answers 503. */
  identityProviders: Partial<Record<IdpName, IdentityProviderConfig>>;
  /** Lifetime of a pending OAuth state (sign-in or workspace connection), seconds. @defaultValue 600 */
  oauthStateTtlSeconds: number;
  /** Issuer label in otpauth URIs (what authenticator apps show). @defaultValue Workspace Platform */
  totpIssuer: string;
  /** Lifetime of the MFA challenge login answers a TOTP user, seconds. @defaultValue 300 */
  mfaChallengeTtlSeconds: number;
  /** Failed TOTP codes allowed per user per window. @defaultValue 5 */
  totpFailuresPerWindow: number;
  /** Window of the TOTP throttle, seconds. @defaultValue 900 */
  totpFailureWindowSeconds: number;
  /** Whether the gateway enforces request rate limits (`RATE_LIMITS_DISABLED=true` turns them off). @defaultValue true */
  rateLimitsEnabled: boolean;
  /** Plan of a workspace with none recorded. @defaultValue free */
  defaultPlan: PlanName;
  /** `RATE_LIMIT_OVERRIDES`: JSON `{"<workspaceId>" or "*": {"readRequestsPerMinute": n, ...}}`. */
  rateLimitOverrides: RateLimitOverrides;
  /** Requests per minute per client address without credentials (login, public routes). @defaultValue 300 */
  anonymousRequestsPerMinute: number;
  /** The compute domain's container engine and sandbox bounds (`COMPUTE_*`, `DOCKER_*`, `GPU_*`). */
  compute: ComputeConfig;
  /** The AI gateway (`AI_*`). */
  ai: AiConfig;
  /** Workflows: trusted node plugins and bounds (`WORKFLOW_*`). */
  workflows: WorkflowsConfig;
}

/** Settings of the workflows domain. */
export interface WorkflowsConfig {
  /** `WORKFLOW_TRUSTED_PLUGINS`: packages (comma list) whose node types are loaded. @defaultValue none */
  trustedPlugins: string[];
  /** Largest webhook request body, bytes (`WORKFLOW_WEBHOOK_MAX_BODY_BYTES`). @defaultValue 1048576 */
  webhookMaxBodyBytes: number;
  /** Execution timeout when a workflow's settings give none, seconds (`WORKFLOW_EXECUTION_DEFAULT_TIMEOUT_SECONDS`). @defaultValue 300 */
  executionDefaultTimeoutSeconds: number;
  /** Executions one worker process runs side by side (`WORKFLOW_WORKER_CONCURRENCY`). @defaultValue 16 */
  workerConcurrency: number;
}

/** A model the operator offers every workspace (`AI_PLATFORM_MODELS`); its credential is the operator's. */
export interface PlatformModelConfig {
  /** Stable id pools refer to (`pm_…` or any slug). */
  id: string;
  /** The model name clients send. */
  model: string;
  displayName: string;
  api: 'openai' | 'anthropic' | 'gemini';
  baseUrl: string;
  apiKey: string;
  /** The upstream's own model name, when it differs. */
  upstreamModel?: string;
}

/** Settings of the AI gateway (subgraphs/ai/README.md). */
export interface AiConfig {
  /** `AI_PLATFORM_MODELS`: JSON array of PlatformModelConfig. @defaultValue none */
  platformModels: PlatformModelConfig[];
  /** Failures in a row after which an upstream is skipped. @defaultValue 5 */
  circuitFailureThreshold: number;
  /** How long a tripped upstream is skipped before one trial request, ms. @defaultValue 30000 */
  circuitOpenMs: number;
  /** First backoff between failover attempts, ms (doubles per attempt). @defaultValue 50 */
  retryBackoffMs: number;
  /** Bodies larger than this are not kept in conversations, bytes. @defaultValue 262144 */
  conversationMaxBytes: number;
  /** Largest request body of the vendor routes, bytes. @defaultValue 10485760 */
  maxRequestBytes: number;
  /** Used for `/ai-gateway/oauth/vendor-*`: per vendor token, the OAuth 2 endpoints and client. */
  oauth: Partial<Record<'vendor-a' | 'vendor-b' | 'vendor-c', { authorizationUrl: string; tokenUrl: string; clientId: string; clientSecret?: string; scopes: string[]; redirectUri?: string }>>;
}

/** Settings of sandboxes, snapshots and the container engine (subgraphs/compute/README.md). */
export interface ComputeConfig {
  /** Docker engine: `DOCKER_HOST` (tcp://host:port or unix:///path); unset: the local socket. */
  dockerHost?: string;
  /** The default sandbox image (`images/sandbox`), built by scripts/build-images.sh; clients name it in `image`. @defaultValue platform/sandbox:bookworm */
  defaultImage: string;
  /**
   * Label value that marks this deployment's containers (`COMPUTE_DEPLOYMENT_ID`), so that two
   * platforms sharing one engine never reconcile each other's containers. @defaultValue REDIS_PREFIX
   */
  deploymentId: string;
  /** Whole GPUs by type (`GPU_INVENTORY`, e.g. `h100:0,1;a10:2`): type → device ids. @defaultValue none */
  gpuInventory: Record<string, string[]>;
  /** Pass GPUs as nvidia device requests (`GPU_DEVICE_REQUESTS=false`: only NVIDIA_VISIBLE_DEVICES, for engines without the nvidia runtime). @defaultValue true */
  gpuDeviceRequests: boolean;
  /** Longest maxLifetimeSeconds, and longest lifetime extend-ttl may reach. @defaultValue 604800 (7 days) */
  maxLifetimeSeconds: number;
  /** Seconds between resource samples of running sandboxes (stats history and metering). @defaultValue 10 */
  statsIntervalSeconds: number;
  /** How long stats samples are kept, hours. @defaultValue 24 */
  statsRetentionHours: number;
  /** Seconds between reconciler runs. @defaultValue 30 */
  reconcileIntervalSeconds: number;
  /** A sandbox in a transitional state longer than this with no job behind it is healed. @defaultValue 120 */
  stuckAfterSeconds: number;
  /** BullMQ lock of a compute job: a worker silent this long is presumed dead and its job retried. @defaultValue 30000 */
  jobLockMs: number;
  /** Longest exec timeout, seconds. @defaultValue 600 */
  execMaxTimeoutSeconds: number;
  /** Output kept per stream of one exec, bytes. @defaultValue 1048576 */
  execMaxOutputBytes: number;
  /** Largest file file-content returns, bytes. @defaultValue 10485760 */
  fileReadMaxBytes: number;
  /** Sandboxes one worker process starts side by side. @defaultValue 8 */
  workerConcurrency: number;
}

/** The identity providers of the spec's neutral tokens; each may be configured or not. */
export const IDP_NAMES = ['idp-a', 'idp-b'] as const;
export type IdpName = (typeof IDP_NAMES)[number];

/**
 * One identity provider (`IDP_A_*` / `IDP_B_*`). Either an issuer whose discovery document
 * gives the endpoints, or explicit endpoints. `oidc` providers are trusted by their verified ID
 * token (nonce checked); `oauth2` providers by their userinfo endpoint.
 */
export interface IdentityProviderConfig {
  name: IdpName;
  protocol: 'oidc' | 'oauth2';
  /** OIDC issuer; alone, its discovery document gives the endpoints. */
  issuer?: string;
  /** Explicit endpoints (all of them instead of discovery). */
  authorizationUrl?: string;
  tokenUrl?: string;
  userinfoUrl?: string;
  /** Key set verifying ID tokens, for `oidc` with explicit endpoints. */
  jwksUrl?: string;
  clientId: string;
  clientSecret?: string;
  /** Scopes asked at sign-in. @defaultValue openid email profile (oidc), email profile (oauth2) */
  scopes: string[];
  /** Scopes asked when a workspace connects to the provider. @defaultValue scopes plus offline_access (oidc) */
  connectionScopes: string[];
  /** Redirect URI of workspace connections when auth-url is not given one. */
  connectionRedirectUri?: string;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

/**
 * Reads and validates the environment once, at boot. Every problem is reported together, so
 * an operator fixes them in one go. Nothing else in the platform reads process.env.
 */
export function loadConfig(env: Env = process.env, overrides: Partial<PlatformConfig> = {}): PlatformConfig {
  const problems: string[] = [];
  const nodeEnv = (env.NODE_ENV ?? 'development') as PlatformConfig['env'];
  if (!['development', 'test', 'production'].includes(nodeEnv)) problems.push(`NODE_ENV must be development, test or production, got "${nodeEnv}"`);
  const production = nodeEnv === 'production';

  const int = (name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      problems.push(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
      return fallback;
    }
    return value;
  };
  const optionalPort = (name: string): number | undefined => (env[name] ? int(name, 0, 0, 65535) : undefined);
  const secret = (name: string, fallback: string, minLength: number): string => {
    const raw = env[name];
    if (raw === undefined || raw === '') {
      if (production) problems.push(`${name} is required in production`);
      return fallback;
    }
    if (raw.length < minLength) problems.push(`${name} must be at least ${minLength} characters`);
    return raw;
  };

  const servicesRaw = env.PLATFORM_SERVICES?.trim();
  let services: ServiceName[] = [...SERVICE_NAMES];
  if (servicesRaw) {
    const requested = servicesRaw.split(',').map((s) => s.trim()).filter(Boolean);
    const unknown = requested.filter((s) => !(SERVICE_NAMES as readonly string[]).includes(s));
    if (unknown.length) problems.push(`PLATFORM_SERVICES has unknown services: ${unknown.join(', ')} (known: ${SERVICE_NAMES.join(', ')})`);
    services = requested.filter((s): s is ServiceName => (SERVICE_NAMES as readonly string[]).includes(s));
  }

  const subgraphPorts = {} as Record<SubgraphName, number>;
  const subgraphUrls: Partial<Record<SubgraphName, string>> = {};
  for (const name of SUBGRAPH_NAMES) {
    const upper = name.toUpperCase();
    subgraphPorts[name] = int(`${upper}_SUBGRAPH_PORT`, DEFAULT_SUBGRAPH_PORTS[name], 0, 65535);
    const url = env[`${upper}_SUBGRAPH_URL`];
    if (url) {
      if (!/^https?:\/\//.test(url)) problems.push(`${upper}_SUBGRAPH_URL must be an http(s) URL`);
      subgraphUrls[name] = url;
    }
  }

  const keyRaw = secret('SECRETS_ENCRYPTION_KEY', DEV_SECRETS.secretsEncryptionKey, 1);
  const secretsEncryptionKey = Buffer.from(keyRaw, 'base64');
  if (secretsEncryptionKey.length !== 32) problems.push('SECRETS_ENCRYPTION_KEY must be 32 bytes, base64 encoded (openssl rand -base64 32)');

  if (env.APOLLO_KEY && !env.APOLLO_GRAPH_REF) problems.push('APOLLO_GRAPH_REF (graph-id@variant) is required when APOLLO_KEY is set');

  const logLevel = (env.LOG_LEVEL ?? (nodeEnv === 'test' ? 'warn' : 'info')) as PlatformConfig['logLevel'];
  if (!['debug', 'info', 'warn', 'error', 'silent'].includes(logLevel)) problems.push(`LOG_LEVEL must be debug, info, warn, error or silent`);

  const url = (name: string): string | undefined => {
    const raw = env[name];
    if (!raw) return undefined;
    try {
      const parsed = new URL(raw);
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('scheme');
    } catch {
      problems.push(`${name} must be an http(s) URL, got "${raw}"`);
      return undefined;
    }
    return raw.replace(/\/+$/, '');
  };
  const list = (raw: string | undefined): string[] | undefined => (raw ? raw.split(/[\s,]+/).filter(Boolean) : undefined);

  const identityProviders: Partial<Record<IdpName, IdentityProviderConfig>> = {};
  for (const name of IDP_NAMES) {
    const p = name.replace('-', '_').toUpperCase();
    const clientId = env[`${p}_CLIENT_ID`];
    if (!clientId) continue;
    const issuer = url(`${p}_ISSUER`);
    const authorizationUrl = url(`${p}_AUTHORIZATION_URL`);
    const tokenUrl = url(`${p}_TOKEN_URL`);
    const userinfoUrl = url(`${p}_USERINFO_URL`);
    const jwksUrl = url(`${p}_JWKS_URL`);
    const protocol = (env[`${p}_PROTOCOL`] || (issuer ? 'oidc' : 'oauth2')) as IdentityProviderConfig['protocol'];
    if (protocol !== 'oidc' && protocol !== 'oauth2') problems.push(`${p}_PROTOCOL must be oidc or oauth2`);
    if (!issuer && !authorizationUrl) problems.push(`${name}: set ${p}_ISSUER (discovery) or ${p}_AUTHORIZATION_URL and ${p}_TOKEN_URL`);
    if (authorizationUrl && !tokenUrl) problems.push(`${name}: ${p}_TOKEN_URL is required with ${p}_AUTHORIZATION_URL`);
    if (authorizationUrl && protocol === 'oidc' && (!issuer || !jwksUrl)) problems.push(`${name}: an oidc provider with explicit endpoints needs ${p}_ISSUER and ${p}_JWKS_URL`);
    if (authorizationUrl && protocol === 'oauth2' && !userinfoUrl) problems.push(`${name}: an oauth2 provider needs ${p}_USERINFO_URL`);
    const scopes = list(env[`${p}_SCOPES`]) ?? (protocol === 'oidc' ? ['openid', 'email', 'profile'] : ['email', 'profile']);
    identityProviders[name] = {
      name,
      protocol,
      issuer,
      authorizationUrl,
      tokenUrl,
      userinfoUrl,
      jwksUrl,
      clientId,
      clientSecret: env[`${p}_CLIENT_SECRET`] || undefined,
      scopes,
      connectionScopes: list(env[`${p}_CONNECTION_SCOPES`]) ?? (protocol === 'oidc' ? [...scopes, 'offline_access'] : scopes),
      connectionRedirectUri: url(`${p}_CONNECTION_REDIRECT_URI`),
    };
  }

  const defaultPlan = (env.DEFAULT_PLAN || 'free') as PlanName;
  if (!(PLAN_NAMES as readonly string[]).includes(defaultPlan)) problems.push(`DEFAULT_PLAN must be one of ${PLAN_NAMES.join(', ')}`);
  const rateLimitsDisabled = env.RATE_LIMITS_DISABLED ?? 'false';
  if (!['true', 'false', '1', '0'].includes(rateLimitsDisabled)) problems.push('RATE_LIMITS_DISABLED must be true or false');

  const config: PlatformConfig = {
    env: nodeEnv,
    bindHost: env.BIND_HOST || '127.0.0.1',
    port: int('PORT', 8080, 0, 65535),
    services,
    subgraphPorts,
    subgraphUrls,
    databaseUrl: env.DATABASE_URL || undefined,
    redisUrl: env.REDIS_URL || undefined,
    redisPrefix: env.REDIS_PREFIX || 'platform',
    dataDir: path.resolve(env.DATA_DIR || '.data'),
    internalSigningSecret: secret('INTERNAL_SIGNING_SECRET', DEV_SECRETS.internalSigningSecret, 32),
    jwtSecret: secret('JWT_SECRET', DEV_SECRETS.jwtSecret, 32),
    secretsEncryptionKey,
    embeddedPostgresPort: optionalPort('EMBEDDED_PG_PORT'),
    embeddedRedisPort: optionalPort('EMBEDDED_REDIS_PORT'),
    adminPasswordConfigured: Boolean(env.PLATFORM_ADMIN_PASSWORD),
    adminUsername: env.PLATFORM_ADMIN_USERNAME || 'admin',
    adminPassword: secret('PLATFORM_ADMIN_PASSWORD', DEV_SECRETS.adminPassword, 12),
    accessTokenTtlSeconds: int('ACCESS_TOKEN_TTL_SECONDS', 900, 30, 86400),
    refreshTokenTtlSeconds: int('REFRESH_TOKEN_TTL_SECONDS', 30 * 86400, 60, 365 * 86400),
    maxBodyBytes: int('MAX_BODY_BYTES', 1024 * 1024, 1024, 100 * 1024 * 1024),
    graphqlMaxDepth: int('GRAPHQL_MAX_DEPTH', 12, 2, 100),
    graphqlMaxCost: int('GRAPHQL_MAX_COST', 10000, 10, 10_000_000),
    loginFailuresPerUsername: int('LOGIN_FAILURES_PER_USERNAME', 5, 1, 1000),
    loginFailuresPerAddress: int('LOGIN_FAILURES_PER_ADDRESS', 20, 1, 100000),
    loginFailureWindowSeconds: int('LOGIN_FAILURE_WINDOW_SECONDS', 900, 1, 86400),
    apolloKey: env.APOLLO_KEY || undefined,
    apolloGraphRef: env.APOLLO_GRAPH_REF || undefined,
    apolloUsageReportingUrl: env.APOLLO_USAGE_REPORTING_URL || undefined,
    workerHealthPort: int('WORKER_HEALTH_PORT', 4010, 0, 65535),
    workerConcurrency: int('WORKER_CONCURRENCY', 4, 1, 256),
    refreshTokenPurgeCron: env.REFRESH_TOKEN_PURGE_CRON || '0 * * * *',
    logLevel,
    publicUrl: url('PUBLIC_URL'),
    consoleUrl: url('CONSOLE_URL'),
    identityProviders,
    oauthStateTtlSeconds: int('OAUTH_STATE_TTL_SECONDS', 600, 30, 3600),
    totpIssuer: env.TOTP_ISSUER || 'Workspace Platform',
    mfaChallengeTtlSeconds: int('MFA_CHALLENGE_TTL_SECONDS', 300, 30, 3600),
    totpFailuresPerWindow: int('TOTP_FAILURES_PER_WINDOW', 5, 1, 1000),
    totpFailureWindowSeconds: int('TOTP_FAILURE_WINDOW_SECONDS', 900, 1, 86400),
    rateLimitsEnabled: !['true', '1'].includes(rateLimitsDisabled),
    defaultPlan,
    rateLimitOverrides: parseRateLimitOverrides(env.RATE_LIMIT_OVERRIDES, problems),
    anonymousRequestsPerMinute: int('RATE_LIMIT_ANONYMOUS_PER_MINUTE', 300, 1, 10_000_000),
    compute: {
      dockerHost: env.DOCKER_HOST || undefined,
      defaultImage: env.COMPUTE_DEFAULT_IMAGE || 'platform/sandbox:bookworm',
      deploymentId: env.COMPUTE_DEPLOYMENT_ID || env.REDIS_PREFIX || 'platform',
      gpuInventory: parseGpuInventory(env.GPU_INVENTORY, problems),
      gpuDeviceRequests: !['false', '0'].includes((env.GPU_DEVICE_REQUESTS ?? '').toLowerCase()),
      maxLifetimeSeconds: int('COMPUTE_MAX_LIFETIME_SECONDS', 7 * 86400, 60, 365 * 86400),
      statsIntervalSeconds: int('COMPUTE_STATS_INTERVAL_SECONDS', 10, 1, 3600),
      statsRetentionHours: int('COMPUTE_STATS_RETENTION_HOURS', 24, 1, 24 * 90),
      reconcileIntervalSeconds: int('COMPUTE_RECONCILE_INTERVAL_SECONDS', 30, 1, 3600),
      stuckAfterSeconds: int('COMPUTE_STUCK_AFTER_SECONDS', 120, 1, 86400),
      jobLockMs: int('COMPUTE_JOB_LOCK_MS', 30_000, 1000, 600_000),
      execMaxTimeoutSeconds: int('COMPUTE_EXEC_MAX_TIMEOUT_SECONDS', 600, 1, 86400),
      execMaxOutputBytes: int('COMPUTE_EXEC_MAX_OUTPUT_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
      fileReadMaxBytes: int('COMPUTE_FILE_READ_MAX_BYTES', 10 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
      workerConcurrency: int('COMPUTE_WORKER_CONCURRENCY', 8, 1, 256),
    },
    ai: {
      platformModels: parsePlatformModels(env.AI_PLATFORM_MODELS, problems),
      circuitFailureThreshold: int('AI_CIRCUIT_FAILURE_THRESHOLD', 5, 1, 1000),
      circuitOpenMs: int('AI_CIRCUIT_OPEN_MS', 30_000, 100, 3_600_000),
      retryBackoffMs: int('AI_RETRY_BACKOFF_MS', 50, 0, 60_000),
      conversationMaxBytes: int('AI_CONVERSATION_MAX_BYTES', 256 * 1024, 1024, 64 * 1024 * 1024),
      maxRequestBytes: int('AI_MAX_REQUEST_BYTES', 10 * 1024 * 1024, 1024, 100 * 1024 * 1024),
      oauth: parseAiOAuth(env, problems),
    },
    workflows: {
      trustedPlugins: list(env.WORKFLOW_TRUSTED_PLUGINS) ?? [],
      webhookMaxBodyBytes: int('WORKFLOW_WEBHOOK_MAX_BODY_BYTES', 1024 * 1024, 1024, 100 * 1024 * 1024),
      executionDefaultTimeoutSeconds: int('WORKFLOW_EXECUTION_DEFAULT_TIMEOUT_SECONDS', 300, 1, 7 * 86400),
      workerConcurrency: int('WORKFLOW_WORKER_CONCURRENCY', 16, 1, 1024),
    },
    ...overrides,
  };

  if (problems.length) {
    throw new ConfigError(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
  return config;
}

/** The URL the gateway uses for a subgraph. */
export function subgraphUrl(config: PlatformConfig, name: SubgraphName): string {
  return config.subgraphUrls[name] ?? `http://127.0.0.1:${config.subgraphPorts[name]}/graphql`;
}

/** A random secret, for tests and for `scripts/` that generate configuration. */
export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** `type:id,id;type:id` → { type: [ids] }; a device listed twice is a configuration error. */
function parseGpuInventory(raw: string | undefined, problems: string[]): Record<string, string[]> {
  const inventory: Record<string, string[]> = {};
  if (!raw?.trim()) return inventory;
  const seen = new Set<string>();
  for (const part of raw.split(';').map((p) => p.trim()).filter(Boolean)) {
    const match = /^([a-z0-9][a-z0-9._-]*):([^:]+)$/i.exec(part);
    if (!match) {
      problems.push(`GPU_INVENTORY: "${part}" is not type:id,id`);
      continue;
    }
    const ids = match[2].split(',').map((id) => id.trim()).filter(Boolean);
    for (const id of ids) {
      if (seen.has(id)) problems.push(`GPU_INVENTORY: device ${id} is listed twice`);
      seen.add(id);
    }
    inventory[match[1].toLowerCase()] = ids;
  }
  return inventory;
}

/** `AI_PLATFORM_MODELS`: a JSON array of `{ id, model, displayName?, api, baseUrl, apiKey, upstreamModel? }`. */
function parsePlatformModels(raw: string | undefined, problems: string[]): PlatformModelConfig[] {
  if (!raw?.trim()) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    problems.push('AI_PLATFORM_MODELS is not valid JSON');
    return [];
  }
  if (!Array.isArray(parsed)) {
    problems.push('AI_PLATFORM_MODELS must be a JSON array');
    return [];
  }
  const out: PlatformModelConfig[] = [];
  const ids = new Set<string>();
  parsed.forEach((entry: Record<string, unknown>, i) => {
    const str = (k: string) => (typeof entry?.[k] === 'string' && (entry[k] as string).trim() ? (entry[k] as string) : undefined);
    const id = str('id');
    const model = str('model');
    const api = str('api');
    const baseUrl = str('baseUrl');
    const apiKey = str('apiKey');
    if (!id || !model || !baseUrl || !apiKey || !['openai', 'anthropic', 'gemini'].includes(api ?? '')) {
      problems.push(`AI_PLATFORM_MODELS[${i}]: needs id, model, api (openai|anthropic|gemini), baseUrl and apiKey`);
      return;
    }
    if (ids.has(id)) problems.push(`AI_PLATFORM_MODELS: id ${id} is listed twice`);
    ids.add(id);
    out.push({ id, model, displayName: str('displayName') ?? model, api: api as PlatformModelConfig['api'], baseUrl: baseUrl.replace(/\/$/, ''), apiKey, upstreamModel: str('upstreamModel') });
  });
  return out;
}

/** `AI_OAUTH_VENDOR_A_AUTHORIZATION_URL`, `_TOKEN_URL`, `_CLIENT_ID`, `_CLIENT_SECRET`, `_SCOPES`, `_REDIRECT_URI` (and B, C). */
function parseAiOAuth(env: Env, problems: string[]): AiConfig['oauth'] {
  const out: AiConfig['oauth'] = {};
  for (const token of ['vendor-a', 'vendor-b', 'vendor-c'] as const) {
    const p = `AI_OAUTH_${token.replace('-', '_').toUpperCase()}`;
    const clientId = env[`${p}_CLIENT_ID`];
    if (!clientId) continue;
    const authorizationUrl = env[`${p}_AUTHORIZATION_URL`];
    const tokenUrl = env[`${p}_TOKEN_URL`];
    if (!authorizationUrl || !tokenUrl) {
      problems.push(`${p}: _AUTHORIZATION_URL and _TOKEN_URL are required with _CLIENT_ID`);
      continue;
    }
    out[token] = {
      authorizationUrl,
      tokenUrl,
      clientId,
      clientSecret: env[`${p}_CLIENT_SECRET`] || undefined,
      scopes: (env[`${p}_SCOPES`] ?? '').split(/[\s,]+/).filter(Boolean),
      redirectUri: env[`${p}_REDIRECT_URI`] || undefined,
    };
  }
  return out;
}

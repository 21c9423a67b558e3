import { randomBytes } from 'node:crypto';
import path from 'node:path';

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

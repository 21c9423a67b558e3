import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { connect, createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import type { PlatformPubSub } from '../../core/pubsub';
import type { DataSource } from 'typeorm';
import { sha256 } from '../../core/crypto';
import { openSubgraphDatabase } from '../../core/database';
import { ENVELOPE_HEADER, signEnvelope, verifyEnvelope } from '../../core/principal';
import { createRedis, type Redis } from '../../core/redis';
import type { PlatformConfig } from '../../core/config';
import type { SubgraphDeps } from '../../core/subgraph';
import { GatewayKeyEntity, PoolEntity, PoolMemberEntity, UpstreamEntity, type PoolStrategy, type VendorApiName } from '../../subgraphs/ai/model/entities';
import { GATEWAY_KEY_PREFIX, sealCredential } from '../../subgraphs/ai/model/shared';
import { createVendorProxy, type VendorProxy } from '../../subgraphs/ai/proxy';
import { AI_ENTITIES, AI_MIGRATIONS } from '../../subgraphs/ai/schema';
import type { StandIn } from '../../subgraphs/ai/testing/stand-ins';
import { startTestPlatform, type TestPlatform } from '../harness';
import { createTestDatabase, createTestRuntime, eventually, TEST_REDIS_URL, type TestDatabase } from '../services';

/**
 * The proxy's test bench: the ai schema on a database of its own, the proxy's routes on a plain
 * HTTP server that stands in for the edge (it rewrites `/v1/ai-gateway/vendor-*` to `/vendor/…`
 * and signs an envelope, as gateway/ai-vendor-forward.ts does), and helpers that insert
 * upstreams, pools and keys as rows (what the management API would write).
 */
export interface ProxyBench {
  config: PlatformConfig;
  dataSource: DataSource;
  redis: Redis;
  pubsub: PlatformPubSub;
  /** The proxy (plain-server mode); null when running through the platform. */
  proxy: VendorProxy | null;
  /** `http://127.0.0.1:<port>/v1/ai-gateway` */
  edge: string;
  /** SDK base URLs per vendor. */
  urls: { openai: string; anthropic: string; gemini: string };
  /** X-Request-Id of every SDK call, in order. */
  requestIds: string[];
  workspace(): string;
  upstream(workspaceId: string, standIn: StandIn, options?: Partial<Pick<UpstreamEntity, 'models' | 'modelMap' | 'weight' | 'timeoutMs' | 'enabled' | 'baseUrl'>> & { credential?: string }): Promise<string>;
  pool(workspaceId: string, strategy: PoolStrategy, members: Array<{ upstreamId?: string; platformModelId?: string; weight?: number; priority?: number }>, options?: Partial<Pick<PoolEntity, 'maxAttempts' | 'storeConversations'>>): Promise<string>;
  key(workspaceId: string, poolId: string, options?: Partial<Pick<GatewayKeyEntity, 'requestsPerMinute' | 'tokensPerMinute' | 'monthlyBudgetUsd' | 'storeConversations' | 'expiresAt' | 'revokedAt'>>): Promise<{ id: string; key: string }>;
  /** Usage rows (after writing whatever is buffered), oldest first. */
  usage(where?: { workspaceId?: string; requestId?: string }): Promise<UsageRow[]>;
  /** The usage row of the bench's latest request (waits for it, bounded). */
  lastRow(): Promise<UsageRow>;
  /** Waits (bounded) until `count` rows match. */
  waitUsage(count: number, where?: { workspaceId?: string }, timeoutMs?: number): Promise<UsageRow[]>;
  openai(key: string): OpenAI;
  anthropic(key: string): Anthropic;
  gemini(key: string): GoogleGenAI;
  stop(): Promise<void>;
}

export interface UsageRow {
  request_id: string;
  workspace_id: string;
  key_id: string | null;
  pool_id: string | null;
  upstream_id: string | null;
  platform_model_id: string | null;
  client_api: string;
  upstream_api: string | null;
  operation: string;
  model: string;
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  cost_usd: string;
  latency_ms: number;
  ttfb_ms: number | null;
  status: number;
  streamed: boolean;
  attempts: number;
  error: string | null;
}

const silent = { error() {}, warn() {}, info() {}, debug() {} };

export interface ProxyBenchOptions {
  env?: Record<string, string>;
  /**
   * Run the real platform (startTestPlatform: the ai subgraph and the gateway edge) instead of
   * the proxy on a plain server: requests then go through the edge's forwarder and the subgraph
   * server's raw route (`bench.proxy` is then null).
   */
  platform?: boolean;
  /** Usage batch interval of the proxy (plain-server mode). @defaultValue 20 (tests read rows soon after) */
  usageFlushIntervalMs?: number;
}

export async function startProxyBench(options: ProxyBenchOptions = {}): Promise<ProxyBench> {
  const env = { AI_RETRY_BACKOFF_MS: '5', ...options.env };
  if (options.platform) {
    const platform: TestPlatform = await startTestPlatform({ services: ['identity', 'ai', 'gateway'], env });
    const dataSource = platform.subgraphs.ai!.dataSource;
    const redis = createRedis(TEST_REDIS_URL);
    return benchOf({
      config: platform.config,
      dataSource,
      redis,
      pubsub: platform.runtime.pubsub,
      proxy: null,
      edge: `${platform.baseUrl}/v1/ai-gateway`,
      stop: async () => {
        await platform.stop();
        await redis.quit().catch(() => undefined);
      },
    });
  }

  const database: TestDatabase = await createTestDatabase('aiproxy');
  const runtime = createTestRuntime({ databaseUrl: database.url, prefix: database.name, env });
  const { config } = runtime;
  const dataSource = await openSubgraphDatabase({ url: database.url, schema: 'ai', entities: AI_ENTITIES, migrations: AI_MIGRATIONS });
  const redis = createRedis(TEST_REDIS_URL);
  const deps: SubgraphDeps = { runtime, config, dataSource, redis, pubsub: runtime.pubsub, logger: runtime.logger };
  const proxy = createVendorProxy(deps, { usageFlushIntervalMs: options.usageFlushIntervalMs ?? 20 });
  let sequence = 0;

  // The edge: rewrite and sign, like gateway/ai-vendor-forward.ts (a sane client X-Request-Id is kept, as the gateway does).
  const server: Server = createServer((req, res) => {
    const url = req.url ?? '/';
    if (!url.startsWith('/v1/ai-gateway/')) {
      res.writeHead(404).end();
      return;
    }
    const given = req.headers['x-request-id'];
    const requestId = typeof given === 'string' && /^[A-Za-z0-9._:-]{1,128}$/.test(given) ? given : `req_bench_${process.pid}_${++sequence}`;
    req.url = `/vendor${url.slice('/v1/ai-gateway'.length)}`;
    req.headers[ENVELOPE_HEADER] = signEnvelope(config.internalSigningSecret, { principal: null, requestId, clientIp: '127.0.0.1', iat: Math.floor(Date.now() / 1000) });
    res.setHeader('x-request-id', requestId);
    const envelope = verifyEnvelope(config.internalSigningSecret, req.headers[ENVELOPE_HEADER] as string);
    proxy.routes.handle(req, res, envelope).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return benchOf({
    config,
    dataSource,
    redis,
    pubsub: runtime.pubsub,
    proxy,
    edge: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/ai-gateway`,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await proxy.close();
      await redis.quit().catch(() => undefined);
      await runtime.pubsub.close();
      await dataSource.destroy();
      await database.drop();
    },
  });
}

/** The helpers, the same in both modes. */
function benchOf(parts: { config: PlatformConfig; dataSource: DataSource; redis: Redis; pubsub: PlatformPubSub; proxy: VendorProxy | null; edge: string; stop(): Promise<void> }): ProxyBench {
  const { config, dataSource, proxy, edge } = parts;
  const urls = { openai: `${edge}/vendor-a/v1`, anthropic: `${edge}/vendor-b`, gemini: `${edge}/vendor-c` };
  const requestIds: string[] = [];
  const now = () => new Date();
  /**
   * Every SDK call carries an X-Request-Id of the test's; the usage row is found by the id the
   * answer carries: the edge replaces the caller's with its own on vendor routes, the bare
   * handler keeps it.
   */
  const tracedFetch: typeof fetch = async (input, init) => {
    const requestId = `req_t_${randomBytes(9).toString('base64url').replace(/[^A-Za-z0-9]/g, 'x')}`;
    const index = requestIds.push(requestId) - 1;
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    headers.set('x-request-id', requestId);
    const response = await globalThis.fetch(input, { ...init, headers });
    const answered = response.headers.get('x-request-id');
    if (answered) requestIds[index] = answered;
    return response;
  };

  const usage = async (where: { workspaceId?: string; requestId?: string } = {}): Promise<UsageRow[]> => {
    await proxy?.services.recorder.flush();
    return (await dataSource.query(
      `SELECT * FROM "ai"."usage" WHERE ($1::text IS NULL OR workspace_id = $1) AND ($2::text IS NULL OR request_id = $2) ORDER BY id`,
      [where.workspaceId ?? null, where.requestId ?? null],
    )) as UsageRow[];
  };
  const poll = <T>(read: () => Promise<T | null>, what: string, timeoutMs = 5_000): Promise<T> => eventually(async () => (await read()) ?? undefined, timeoutMs, what);

  return {
    config,
    dataSource,
    redis: parts.redis,
    pubsub: parts.pubsub,
    proxy,
    edge,
    urls,
    requestIds,
    workspace: () => `ws_${randomBytes(8).toString('hex')}`,
    async upstream(workspaceId, standIn, opts = {}) {
      const id = `ups_${randomBytes(8).toString('hex')}`;
      await dataSource.getRepository(UpstreamEntity).insert({
        id,
        workspaceId,
        name: `${standIn.api} ${id}`,
        api: standIn.api as VendorApiName,
        baseUrl: opts.baseUrl ?? standIn.baseUrl,
        authKind: 'api_key',
        credentialCiphertext: sealCredential(config.secretsEncryptionKey, id, opts.credential ?? standIn.apiKey),
        refreshTokenCiphertext: null,
        credentialExpiresAt: null,
        models: opts.models ?? [],
        modelMap: opts.modelMap ?? {},
        weight: opts.weight ?? 1,
        timeoutMs: opts.timeoutMs ?? 10_000,
        enabled: opts.enabled ?? true,
        createdByUserId: null,
        createdAt: now(),
        updatedAt: now(),
      });
      return id;
    },
    async pool(workspaceId, strategy, members, opts = {}) {
      const id = `pool_${randomBytes(8).toString('hex')}`;
      await dataSource.getRepository(PoolEntity).insert({
        id,
        workspaceId,
        name: `pool ${id}`,
        strategy,
        storeConversations: opts.storeConversations ?? false,
        maxAttempts: opts.maxAttempts ?? 3,
        createdByUserId: null,
        createdAt: now(),
        updatedAt: now(),
      });
      for (const member of members) {
        await dataSource.getRepository(PoolMemberEntity).insert({
          poolId: id,
          upstreamId: member.upstreamId ?? null,
          platformModelId: member.platformModelId ?? null,
          weight: member.weight ?? null,
          priority: member.priority ?? 0,
          createdAt: now(),
        });
      }
      return id;
    },
    async key(workspaceId, poolId, opts = {}) {
      const id = `gk_${randomBytes(8).toString('hex')}`;
      const key = `${GATEWAY_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
      await dataSource.getRepository(GatewayKeyEntity).insert({
        id,
        workspaceId,
        name: `key ${id}`,
        poolId,
        keyHash: sha256(key),
        keyPrefix: key.slice(0, 12),
        requestsPerMinute: opts.requestsPerMinute ?? null,
        tokensPerMinute: opts.tokensPerMinute ?? null,
        monthlyBudgetUsd: opts.monthlyBudgetUsd ?? null,
        storeConversations: opts.storeConversations ?? false,
        expiresAt: opts.expiresAt ?? null,
        revokedAt: opts.revokedAt ?? null,
        createdByUserId: null,
        createdAt: now(),
        lastUsedAt: null,
      });
      return { id, key };
    },
    usage,
    lastRow() {
      const requestId = requestIds.at(-1)!;
      return poll(async () => (await usage({ requestId }))[0] ?? null, `the usage row of ${requestId}`);
    },
    waitUsage(count, where = {}, timeoutMs = 5_000) {
      return poll(
        async () => {
          const rows = await usage(where);
          return rows.length >= count ? rows : null;
        },
        `${count} usage rows`,
        timeoutMs,
      );
    },
    openai: (key) => new OpenAI({ apiKey: key, baseURL: urls.openai, maxRetries: 0, logger: silent, fetch: tracedFetch }),
    anthropic: (key) => new Anthropic({ apiKey: key, baseURL: urls.anthropic, maxRetries: 0, logger: silent, fetch: tracedFetch }),
    // Under jest, @google/genai needs a fetch of its own (see subgraphs/ai/testing/stand-ins.test.ts); v1beta is the routed version.
    gemini: (key) => new GoogleGenAI({ apiKey: key, vertexai: false, httpOptions: { baseUrl: urls.gemini, apiVersion: 'v1beta', fetch: tracedFetch } }),
    stop: parts.stop,
  };
}

/** A TCP relay in front of a stand-in: shows whether the connection that carried a request was closed. */
export interface TcpRelay {
  /** `http://127.0.0.1:<port>` (+ `/v1` for openai, as the stand-in's base URL). */
  baseUrl: string;
  /** Every connection made through the relay, oldest first. */
  connections(): Array<{ closed: boolean; bytesFromUpstream: number }>;
  close(): Promise<void>;
}

export async function startTcpRelay(standIn: Pick<StandIn, 'api' | 'port'>): Promise<TcpRelay> {
  const connections: Array<{ closed: boolean; bytesFromUpstream: number; client: Socket }> = [];
  const server = createTcpServer((client) => {
    const upstream = connect(standIn.port, '127.0.0.1');
    const entry = { closed: false, bytesFromUpstream: 0, client };
    connections.push(entry);
    const end = () => {
      entry.closed = true;
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    upstream.on('data', (chunk: Buffer) => (entry.bytesFromUpstream += chunk.length));
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl: standIn.api === 'openai' ? `${origin}/v1` : origin,
    connections: () => connections.map(({ closed, bytesFromUpstream }) => ({ closed, bytesFromUpstream })),
    close: async () => {
      for (const { client } of connections) client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Polls until `check` holds (bounded). */
export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

import type { RawHttpRoutes, SubgraphDeps } from '../../../core/subgraph';
import type { PlaygroundEngine } from '../management/playground';
import { CircuitBreakers } from './circuit';
import { KeyLimits } from './limits';
import { createPlaygroundEngine } from './playground';
import { RouteCache } from './routes';
import { MemberSelector } from './select';
import type { ProxyServices } from './services';
import { UpstreamClient } from './upstream';
import { UsageRecorder } from './usage';
import { createVendorRoutes, VENDOR_PREFIX } from './vendor-routes';

export { VENDOR_PREFIX };
export type { ProxyServices };

export interface VendorProxy {
  /** The raw HTTP routes under `/vendor/` (wire as the ai subgraph's `rawHttp`). */
  routes: RawHttpRoutes;
  /** In-process engine of the management playground. */
  playground: PlaygroundEngine;
  /** The parts, for tests and diagnostics (circuit state, cache size, pending usage). */
  services: ProxyServices;
  /**
   * Stops the cache subscription, closes pooled upstream connections and writes the last usage
   * rows (idempotent). Call it after the HTTP server has closed (the subgraph's onStop), so the
   * requests it cut are recorded too; `routes.close` only closes connections.
   */
  close(): Promise<void>;
}

export interface VendorProxyOptions {
  /** Usage batch interval, ms. @defaultValue 100 */
  usageFlushIntervalMs?: number;
}

/** The AI gateway's vendor-compatible proxy (README.md in this folder). */
export function createVendorProxy(deps: SubgraphDeps, options: VendorProxyOptions = {}): VendorProxy {
  const { config, logger } = deps;
  const client = new UpstreamClient();
  const breakers = new CircuitBreakers({ threshold: config.ai.circuitFailureThreshold, openMs: config.ai.circuitOpenMs });
  const selector = new MemberSelector();
  const routes = new RouteCache({
    dataSource: deps.dataSource,
    pubsub: deps.pubsub,
    encryptionKey: config.secretsEncryptionKey,
    platformModels: config.ai.platformModels,
    logger,
  });
  const recorder = new UsageRecorder({
    dataSource: deps.dataSource,
    redis: deps.redis,
    redisPrefix: config.redisPrefix,
    logger,
    conversationMaxBytes: config.ai.conversationMaxBytes,
    flushIntervalMs: options.usageFlushIntervalMs,
  });
  let disconnecting: Promise<void> | null = null;
  let closing: Promise<void> | null = null;
  const services: ProxyServices = {
    config,
    logger,
    routes,
    selector,
    breakers,
    client,
    recorder,
    limits: new KeyLimits(deps.redis, deps.dataSource, config.redisPrefix, (err) => logger.warn('ai proxy: key limits unavailable; request allowed', { err })),
    failover: { client, breakers, selector, backoffMs: config.ai.retryBackoffMs },
    closeConnections: () =>
      (disconnecting ??= (async () => {
        routes.close();
        await client.close();
      })()),
    close: () =>
      (closing ??= (async () => {
        await services.closeConnections();
        await recorder.close();
      })()),
  };
  return { routes: createVendorRoutes(services), playground: createPlaygroundEngine(services), services, close: services.close };
}

import type { Logger } from '../core/logger';
import type { RawHttpRoutes } from '../core/subgraph';
import { createRawForwarder, type RawForwarder } from './raw-forward';

/**
 * The vendor-compatible AI routes (`/v1/ai-gateway/vendor-a/v1/…`, `vendor-b/v1/…`,
 * `vendor-c/v1beta/…`) go byte for byte to the ai subgraph's raw route `/vendor/…`. The edge
 * does no authentication here: callers present *gateway keys*, which only the ai subgraph knows
 * (it enforces their limits too). The envelope carries no principal, only the request id and
 * client address. Nothing is buffered: bodies stream both ways, so a streamed completion's first
 * token leaves as soon as the upstream sends it. (The forwarding itself: raw-forward.ts.)
 */
const VENDOR_PATH = /^\/v1\/ai-gateway\/(vendor-a\/v1|vendor-b\/v1|vendor-c\/v1beta)(\/|$)/;

export type AiVendorForwarder = RawForwarder;

export interface AiVendorForwarderOptions {
  aiUrl: string;
  signingSecret: string;
  logger: Logger;
  /**
   * The ai subgraph's raw routes when it runs in this process (`npm start` runs every service in
   * one): requests are handed to it directly, skipping the loopback HTTP hop and the envelope's
   * signing and verification.
   */
  inProcess?: RawHttpRoutes;
}

export function createAiVendorForwarder(options: AiVendorForwarderOptions): AiVendorForwarder {
  return createRawForwarder({
    pattern: VENDOR_PATH,
    rewrite: (url) => `/vendor${url.slice('/v1/ai-gateway'.length)}`,
    targetUrl: options.aiUrl,
    signingSecret: options.signingSecret,
    logger: options.logger,
    unavailableMessage: 'The AI gateway is temporarily unavailable',
    label: 'ai vendor route',
    inProcess: options.inProcess,
  });
}

/**
 * Workflow webhooks (`/v1/webhooks/v1/<workflowId>/<nodeId>[/…]`, any method) go byte for byte
 * to the workflows subgraph's raw route `/webhooks/v1/…`. Public: the subgraph checks the
 * trigger node's own authentication (header or HMAC).
 */
const WEBHOOK_PATH = /^\/v1\/webhooks\/v1\/[^/]+\/[^/]+(\/|$)/;

export function createWebhookForwarder(options: { workflowsUrl: string; signingSecret: string; logger: Logger; inProcess?: RawHttpRoutes }): RawForwarder {
  return createRawForwarder({
    pattern: WEBHOOK_PATH,
    rewrite: (url) => url.slice('/v1'.length),
    targetUrl: options.workflowsUrl,
    signingSecret: options.signingSecret,
    logger: options.logger,
    unavailableMessage: 'Workflows are temporarily unavailable',
    label: 'workflow webhook',
    inProcess: options.inProcess,
  });
}

/**
 * The public analytics routes `/v1/analytics/{track.js,track,event,identify}` (any method: CORS
 * preflights too), forwarded byte for byte to the analytics subgraph's raw routes
 * `/analytics-public/…`. Public: the subgraph checks the installation key and the origin.
 */
const ANALYTICS_PUBLIC_PATH = /^\/v1\/analytics\/(track\.js|track|event|identify)$/;

export function createAnalyticsForwarder(options: { analyticsUrl: string; signingSecret: string; logger: Logger; inProcess?: RawHttpRoutes }): RawForwarder {
  return createRawForwarder({
    pattern: ANALYTICS_PUBLIC_PATH,
    rewrite: (url) => `/analytics-public/${url.slice('/v1/analytics/'.length)}`,
    targetUrl: options.analyticsUrl,
    signingSecret: options.signingSecret,
    logger: options.logger,
    unavailableMessage: 'Analytics is temporarily unavailable',
    label: 'analytics ingestion',
    inProcess: options.inProcess,
  });
}

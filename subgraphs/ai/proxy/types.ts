import type { VendorApiName, PoolStrategy } from '../model/entities';

/** The three vendor route families and the protocol each speaks. */
export const VENDOR_OF_TOKEN = { 'vendor-a': 'openai', 'vendor-b': 'anthropic', 'vendor-c': 'gemini' } as const satisfies Record<string, VendorApiName>;
export type VendorToken = keyof typeof VENDOR_OF_TOKEN;

export type Operation = 'chat' | 'embeddings' | 'count_tokens' | 'models';

/** What the proxy keeps of a gateway key (the row's fields that matter per request). */
export interface CachedKey {
  id: string;
  workspaceId: string;
  poolId: string;
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
  /** USD; null = unlimited. */
  monthlyBudgetUsd: number | null;
  storeConversations: boolean;
  expiresAt: number | null;
  revokedAt: number | null;
}

export interface CachedPool {
  id: string;
  workspaceId: string;
  strategy: PoolStrategy;
  storeConversations: boolean;
  maxAttempts: number;
}

/**
 * One member of a pool, ready to send to: an upstream of the key's workspace (its credential
 * opened) or a platform model from the configuration.
 */
export interface RouteMember {
  /** Upstream id or platform model id: the circuit breaker and latency tracker key. */
  id: string;
  upstreamId: string | null;
  platformModelId: string | null;
  api: VendorApiName;
  /** `http://host:port` */
  origin: string;
  /** Path of the base URL without a trailing slash ('' for a host root, `/v1` for OpenAI's). */
  basePath: string;
  authKind: 'api_key' | 'oauth';
  credential: string;
  /** Models served ([] = any); platform models: their client-facing model. */
  models: string[];
  /** Client model → upstream model. */
  modelMap: Record<string, string>;
  /** Platform model only: the client-facing name, which is the only one it serves. */
  platformModel: string | null;
  weight: number;
  priority: number;
  timeoutMs: number;
}

/** What a key hash resolves to: everything the hot path needs, with no further I/O. */
export interface RouteEntry {
  key: CachedKey;
  pool: CachedPool;
  members: RouteMember[];
  /** The key has a request, token or budget limit (only these cost a Redis round trip). */
  limited: boolean;
  storeConversations: boolean;
}

/** A member chosen for a request, with the model name the upstream is sent. */
export interface Candidate {
  member: RouteMember;
  upstreamModel: string;
}

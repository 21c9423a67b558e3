import type { ChatRequest, ChatResponse, EmbeddingRequest, EmbeddingResponse } from '../protocol';

/**
 * Where a playground request goes: through one pool (its strategy and failover), or straight to
 * one upstream. Exactly one of poolId and upstreamId is set; the management service has checked
 * that it belongs to `workspaceId` and that the caller may use it.
 */
export interface PlaygroundRouting {
  workspaceId: string;
  poolId?: string;
  upstreamId?: string;
  /** Unique per call; the usage row (and conversation, if stored) is written under it. */
  requestId: string;
  /** Who asked (usage attribution); null for the platform itself. */
  userId: string | null;
  /** Aborts when the caller is gone: the upstream call stops, and the usage row says 499. */
  signal?: AbortSignal;
}

export interface PlaygroundResult<T> {
  response: T;
  /** The upstream that answered (null: a platform model). */
  upstreamId: string | null;
  latencyMs: number;
}

/**
 * The proxy engine, called in-process by the playground (implemented by `subgraphs/ai/proxy/`).
 * It routes, translates, meters and records usage exactly as for a vendor-route request. It
 * throws core/errors DomainErrors: UnavailableError (no usable member), RateLimitedError,
 * ValidationError (a request the upstream protocol cannot carry), and so on.
 */
export interface PlaygroundEngine {
  chat(input: PlaygroundRouting & { request: ChatRequest }): Promise<PlaygroundResult<ChatResponse>>;
  embed(input: PlaygroundRouting & { request: EmbeddingRequest }): Promise<PlaygroundResult<EmbeddingResponse>>;
}

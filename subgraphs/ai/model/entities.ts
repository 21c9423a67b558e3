import { Column, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

/** The three vendor protocols (neutral tokens in routes: vendor-a = openai, vendor-b = anthropic, vendor-c = gemini). */
export const VENDOR_APIS = ['openai', 'anthropic', 'gemini'] as const;
export type VendorApiName = (typeof VENDOR_APIS)[number];

export const POOL_STRATEGIES = ['weighted', 'round-robin', 'least-latency', 'fallback'] as const;
export type PoolStrategy = (typeof POOL_STRATEGIES)[number];

/** A workspace's model endpoint: a vendor API at a base URL with a credential (encrypted, never returned). */
@Entity({ name: 'upstreams' })
export class UpstreamEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId: string;

  @Column({ type: 'text' })
  name: string;

  /** openai | anthropic | gemini */
  @Column({ type: 'text' })
  api: VendorApiName;

  /** openai: …/v1; anthropic and gemini: the host root. */
  @Column({ name: 'base_url', type: 'text' })
  baseUrl: string;

  /** api_key, or oauth (tokens from /ai-gateway/oauth/vendor-*). */
  @Column({ name: 'auth_kind', type: 'text', default: 'api_key' })
  authKind: 'api_key' | 'oauth';

  /** AES-256-GCM under SECRETS_ENCRYPTION_KEY, AAD `<id>:credential`; an access token for oauth upstreams. */
  @Column({ name: 'credential_ciphertext', type: 'text', select: false })
  credentialCiphertext: string;

  /** oauth only: AES-256-GCM, AAD `<id>:refresh_token`. */
  @Column({ name: 'refresh_token_ciphertext', type: 'text', nullable: true, select: false })
  refreshTokenCiphertext: string | null;

  @Column({ name: 'credential_expires_at', type: 'timestamptz', nullable: true })
  credentialExpiresAt: Date | null;

  /** Models it serves ([] = any the client names). */
  @Column({ type: 'jsonb', default: [] })
  models: string[];

  /** Client model name → the upstream's model name. */
  @Column({ name: 'model_map', type: 'jsonb', default: {} })
  modelMap: Record<string, string>;

  /** Share of traffic in a weighted pool (1–1000). */
  @Column({ type: 'integer', default: 1 })
  weight: number;

  @Column({ name: 'timeout_ms', type: 'integer', default: 60000 })
  timeoutMs: number;

  @Column({ type: 'boolean', default: true })
  enabled: boolean;

  @Column({ name: 'created_by_user_id', type: 'text', nullable: true })
  createdByUserId: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

/** A set of upstreams (and platform models) a gateway key sends to, with a strategy. */
@Entity({ name: 'pools' })
export class PoolEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text' })
  strategy: PoolStrategy;

  /** Store request and response bodies of requests through this pool (conversations). */
  @Column({ name: 'store_conversations', type: 'boolean', default: false })
  storeConversations: boolean;

  /** Members tried per request before giving up (failover on 429, 5xx, timeouts). */
  @Column({ name: 'max_attempts', type: 'integer', default: 3 })
  maxAttempts: number;

  @Column({ name: 'created_by_user_id', type: 'text', nullable: true })
  createdByUserId: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

/** One member of a pool: an upstream of the workspace, or a platform model (exactly one is set). */
@Entity({ name: 'pool_members' })
export class PoolMemberEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'pool_id', type: 'text' })
  poolId: string;

  @Column({ name: 'upstream_id', type: 'text', nullable: true })
  upstreamId: string | null;

  @Column({ name: 'platform_model_id', type: 'text', nullable: true })
  platformModelId: string | null;

  /** Overrides the upstream's weight in this pool. */
  @Column({ type: 'integer', nullable: true })
  weight: number | null;

  /** Order for the fallback strategy (lower first). */
  @Column({ type: 'integer', default: 0 })
  priority: number;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

/** A key clients put in their SDK; stored as SHA-256, shown once. */
@Entity({ name: 'gateway_keys' })
export class GatewayKeyEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ name: 'pool_id', type: 'text' })
  poolId: string;

  @Column({ name: 'key_hash', type: 'text' })
  keyHash: string;

  /** First characters of the key, to recognise it in lists. */
  @Column({ name: 'key_prefix', type: 'text' })
  keyPrefix: string;

  @Column({ name: 'requests_per_minute', type: 'integer', nullable: true })
  requestsPerMinute: number | null;

  @Column({ name: 'tokens_per_minute', type: 'integer', nullable: true })
  tokensPerMinute: number | null;

  /** USD per calendar month (UTC); null = unlimited. */
  @Column({ name: 'monthly_budget_usd', type: 'numeric', precision: 14, scale: 4, nullable: true })
  monthlyBudgetUsd: string | null;

  /** Store request and response bodies of this key's requests (conversations). */
  @Column({ name: 'store_conversations', type: 'boolean', default: false })
  storeConversations: boolean;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;

  @Column({ name: 'created_by_user_id', type: 'text', nullable: true })
  createdByUserId: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;
}

/** One proxied (or playground) request; written once per request id. */
@Entity({ name: 'usage' })
export class UsageEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'request_id', type: 'text' })
  requestId: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId: string;

  @Column({ name: 'key_id', type: 'text', nullable: true })
  keyId: string | null;

  @Column({ name: 'pool_id', type: 'text', nullable: true })
  poolId: string | null;

  @Column({ name: 'upstream_id', type: 'text', nullable: true })
  upstreamId: string | null;

  @Column({ name: 'platform_model_id', type: 'text', nullable: true })
  platformModelId: string | null;

  /** The protocol the client spoke, and the one the upstream spoke. */
  @Column({ name: 'client_api', type: 'text' })
  clientApi: string;

  @Column({ name: 'upstream_api', type: 'text', nullable: true })
  upstreamApi: string | null;

  /** chat | embeddings | count_tokens | models */
  @Column({ type: 'text' })
  operation: string;

  @Column({ type: 'text' })
  model: string;

  @Column({ name: 'input_tokens', type: 'integer', default: 0 })
  inputTokens: number;

  @Column({ name: 'output_tokens', type: 'integer', default: 0 })
  outputTokens: number;

  @Column({ name: 'cached_tokens', type: 'integer', default: 0 })
  cachedTokens: number;

  @Column({ name: 'cost_usd', type: 'numeric', precision: 18, scale: 8, default: 0 })
  costUsd: string;

  @Column({ name: 'latency_ms', type: 'integer' })
  latencyMs: number;

  /** Time to the first byte of the response body sent to the client. */
  @Column({ name: 'ttfb_ms', type: 'integer', nullable: true })
  ttfbMs: number | null;

  /** HTTP status answered to the client (499: the client went away). */
  @Column({ type: 'integer' })
  status: number;

  @Column({ type: 'boolean', default: false })
  streamed: boolean;

  /** Upstreams tried (failover). */
  @Column({ type: 'integer', default: 1 })
  attempts: number;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

/** Request and response bodies of a request whose key or pool opts in. */
@Entity({ name: 'conversations' })
export class ConversationEntity {
  @PrimaryColumn({ name: 'request_id', type: 'text' })
  requestId: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId: string;

  @Column({ name: 'key_id', type: 'text', nullable: true })
  keyId: string | null;

  @Column({ name: 'pool_id', type: 'text', nullable: true })
  poolId: string | null;

  @Column({ type: 'text' })
  model: string;

  @Column({ name: 'request_body', type: 'jsonb' })
  requestBody: unknown;

  /** The response as the client received it (a streamed one assembled into the vendor's non-stream shape). */
  @Column({ name: 'response_body', type: 'jsonb', nullable: true })
  responseBody: unknown;

  @Column({ type: 'integer' })
  status: number;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

/** Metered quantities for billing to price; unique idempotency keys (`<requestId>:<kind>`). */
@Entity({ name: 'metering_events' })
export class AiMeteringEventEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'idempotency_key', type: 'text' })
  idempotencyKey: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId: string;

  /** ai_input_tokens | ai_output_tokens | ai_cached_tokens | ai_cost_usd */
  @Column({ type: 'text' })
  kind: string;

  @Column({ type: 'double precision' })
  quantity: number;

  @Column({ name: 'request_id', type: 'text' })
  requestId: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

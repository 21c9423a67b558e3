import type { Logger } from '../core/logger';
import { TOPICS, type PlatformPubSub, type RateLimitsChangedEvent } from '../core/pubsub';
import { RATE_LIMIT_KEYS, type RateLimitValues } from '../core/rate-limits';
import { InternalClient } from '../core/internal-client';

export interface WorkspaceLimitsOptions {
  /** Base URL of the billing subgraph (without /graphql). */
  billingUrl: string;
  internalSigningSecret: string;
  /** Billing publishes `rateLimitsChanged` here; the entry of that workspace is dropped at once. */
  pubsub: Pick<PlatformPubSub, 'on'>;
  /** The limits used while billing cannot answer (the default plan with overrides). */
  fallback(workspaceId: string): RateLimitValues;
  logger: Logger;
  /** How long billing's answer is reused. @defaultValue 30000 */
  ttlMs?: number;
  /** How long a fallback is reused before billing is asked again. @defaultValue 5000 */
  fallbackTtlMs?: number;
  /** Workspaces kept; the least recently used go first. @defaultValue 10000 */
  maxEntries?: number;
  /** @defaultValue 2000 */
  timeoutMs?: number;
}

interface Entry {
  value: Promise<RateLimitValues>;
  expiresAt: number;
}

/**
 * The limits of each workspace, as billing computes them (`POST /internal/rate-limits/effective`),
 * cached in-process and LRU-bounded. Concurrent lookups of one workspace share one call. When
 * billing cannot answer, the default plan's limits apply (fail open to a known budget, never
 * fail the request), logged once until billing answers again.
 */
export class WorkspaceLimits {
  private readonly entries = new Map<string, Entry>();
  private readonly ttl: number;
  private readonly fallbackTtl: number;
  private readonly maxEntries: number;
  private readonly billing: InternalClient;
  private readonly unsubscribe: () => void;
  private billingDown = false;

  constructor(private readonly options: WorkspaceLimitsOptions) {
    this.ttl = options.ttlMs ?? 30_000;
    this.fallbackTtl = options.fallbackTtlMs ?? 5_000;
    this.maxEntries = options.maxEntries ?? 10_000;
    // No logger for the client: failures are reported here, once until billing answers again.
    this.billing = new InternalClient({ baseUrl: options.billingUrl, internalSigningSecret: options.internalSigningSecret, timeoutMs: options.timeoutMs ?? 2_000 });
    this.unsubscribe = options.pubsub.on<RateLimitsChangedEvent>(TOPICS.rateLimitsChanged, (event) => {
      if (typeof event?.workspaceId === 'string') this.entries.delete(event.workspaceId);
    });
  }

  /** Never rejects. */
  get(workspaceId: string): Promise<RateLimitValues> {
    const now = Date.now();
    const hit = this.entries.get(workspaceId);
    if (hit && hit.expiresAt > now) {
      // Re-inserted so the Map's order is least recently used first.
      this.entries.delete(workspaceId);
      this.entries.set(workspaceId, hit);
      return hit.value;
    }
    const entry = { expiresAt: now + this.ttl } as Entry;
    entry.value = this.fetch(workspaceId).catch((err: unknown) => {
      if (!this.billingDown) this.options.logger.warn('billing unreachable for rate limits; the default plan applies until it answers', { err, workspaceId });
      this.billingDown = true;
      entry.expiresAt = Date.now() + this.fallbackTtl;
      return this.options.fallback(workspaceId);
    });
    this.entries.delete(workspaceId);
    this.entries.set(workspaceId, entry);
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return entry.value;
  }

  /** Drops a workspace's entry (what the change event does). */
  evict(workspaceId: string): void {
    this.entries.delete(workspaceId);
  }

  get size(): number {
    return this.entries.size;
  }

  close(): void {
    this.unsubscribe();
    this.entries.clear();
  }

  private async fetch(workspaceId: string): Promise<RateLimitValues> {
    const answer = await this.billing.call<{ limits?: unknown } | undefined>('rate-limits/effective', { workspaceId }, { requestId: 'rate-limits', clientIp: '' });
    const limits = parseLimits(answer?.limits);
    if (this.billingDown) this.options.logger.info('billing answers rate-limit lookups again');
    this.billingDown = false;
    return limits;
  }
}

function parseLimits(raw: unknown): RateLimitValues {
  const limits = {} as RateLimitValues;
  for (const key of RATE_LIMIT_KEYS) {
    const value = (raw as Record<string, unknown> | undefined)?.[key];
    if (!Number.isInteger(value) || (value as number) < 0) throw new Error(`billing answered limits without a valid ${key}`);
    limits[key] = value as number;
  }
  return limits;
}

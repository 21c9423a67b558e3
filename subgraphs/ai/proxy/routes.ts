import type { DataSource } from 'typeorm';
import type { PlatformModelConfig } from '../../../core/config';
import { sha256 } from '../../../core/crypto';
import type { Logger } from '../../../core/logger';
import { TOPICS, type PlatformPubSub } from '../../../core/pubsub';
import type { PoolStrategy, VendorApiName } from '../model/entities';
import { openCredential } from '../model/shared';
import type { CachedKey, CachedPool, RouteEntry, RouteMember } from './types';

export interface RouteCacheOptions {
  dataSource: DataSource;
  pubsub: Pick<PlatformPubSub, 'on'>;
  encryptionKey: Buffer;
  platformModels: readonly PlatformModelConfig[];
  logger: Logger;
  /** Entries kept (least recently used goes first). @defaultValue 10000 */
  maxEntries?: number;
  /** Lifetime of a found key's entry, ms. @defaultValue 60000 */
  ttlMs?: number;
  /** Lifetime of an unknown key's entry, ms. @defaultValue 5000 */
  negativeTtlMs?: number;
  now?: () => number;
}

interface Slot {
  entry: RouteEntry | null;
  expiresAt: number;
}

/** One row per member (or one with null member columns for an empty pool). */
/** Member and upstream columns of a route query. */
export interface MemberRow {
  m_id: string | null;
  m_upstream_id: string | null;
  m_platform_model_id: string | null;
  m_weight: number | null;
  m_priority: number | null;
  u_id: string | null;
  u_workspace_id: string | null;
  u_api: VendorApiName | null;
  u_base_url: string | null;
  u_auth_kind: 'api_key' | 'oauth' | null;
  u_credential_ciphertext: string | null;
  u_models: string[] | null;
  u_model_map: Record<string, string> | null;
  u_weight: number | null;
  u_timeout_ms: number | null;
  u_enabled: boolean | null;
}

interface PoolColumns {
  p_id: string;
  p_workspace_id: string;
  p_strategy: PoolStrategy;
  p_store_conversations: boolean;
  p_max_attempts: number;
}

interface RouteRow extends MemberRow {
  k_id: string;
  k_workspace_id: string;
  k_pool_id: string;
  k_requests_per_minute: number | null;
  k_tokens_per_minute: number | null;
  k_monthly_budget_usd: string | null;
  k_store_conversations: boolean;
  k_expires_at: Date | null;
  k_revoked_at: Date | null;
  p_id: string;
  p_workspace_id: string;
  p_strategy: PoolStrategy;
  p_store_conversations: boolean;
  p_max_attempts: number;
}

/** Key, pool, members and upstreams in one round trip. */
const ROUTE_SQL = `
  SELECT k.id AS k_id, k.workspace_id AS k_workspace_id, k.pool_id AS k_pool_id,
         k.requests_per_minute AS k_requests_per_minute, k.tokens_per_minute AS k_tokens_per_minute,
         k.monthly_budget_usd AS k_monthly_budget_usd, k.store_conversations AS k_store_conversations,
         k.expires_at AS k_expires_at, k.revoked_at AS k_revoked_at,
         p.id AS p_id, p.workspace_id AS p_workspace_id, p.strategy AS p_strategy,
         p.store_conversations AS p_store_conversations, p.max_attempts AS p_max_attempts,
         m.id AS m_id, m.upstream_id AS m_upstream_id, m.platform_model_id AS m_platform_model_id,
         m.weight AS m_weight, m.priority AS m_priority,
         u.id AS u_id, u.workspace_id AS u_workspace_id, u.api AS u_api, u.base_url AS u_base_url,
         u.auth_kind AS u_auth_kind, u.credential_ciphertext AS u_credential_ciphertext, u.models AS u_models,
         u.model_map AS u_model_map, u.weight AS u_weight, u.timeout_ms AS u_timeout_ms, u.enabled AS u_enabled
    FROM "ai"."gateway_keys" k
    JOIN "ai"."pools" p ON p.id = k.pool_id
    LEFT JOIN "ai"."pool_members" m ON m.pool_id = p.id
    LEFT JOIN "ai"."upstreams" u ON u.id = m.upstream_id
   WHERE k.key_hash = $1
   ORDER BY m.priority, m.id`;

const MEMBER_COLUMNS = `
         m.id AS m_id, m.upstream_id AS m_upstream_id, m.platform_model_id AS m_platform_model_id,
         m.weight AS m_weight, m.priority AS m_priority,
         u.id AS u_id, u.workspace_id AS u_workspace_id, u.api AS u_api, u.base_url AS u_base_url,
         u.auth_kind AS u_auth_kind, u.credential_ciphertext AS u_credential_ciphertext, u.models AS u_models,
         u.model_map AS u_model_map, u.weight AS u_weight, u.timeout_ms AS u_timeout_ms, u.enabled AS u_enabled`;

const POOL_SQL = `
  SELECT p.id AS p_id, p.workspace_id AS p_workspace_id, p.strategy AS p_strategy,
         p.store_conversations AS p_store_conversations, p.max_attempts AS p_max_attempts, ${MEMBER_COLUMNS}
    FROM "ai"."pools" p
    LEFT JOIN "ai"."pool_members" m ON m.pool_id = p.id
    LEFT JOIN "ai"."upstreams" u ON u.id = m.upstream_id
   WHERE p.id = $1 AND p.workspace_id = $2
   ORDER BY m.priority, m.id`;

/** An upstream dressed as a member row. */
const UPSTREAM_SQL = `
  SELECT '0' AS m_id, u.id AS m_upstream_id, NULL AS m_platform_model_id, NULL::int AS m_weight, 0 AS m_priority,
         u.id AS u_id, u.workspace_id AS u_workspace_id, u.api AS u_api, u.base_url AS u_base_url,
         u.auth_kind AS u_auth_kind, u.credential_ciphertext AS u_credential_ciphertext, u.models AS u_models,
         u.model_map AS u_model_map, u.weight AS u_weight, u.timeout_ms AS u_timeout_ms, u.enabled AS u_enabled
    FROM "ai"."upstreams" u
   WHERE u.id = $1 AND u.workspace_id = $2`;

/**
 * Gateway key hash → everything a request needs (key, pool, ready-to-use members), so the hot
 * path does no I/O for a known key. Entries live `ttlMs` (unknown keys `negativeTtlMs`) and go at
 * once when TOPICS.aiConfigChanged names their workspace; concurrent misses of one key share one
 * load. Staleness is therefore bounded by the pub/sub delivery (milliseconds) and, should an
 * event be lost, by the TTL.
 */
export class RouteCache {
  private readonly slots = new Map<string, Slot>();
  private readonly loading = new Map<string, Promise<RouteEntry | null>>();
  private readonly byWorkspace = new Map<string, Set<string>>();
  /** Bumped by every invalidation: a load that started before one is not cached. */
  private generation = 0;
  private readonly unsubscribe: () => void;
  private readonly maxEntries: number;
  private readonly ttlMs: number;
  private readonly negativeTtlMs: number;
  private readonly now: () => number;
  private readonly platform: Map<string, PlatformModelConfig>;

  constructor(private readonly options: RouteCacheOptions) {
    this.maxEntries = options.maxEntries ?? 10_000;
    this.ttlMs = options.ttlMs ?? 60_000;
    this.negativeTtlMs = options.negativeTtlMs ?? 5_000;
    this.now = options.now ?? Date.now;
    this.platform = new Map(options.platformModels.map((pm) => [pm.id, pm]));
    this.unsubscribe = options.pubsub.on<{ workspaceId?: string }>(TOPICS.aiConfigChanged, (event) => {
      if (event && typeof event.workspaceId === 'string') this.invalidateWorkspace(event.workspaceId);
      else this.clear();
    });
  }

  /** The route of a presented gateway key (the whole key), or null when no such key exists. */
  resolve(presentedKey: string): RouteEntry | null | Promise<RouteEntry | null> {
    return this.resolveHash(sha256(presentedKey));
  }

  /** Synchronous on a hit (no promise, no microtask); a promise on a miss. */
  resolveHash(hash: string): RouteEntry | null | Promise<RouteEntry | null> {
    const slot = this.slots.get(hash);
    if (slot) {
      if (slot.expiresAt > this.now()) {
        // LRU: move to the back of the Map's order.
        this.slots.delete(hash);
        this.slots.set(hash, slot);
        return slot.entry;
      }
      this.drop(hash, slot);
    }
    let pending = this.loading.get(hash);
    if (!pending) {
      const generation = this.generation;
      pending = this.load(hash).then(
        (entry) => {
          this.loading.delete(hash);
          if (generation === this.generation) this.store(hash, entry);
          return entry;
        },
        (err: unknown) => {
          this.loading.delete(hash);
          throw err;
        },
      );
      this.loading.set(hash, pending);
    }
    return pending;
  }

  invalidateWorkspace(workspaceId: string): void {
    this.generation++;
    const hashes = this.byWorkspace.get(workspaceId);
    if (!hashes) return;
    this.byWorkspace.delete(workspaceId);
    for (const hash of hashes) this.slots.delete(hash);
  }

  clear(): void {
    this.generation++;
    this.slots.clear();
    this.byWorkspace.clear();
  }

  close(): void {
    this.unsubscribe();
    this.clear();
  }

  get size(): number {
    return this.slots.size;
  }

  private store(hash: string, entry: RouteEntry | null): void {
    const old = this.slots.get(hash);
    if (old) this.drop(hash, old);
    while (this.slots.size >= this.maxEntries) {
      const [oldestHash, oldest] = this.slots.entries().next().value as [string, Slot];
      this.drop(oldestHash, oldest);
    }
    this.slots.set(hash, { entry, expiresAt: this.now() + (entry ? this.ttlMs : this.negativeTtlMs) });
    if (entry) {
      let hashes = this.byWorkspace.get(entry.key.workspaceId);
      if (!hashes) this.byWorkspace.set(entry.key.workspaceId, (hashes = new Set()));
      hashes.add(hash);
    }
  }

  private drop(hash: string, slot: Slot): void {
    this.slots.delete(hash);
    if (!slot.entry) return;
    const hashes = this.byWorkspace.get(slot.entry.key.workspaceId);
    hashes?.delete(hash);
    if (hashes && hashes.size === 0) this.byWorkspace.delete(slot.entry.key.workspaceId);
  }

  private async load(hash: string): Promise<RouteEntry | null> {
    const rows = (await this.options.dataSource.query(ROUTE_SQL, [hash])) as RouteRow[];
    if (rows.length === 0) return null;
    return this.entryOf(rows);
  }

  /**
   * A pool of a workspace with its members, for the playground (not cached: rare, and the
   * console expects its latest edit to apply). Null when the pool is not the workspace's.
   */
  async loadPool(workspaceId: string, poolId: string): Promise<{ pool: CachedPool; members: RouteMember[] } | null> {
    const rows = (await this.options.dataSource.query(POOL_SQL, [poolId, workspaceId])) as Array<MemberRow & PoolColumns>;
    if (rows.length === 0) return null;
    const first = rows[0];
    const pool: CachedPool = { id: first.p_id, workspaceId: first.p_workspace_id, strategy: first.p_strategy, storeConversations: first.p_store_conversations, maxAttempts: Math.max(1, first.p_max_attempts) };
    return { pool, members: this.membersOf(rows, workspaceId, pool.id) };
  }

  /** One upstream of a workspace as a member (the playground's direct route); null when not usable. */
  async loadUpstream(workspaceId: string, upstreamId: string): Promise<RouteMember | null> {
    const rows = (await this.options.dataSource.query(UPSTREAM_SQL, [upstreamId, workspaceId])) as MemberRow[];
    return rows.length ? (this.membersOf(rows, workspaceId, '')[0] ?? null) : null;
  }

  /** Builds the entry; members of another workspace, disabled ones and unopenable credentials are left out. */
  entryOf(rows: RouteRow[]): RouteEntry | null {
    const first = rows[0];
    const key: CachedKey = {
      id: first.k_id,
      workspaceId: first.k_workspace_id,
      poolId: first.k_pool_id,
      requestsPerMinute: first.k_requests_per_minute,
      tokensPerMinute: first.k_tokens_per_minute,
      monthlyBudgetUsd: first.k_monthly_budget_usd === null ? null : Number(first.k_monthly_budget_usd),
      storeConversations: first.k_store_conversations,
      expiresAt: first.k_expires_at ? new Date(first.k_expires_at).getTime() : null,
      revokedAt: first.k_revoked_at ? new Date(first.k_revoked_at).getTime() : null,
    };
    const pool: CachedPool = {
      id: first.p_id,
      workspaceId: first.p_workspace_id,
      strategy: first.p_strategy,
      storeConversations: first.p_store_conversations,
      maxAttempts: Math.max(1, first.p_max_attempts),
    };
    // Defence in depth: a pool of another workspace serves nothing to this key.
    const members = pool.workspaceId === key.workspaceId ? this.membersOf(rows, key.workspaceId, pool.id) : [];
    const limited = key.requestsPerMinute !== null || key.tokensPerMinute !== null || key.monthlyBudgetUsd !== null;
    return { key, pool, members, limited, storeConversations: key.storeConversations || pool.storeConversations };
  }

  /**
   * Ready-to-use members of a pool's rows: upstreams of `workspaceId` that are enabled and whose
   * credential opens, and platform models the configuration still has.
   */
  membersOf(rows: MemberRow[], workspaceId: string, poolId: string): RouteMember[] {
    const members: RouteMember[] = [];
    for (const row of rows) {
      if (row.m_id === null) continue;
      if (row.m_upstream_id !== null) {
        // A member row pointing at another workspace's upstream is ignored (and logged).
        if (row.u_id === null || row.u_enabled === false) continue;
        if (row.u_workspace_id !== workspaceId) {
          this.options.logger.warn('ai proxy: pool member points at an upstream of another workspace; ignored', { poolId: poolId, upstreamId: row.u_id });
          continue;
        }
        let credential: string;
        try {
          credential = openCredential(this.options.encryptionKey, row.u_id, row.u_credential_ciphertext ?? '');
        } catch {
          this.options.logger.error('ai proxy: an upstream credential does not open; member skipped', { upstreamId: row.u_id });
          continue;
        }
        const base = splitBaseUrl(row.u_base_url ?? '');
        if (!base) continue;
        members.push({
          id: row.u_id,
          upstreamId: row.u_id,
          platformModelId: null,
          api: row.u_api!,
          ...base,
          authKind: row.u_auth_kind ?? 'api_key',
          credential,
          models: row.u_models ?? [],
          modelMap: row.u_model_map ?? {},
          platformModel: null,
          weight: row.m_weight ?? row.u_weight ?? 1,
          priority: row.m_priority ?? 0,
          timeoutMs: row.u_timeout_ms ?? 60_000,
        });
      } else if (row.m_platform_model_id !== null) {
        const pm = this.platform.get(row.m_platform_model_id);
        const base = pm && splitBaseUrl(pm.baseUrl);
        if (!pm || !base) continue;
        members.push({
          id: `platform:${pm.id}`,
          upstreamId: null,
          platformModelId: pm.id,
          api: pm.api,
          ...base,
          authKind: 'api_key',
          credential: pm.apiKey,
          models: [pm.model],
          modelMap: pm.upstreamModel ? { [pm.model]: pm.upstreamModel } : {},
          platformModel: pm.model,
          weight: row.m_weight ?? 1,
          priority: row.m_priority ?? 0,
          timeoutMs: 60_000,
        });
      }
    }
    return members;
  }
}

/** `https://host/v1/` → { origin: 'https://host', basePath: '/v1' }; null when not an http(s) URL. */
export function splitBaseUrl(baseUrl: string): { origin: string; basePath: string } | null {
  try {
    const url = new URL(baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    return { origin: url.origin, basePath: url.pathname.replace(/\/+$/, '') };
  } catch {
    return null;
  }
}

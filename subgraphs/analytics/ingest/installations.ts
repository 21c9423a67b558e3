import type { DataSource } from 'typeorm';
import { preparedQuery } from '../../../core/database';
import { normalizeDomains } from './origin';

/** What ingestion needs of an installation. */
export interface IngestInstallation {
  id: string;
  workspaceId: string;
  /** Normalized (origin.ts). */
  domains: string[];
}

/** Installations by public key, cached briefly; invalidate() drops a changed or deleted one at once. */
export interface InstallationLookup {
  byKey(publicKey: string): Promise<IngestInstallation | null>;
  /** Drops the cached copy of one installation, or of all without an id. */
  invalidate(installationId?: string): void;
}

interface CacheEntry {
  at: number;
  value: Promise<IngestInstallation | null>;
  /** Known once loaded: the installation's id, or null for an unknown key. */
  installationId?: string | null;
}

const CACHE_LIMIT = 10_000;

export function createInstallationLookup(db: DataSource, options: { ttlMs: number; unknownTtlMs: number; now: () => number }): InstallationLookup {
  const cache = new Map<string, CacheEntry>();

  const load = async (publicKey: string): Promise<IngestInstallation | null> => {
    const [row] = await preparedQuery<{ id: string; workspace_id: string; domains: string[] }>(
      db,
      'analytics_ingest_installation_by_key',
      'SELECT id, workspace_id, domains FROM analytics.installations WHERE public_key = $1',
      [publicKey],
    );
    return row ? { id: row.id, workspaceId: row.workspace_id, domains: normalizeDomains(row.domains) } : null;
  };

  return {
    byKey(publicKey) {
      const now = options.now();
      const hit = cache.get(publicKey);
      if (hit && now - hit.at < (hit.installationId === null ? options.unknownTtlMs : options.ttlMs)) return hit.value;
      const entry: CacheEntry = { at: now, value: load(publicKey) };
      cache.set(publicKey, entry);
      entry.value.then(
        (installation) => (entry.installationId = installation?.id ?? null),
        () => cache.get(publicKey) === entry && cache.delete(publicKey),
      );
      if (cache.size > CACHE_LIMIT) cache.delete(cache.keys().next().value!);
      return entry.value;
    },
    invalidate(installationId) {
      if (!installationId) return cache.clear();
      // Also dropped: lookups still loading (they may have read the row before the change) and
      // unknown keys (a new installation's key may be among them).
      for (const [key, entry] of cache) if (entry.installationId == null || entry.installationId === installationId) cache.delete(key);
    },
  };
}

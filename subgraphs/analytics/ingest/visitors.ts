import { createHash, randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { preparedQuery } from '../../../core/database';

/**
 * Visitor ids without cookies: the first 8 bytes (a signed bigint) of SHA-256(salt of the UTC
 * day ‖ installation id ‖ client IP ‖ user agent). The salt is random and changes every day, so
 * a visitor cannot be followed across days, and the IP is never kept: only this hash is.
 */
export interface VisitorIds {
  /** The visitor's id (a bigint, in decimal) for the day of `now`. */
  visitorId(installationId: string, clientIp: string, userAgent: string, now: number): Promise<string>;
}

const DAY_MS = 86_400_000;

export function createVisitorIds(db: DataSource): VisitorIds {
  /** Salts by UTC day number; today's and yesterday's at most. */
  const salts = new Map<number, Buffer | Promise<Buffer>>();

  const loadSalt = async (day: number): Promise<Buffer> => {
    const date = new Date(day * DAY_MS).toISOString().slice(0, 10);
    // Every process inserts its candidate, and all read the one that won: they agree on the day's salt.
    await preparedQuery(db, 'analytics_ingest_salt_insert', 'INSERT INTO analytics.salts (day, salt) VALUES ($1::date, $2) ON CONFLICT (day) DO NOTHING', [date, randomBytes(32)]);
    const [row] = await preparedQuery<{ salt: Buffer }>(db, 'analytics_ingest_salt_read', 'SELECT salt FROM analytics.salts WHERE day = $1::date', [date]);
    if (!row) throw new Error(`The salt of ${date} vanished`);
    await preparedQuery(db, 'analytics_ingest_salt_expire', 'DELETE FROM analytics.salts WHERE day < $1::date - 1', [date]);
    return row.salt;
  };

  const saltOf = (day: number): Buffer | Promise<Buffer> => {
    const cached = salts.get(day);
    if (cached) return cached;
    const loading = loadSalt(day).then(
      (salt) => {
        salts.set(day, salt);
        for (const known of salts.keys()) if (known < day - 1) salts.delete(known);
        return salt;
      },
      (err: unknown) => {
        salts.delete(day);
        throw err;
      },
    );
    salts.set(day, loading);
    return loading;
  };

  return {
    async visitorId(installationId, clientIp, userAgent, now) {
      const cached = saltOf(Math.floor(now / DAY_MS));
      const salt = cached instanceof Buffer ? cached : await cached;
      return createHash('sha256').update(salt).update(installationId).update(clientIp).update(userAgent).digest().readBigInt64BE(0).toString();
    },
  };
}

import type { DataSource } from 'typeorm';

/** Tokens stay a day past expiry, so a reuse of a recently expired token still revokes its family. */
const GRACE = `interval '1 day'`;

/**
 * Deletes refresh tokens that expired more than a day ago; returns how many. The worker runs
 * it on `config.refreshTokenPurgeCron` with a DataSource opened on the identity schema.
 */
export async function purgeExpiredRefreshTokens(dataSource: DataSource): Promise<number> {
  const rows: Array<{ count: number }> = await dataSource.query(
    `WITH purged AS (DELETE FROM "identity"."refresh_tokens" WHERE "expires_at" < now() - ${GRACE} RETURNING 1)
     SELECT count(*)::int AS "count" FROM purged`,
  );
  return rows[0]?.count ?? 0;
}

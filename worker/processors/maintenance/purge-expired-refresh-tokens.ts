import { identitySubgraph } from '../../../subgraphs/identity';
import { purgeExpiredRefreshTokens } from '../../../subgraphs/identity/auth/refresh-token.maintenance';
import type { JobProcessor } from '../types';

export interface PurgeExpiredRefreshTokensResult {
  purged: number;
}

/**
 * Deletes refresh tokens that expired more than a day ago (the identity domain decides which);
 * scheduled by the worker tier, see SCHEDULES. Safe to retry: a second run finds nothing.
 */
export const purgeExpiredRefreshTokensProcessor: JobProcessor<unknown, PurgeExpiredRefreshTokensResult> = async (job, ctx) => {
  const dataSource = await ctx.databases.get(identitySubgraph);
  const purged = await purgeExpiredRefreshTokens(dataSource);
  ctx.logger.info('purged expired refresh tokens', { jobId: job.id, purged });
  return { purged };
};

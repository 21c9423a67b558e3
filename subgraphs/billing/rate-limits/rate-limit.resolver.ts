import { Arg, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../../core/context';
import type { RateLimitService } from './rate-limit.service';
import { WorkspaceRateLimits } from './rate-limit.types';

/** One line per field: the logic is in RateLimitService. */
@Resolver(() => WorkspaceRateLimits)
export class RateLimitResolver {
  constructor(private readonly service: RateLimitService) {}

  @Query(() => WorkspaceRateLimits, { description: "A workspace's plan, limits and current use of them. Needs any role in the workspace." })
  rateLimits(@Ctx() ctx: RequestContext, @Arg('workspaceId', () => ID) workspaceId: string): Promise<WorkspaceRateLimits> {
    return this.service.get(ctx, { workspaceId });
  }

  @Mutation(() => WorkspaceRateLimits, { description: "Recomputes a workspace's limits from its plan and the operator's overrides; gateways apply them at once. Needs admin or owner." })
  refreshRateLimits(@Ctx() ctx: RequestContext, @Arg('workspaceId', () => ID) workspaceId: string): Promise<WorkspaceRateLimits> {
    return this.service.refresh(ctx, { workspaceId });
  }
}

import { Args, Ctx, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../../core/context';
import type { UsageService } from './usage.service';
import { AiRealtimeUsage, AiRealtimeUsageArgs, AiUsageArgs, AiUsageReport } from './usage.types';

/** One line per field: the logic is in UsageService. */
@Resolver(() => AiUsageReport)
export class AiUsageResolver {
  constructor(private readonly service: UsageService) {}

  @Query(() => AiUsageReport, { description: 'Usage of a workspace over a window (default the last 30 days), in total and grouped.' })
  aiUsage(@Ctx() ctx: RequestContext, @Args(() => AiUsageArgs) args: AiUsageArgs) {
    return this.service.report(ctx, args);
  }

  @Query(() => AiRealtimeUsage, { description: 'Usage of the last 60 seconds, counted live by the proxy.' })
  aiUsageRealtime(@Ctx() ctx: RequestContext, @Args(() => AiRealtimeUsageArgs) args: AiRealtimeUsageArgs) {
    return this.service.realtime(ctx, args);
  }
}

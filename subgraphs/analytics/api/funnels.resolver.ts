import { Args, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../../core/context';
import type { FunnelService } from './funnels.service';
import {
  AnalyticsFunnel,
  AnalyticsFunnelAnalysis,
  AnalyticsFunnelIdArgs,
  AnalyticsFunnelList,
  AnalyzeAnalyticsFunnelArgs,
  CreateAnalyticsFunnelArgs,
  ListAnalyticsFunnelsArgs,
  UpdateAnalyticsFunnelArgs,
} from './funnels.types';
import { DeletedAnalyticsRecord } from './installations.types';

/** One line per field: the logic is in FunnelService. */
@Resolver(() => AnalyticsFunnel)
export class AnalyticsFunnelResolver {
  constructor(private readonly service: FunnelService) {}

  @Query(() => AnalyticsFunnelList, { description: 'Funnels of an installation, or of a workspace, newest first.' })
  analyticsFunnels(@Ctx() ctx: RequestContext, @Args(() => ListAnalyticsFunnelsArgs) args: ListAnalyticsFunnelsArgs) {
    return this.service.list(ctx, args);
  }

  @Query(() => AnalyticsFunnel)
  analyticsFunnel(@Ctx() ctx: RequestContext, @Args(() => AnalyticsFunnelIdArgs) args: AnalyticsFunnelIdArgs) {
    return this.service.get(ctx, args.id);
  }

  @Query(() => AnalyticsFunnelAnalysis, { description: "Per step: visitors reaching it in order within the window, counted from each visitor's first step-1 event in [from, to)." })
  analyticsFunnelAnalysis(@Ctx() ctx: RequestContext, @Args(() => AnalyzeAnalyticsFunnelArgs) args: AnalyzeAnalyticsFunnelArgs) {
    return this.service.analyze(ctx, args);
  }

  @Mutation(() => AnalyticsFunnel)
  createAnalyticsFunnel(@Ctx() ctx: RequestContext, @Args(() => CreateAnalyticsFunnelArgs) args: CreateAnalyticsFunnelArgs) {
    return this.service.create(ctx, args);
  }

  @Mutation(() => AnalyticsFunnel, { description: 'Replaces the given fields.' })
  updateAnalyticsFunnel(@Ctx() ctx: RequestContext, @Args(() => UpdateAnalyticsFunnelArgs) args: UpdateAnalyticsFunnelArgs) {
    return this.service.update(ctx, args);
  }

  @Mutation(() => DeletedAnalyticsRecord)
  deleteAnalyticsFunnel(@Ctx() ctx: RequestContext, @Args(() => AnalyticsFunnelIdArgs) args: AnalyticsFunnelIdArgs) {
    return this.service.delete(ctx, args.id);
  }
}

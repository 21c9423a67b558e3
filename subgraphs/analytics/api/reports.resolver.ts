import { Args, Ctx, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../../core/context';
import type { ReportService } from './reports.service';
import {
  AnalyticsEventList,
  AnalyticsEventsArgs,
  AnalyticsRealtime,
  AnalyticsRealtimeArgs,
  AnalyticsStats,
  AnalyticsStatsArgs,
  AnalyticsTimeseries,
  AnalyticsTimeseriesArgs,
  AnalyticsTrajectory,
  AnalyticsTrajectoryArgs,
  AnalyticsUserList,
  AnalyticsUserProfile,
  AnalyticsUserProfileArgs,
  AnalyticsUsersArgs,
} from './reports.types';

/** One line per field: the logic is in ReportService. */
@Resolver(() => AnalyticsStats)
export class AnalyticsReportResolver {
  constructor(private readonly service: ReportService) {}

  @Query(() => AnalyticsRealtime, { description: 'Visitors, pageviews and top pages of the last 5 minutes.' })
  analyticsRealtime(@Ctx() ctx: RequestContext, @Args(() => AnalyticsRealtimeArgs) args: AnalyticsRealtimeArgs) {
    return this.service.realtime(ctx, args);
  }

  @Query(() => AnalyticsTimeseries, { description: 'One metric per minute, hour, day, week or month of the window, empty buckets included.' })
  analyticsTimeseries(@Ctx() ctx: RequestContext, @Args(() => AnalyticsTimeseriesArgs) args: AnalyticsTimeseriesArgs) {
    return this.service.timeseries(ctx, args);
  }

  @Query(() => AnalyticsEventList, { description: 'Events of the window, newest first, filtered.' })
  analyticsEvents(@Ctx() ctx: RequestContext, @Args(() => AnalyticsEventsArgs) args: AnalyticsEventsArgs) {
    return this.service.events(ctx, args);
  }

  @Query(() => AnalyticsStats, { description: 'Pageviews, visitors, sessions, bounce rate, visit duration and top lists of the window.' })
  analyticsStats(@Ctx() ctx: RequestContext, @Args(() => AnalyticsStatsArgs) args: AnalyticsStatsArgs) {
    return this.service.stats(ctx, args);
  }

  @Query(() => AnalyticsTrajectory, { description: 'The events of one visitor or one user, in order, grouped into visits.' })
  analyticsTrajectory(@Ctx() ctx: RequestContext, @Args(() => AnalyticsTrajectoryArgs) args: AnalyticsTrajectoryArgs) {
    return this.service.trajectory(ctx, args);
  }

  @Query(() => AnalyticsUserList, { description: 'Identified users seen in the window, with their traits and event counts.' })
  analyticsUsers(@Ctx() ctx: RequestContext, @Args(() => AnalyticsUsersArgs) args: AnalyticsUsersArgs) {
    return this.service.users(ctx, args);
  }

  @Query(() => AnalyticsUserProfile, { description: "One identified user: traits, and the window's sessions and recent events." })
  analyticsUserProfile(@Ctx() ctx: RequestContext, @Args(() => AnalyticsUserProfileArgs) args: AnalyticsUserProfileArgs) {
    return this.service.userProfile(ctx, args);
  }
}

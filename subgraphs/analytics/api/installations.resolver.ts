import { Args, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../../core/context';
import type { InstallationService } from './installations.service';
import {
  AnalyticsInstallation,
  AnalyticsInstallationIdArgs,
  AnalyticsInstallationList,
  AnalyticsInstallationScript,
  CreateAnalyticsInstallationArgs,
  DeletedAnalyticsRecord,
  ListAnalyticsInstallationsArgs,
  UpdateAnalyticsInstallationArgs,
} from './installations.types';

/** One line per field: the logic is in InstallationService. */
@Resolver(() => AnalyticsInstallation)
export class AnalyticsInstallationResolver {
  constructor(private readonly service: InstallationService) {}

  @Query(() => AnalyticsInstallationList, { description: 'Installations of a workspace, newest first; hidden ones only with includeHidden.' })
  analyticsInstallations(@Ctx() ctx: RequestContext, @Args(() => ListAnalyticsInstallationsArgs) args: ListAnalyticsInstallationsArgs) {
    return this.service.list(ctx, args);
  }

  @Query(() => AnalyticsInstallation)
  analyticsInstallation(@Ctx() ctx: RequestContext, @Args(() => AnalyticsInstallationIdArgs) args: AnalyticsInstallationIdArgs) {
    return this.service.get(ctx, args.id);
  }

  @Query(() => AnalyticsInstallationScript, { description: 'The script tag that tracks a site with this installation.' })
  analyticsInstallationScript(@Ctx() ctx: RequestContext, @Args(() => AnalyticsInstallationIdArgs) args: AnalyticsInstallationIdArgs) {
    return this.service.script(ctx, args.id);
  }

  @Mutation(() => AnalyticsInstallation, { description: 'Creates an installation with a new public key.' })
  createAnalyticsInstallation(@Ctx() ctx: RequestContext, @Args(() => CreateAnalyticsInstallationArgs) args: CreateAnalyticsInstallationArgs) {
    return this.service.create(ctx, args);
  }

  @Mutation(() => AnalyticsInstallation, { description: 'Renames it and/or replaces its domains.' })
  updateAnalyticsInstallation(@Ctx() ctx: RequestContext, @Args(() => UpdateAnalyticsInstallationArgs) args: UpdateAnalyticsInstallationArgs) {
    return this.service.update(ctx, args);
  }

  @Mutation(() => DeletedAnalyticsRecord, { description: 'Deletes it with its funnels, users, sessions and events.' })
  deleteAnalyticsInstallation(@Ctx() ctx: RequestContext, @Args(() => AnalyticsInstallationIdArgs) args: AnalyticsInstallationIdArgs) {
    return this.service.delete(ctx, args.id);
  }

  @Mutation(() => AnalyticsInstallation, { description: 'Leaves default lists; it still ingests.' })
  hideAnalyticsInstallation(@Ctx() ctx: RequestContext, @Args(() => AnalyticsInstallationIdArgs) args: AnalyticsInstallationIdArgs) {
    return this.service.setHidden(ctx, args.id, true);
  }

  @Mutation(() => AnalyticsInstallation)
  unhideAnalyticsInstallation(@Ctx() ctx: RequestContext, @Args(() => AnalyticsInstallationIdArgs) args: AnalyticsInstallationIdArgs) {
    return this.service.setHidden(ctx, args.id, false);
  }
}

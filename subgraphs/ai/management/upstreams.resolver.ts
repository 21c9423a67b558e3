import { Args, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../../core/context';
import type { UsageService } from './usage.service';
import { AiUsageReport } from './usage.types';
import type { UpstreamService } from './upstreams.service';
import { AiDeletedRecord, AiUpstream, AiUpstreamIdArgs, AiUpstreamList, AiUpstreamTestResult, AiUpstreamUsageArgs, CreateAiUpstreamArgs, ListAiUpstreamsArgs, TestAiUpstreamArgs, UpdateAiUpstreamArgs } from './upstreams.types';

/** One line per field: the logic is in UpstreamService (and UsageService for usage). */
@Resolver(() => AiUpstream)
export class AiUpstreamResolver {
  constructor(
    private readonly upstreams: UpstreamService,
    private readonly usage: UsageService,
  ) {}

  @Query(() => AiUpstreamList, { description: 'Upstreams of a workspace, newest first.' })
  aiUpstreams(@Ctx() ctx: RequestContext, @Args(() => ListAiUpstreamsArgs) args: ListAiUpstreamsArgs) {
    return this.upstreams.list(ctx, args);
  }

  @Query(() => AiUpstream)
  aiUpstream(@Ctx() ctx: RequestContext, @Args(() => AiUpstreamIdArgs) args: AiUpstreamIdArgs) {
    return this.upstreams.get(ctx, args.id);
  }

  @Mutation(() => AiUpstream, { description: 'Adds an upstream with an API key (stored encrypted, never returned).' })
  createAiUpstream(@Ctx() ctx: RequestContext, @Args(() => CreateAiUpstreamArgs) args: CreateAiUpstreamArgs) {
    return this.upstreams.create(ctx, args);
  }

  @Mutation(() => AiUpstream, { description: 'Changes the given fields.' })
  updateAiUpstream(@Ctx() ctx: RequestContext, @Args(() => UpdateAiUpstreamArgs) args: UpdateAiUpstreamArgs) {
    return this.upstreams.update(ctx, args);
  }

  @Mutation(() => AiDeletedRecord, { description: 'Deletes the upstream; it leaves every pool it was in.' })
  deleteAiUpstream(@Ctx() ctx: RequestContext, @Args(() => AiUpstreamIdArgs) args: AiUpstreamIdArgs) {
    return this.upstreams.delete(ctx, args.id);
  }

  @Mutation(() => AiUpstreamTestResult, { description: "Fetches the vendor's models list with the stored credential (10 s at most); upstream failures are ok: false, never errors." })
  testAiUpstream(@Ctx() ctx: RequestContext, @Args(() => TestAiUpstreamArgs) args: TestAiUpstreamArgs) {
    return this.upstreams.test(ctx, args);
  }

  @Query(() => AiUsageReport, { description: "The upstream's usage by day." })
  aiUpstreamUsage(@Ctx() ctx: RequestContext, @Args(() => AiUpstreamUsageArgs) args: AiUpstreamUsageArgs) {
    return this.usage.upstreamUsage(ctx, args);
  }
}

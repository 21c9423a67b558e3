import { Args, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../../core/context';
import { Sandbox } from '../sandboxes/sandbox.types';
import type { SnapshotService } from './snapshot.service';
import { CreateSnapshotArgs, DeletedSnapshot, ListSnapshotsArgs, RestoreSnapshotArgs, Snapshot, SnapshotIdArgs, SnapshotList, UpdateSnapshotArgs } from './snapshot.types';

/** One line per field: the logic is in SnapshotService. */
@Resolver(() => Snapshot)
export class SnapshotResolver {
  constructor(private readonly service: SnapshotService) {}

  @Query(() => SnapshotList, { description: 'Snapshots of a workspace, newest first.' })
  snapshots(@Ctx() ctx: RequestContext, @Args(() => ListSnapshotsArgs) args: ListSnapshotsArgs) {
    return this.service.list(ctx, args);
  }

  @Query(() => Snapshot)
  snapshot(@Ctx() ctx: RequestContext, @Args(() => SnapshotIdArgs) args: SnapshotIdArgs) {
    return this.service.get(ctx, args.id);
  }

  @Mutation(() => Snapshot, { description: 'Snapshots a sandbox (sandboxId) or a plain image on the engine (image). Status creating until the engine has it.' })
  createSnapshot(@Ctx() ctx: RequestContext, @Args(() => CreateSnapshotArgs) args: CreateSnapshotArgs) {
    return this.service.create(ctx, args);
  }

  @Mutation(() => Snapshot, { description: 'Changes name, description and/or labels.' })
  updateSnapshot(@Ctx() ctx: RequestContext, @Args(() => UpdateSnapshotArgs) args: UpdateSnapshotArgs) {
    return this.service.update(ctx, args);
  }

  @Mutation(() => DeletedSnapshot, { description: 'Deletes the snapshot and its image; refused (409) while it is being made or a sandbox boots from it.' })
  deleteSnapshot(@Ctx() ctx: RequestContext, @Args(() => SnapshotIdArgs) args: SnapshotIdArgs) {
    return this.service.delete(ctx, args.id);
  }

  @Mutation(() => Sandbox, { description: 'Boots a sandbox from the snapshot: a new one (name) or a stopped one (sandboxId, default the snapshot\'s own).' })
  restoreSnapshot(@Ctx() ctx: RequestContext, @Args(() => RestoreSnapshotArgs) args: RestoreSnapshotArgs) {
    return this.service.restore(ctx, args);
  }
}

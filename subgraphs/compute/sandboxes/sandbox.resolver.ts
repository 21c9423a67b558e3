import { Args, Ctx, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import type { RequestContext, SubgraphContext } from '../../../core/context';
import type { ComputeLoaders } from '../compute.loaders';
import { SandboxWithSnapshot } from '../snapshots/snapshot.types';
import type { SandboxIoService } from './sandbox-io.service';
import type { SandboxService } from './sandbox.service';
import {
  AddPortArgs,
  CreateSandboxArgs,
  ExecArgs,
  ExecResult,
  ExecStreamEvent,
  ExtendTtlArgs,
  FileContent,
  FileContentArgs,
  FileList,
  LifecycleArgs,
  ListFilesArgs,
  ListSandboxesArgs,
  LogLine,
  LogsArgs,
  Sandbox,
  SandboxIdArgs,
  SandboxLifecycleList,
  SandboxList,
  SandboxLogs,
  SandboxPort,
  SandboxStatsHistory,
  SandboxStatusChange,
  SnapshotSandboxArgs,
  StartFromSnapshotArgs,
  StatsArgs,
  UpdateSandboxArgs,
  WriteFilesArgs,
  WriteFilesResult,
} from './sandbox.types';

type Ctx = SubgraphContext<ComputeLoaders>;

/** One line per field: the logic is in SandboxService (lifecycle) and SandboxIoService (inside the container). */
@Resolver(() => Sandbox)
export class SandboxResolver {
  constructor(
    private readonly lifecycle: SandboxService,
    private readonly io: SandboxIoService,
  ) {}

  @Query(() => SandboxList, { description: 'Sandboxes of a workspace, newest first (deleted ones only when asked for by status).' })
  sandboxes(@Ctx() ctx: RequestContext, @Args(() => ListSandboxesArgs) args: ListSandboxesArgs) {
    return this.lifecycle.list(ctx, args);
  }

  @Query(() => Sandbox)
  sandbox(@Ctx() ctx: RequestContext, @Args(() => SandboxIdArgs) args: SandboxIdArgs) {
    return this.lifecycle.get(ctx, args.id);
  }

  @Mutation(() => Sandbox, { description: 'Accepts the sandbox as pending; a worker starts it (watch status, or subscribe to sandboxStatus).' })
  createSandbox(@Ctx() ctx: RequestContext, @Args(() => CreateSandboxArgs) args: CreateSandboxArgs) {
    return this.lifecycle.create(ctx, args);
  }

  @Mutation(() => Sandbox, { description: 'Renames it and/or replaces its labels.' })
  updateSandbox(@Ctx() ctx: RequestContext, @Args(() => UpdateSandboxArgs) args: UpdateSandboxArgs) {
    return this.lifecycle.update(ctx, args);
  }

  @Mutation(() => Sandbox, { description: 'Moves it to deleting; the worker removes the container. Snapshots stay.' })
  deleteSandbox(@Ctx() ctx: RequestContext, @Args(() => SandboxIdArgs) args: SandboxIdArgs) {
    return this.lifecycle.delete(ctx, args.id);
  }

  @Mutation(() => Sandbox, { description: 'Starts a stopped or failed sandbox; its files are as they were at the stop.' })
  startSandbox(@Ctx() ctx: RequestContext, @Args(() => SandboxIdArgs) args: SandboxIdArgs) {
    return this.lifecycle.start(ctx, args.id);
  }

  @Mutation(() => Sandbox)
  stopSandbox(@Ctx() ctx: RequestContext, @Args(() => SandboxIdArgs) args: SandboxIdArgs) {
    return this.lifecycle.stop(ctx, args.id);
  }

  @Mutation(() => Sandbox)
  extendSandboxTtl(@Ctx() ctx: RequestContext, @Args(() => ExtendTtlArgs) args: ExtendTtlArgs) {
    return this.lifecycle.extendTtl(ctx, args);
  }

  @Mutation(() => SandboxWithSnapshot, { description: 'Commits the filesystem into a new snapshot; the sandbox returns to its state afterwards.' })
  snapshotSandbox(@Ctx() ctx: RequestContext, @Args(() => SnapshotSandboxArgs) args: SnapshotSandboxArgs) {
    return this.lifecycle.snapshot(ctx, args);
  }

  @Mutation(() => Sandbox, { description: 'Boots a stopped or failed sandbox from its newest ready snapshot.' })
  startSandboxFromLatest(@Ctx() ctx: RequestContext, @Args(() => SandboxIdArgs) args: SandboxIdArgs) {
    return this.lifecycle.startFromLatest(ctx, args.id);
  }

  @Mutation(() => Sandbox)
  startSandboxFromSnapshot(@Ctx() ctx: RequestContext, @Args(() => StartFromSnapshotArgs) args: StartFromSnapshotArgs) {
    return this.lifecycle.startFromSnapshot(ctx, args);
  }

  @Mutation(() => SandboxWithSnapshot, { description: 'Stops the sandbox, then commits its filesystem into a new snapshot.' })
  stopSandboxWithSnapshot(@Ctx() ctx: RequestContext, @Args(() => SnapshotSandboxArgs) args: SnapshotSandboxArgs) {
    return this.lifecycle.stopWithSnapshot(ctx, args);
  }

  @Mutation(() => ExecResult, { description: 'Runs a command to completion in a running sandbox.' })
  execSandbox(@Ctx() ctx: RequestContext, @Args(() => ExecArgs) args: ExecArgs) {
    return this.io.exec(ctx, args);
  }

  @Query(() => FileList)
  sandboxFiles(@Ctx() ctx: RequestContext, @Args(() => ListFilesArgs) args: ListFilesArgs) {
    return this.io.listFiles(ctx, args);
  }

  @Mutation(() => WriteFilesResult, { description: 'Writes files (text or base64, with modes); parents are created.' })
  writeSandboxFiles(@Ctx() ctx: RequestContext, @Args(() => WriteFilesArgs) args: WriteFilesArgs) {
    return this.io.writeFiles(ctx, args);
  }

  @Query(() => FileContent)
  sandboxFileContent(@Ctx() ctx: RequestContext, @Args(() => FileContentArgs) args: FileContentArgs) {
    return this.io.fileContent(ctx, args);
  }

  @Query(() => SandboxLogs, { description: 'The container\'s output (stdout and stderr), oldest first.' })
  sandboxLogs(@Ctx() ctx: RequestContext, @Args(() => LogsArgs) args: LogsArgs) {
    return this.io.logs(ctx, args);
  }

  @Query(() => SandboxLifecycleList, { description: 'Every status transition with its time and reason, oldest first.' })
  sandboxLifecycle(@Ctx() ctx: RequestContext, @Args(() => LifecycleArgs) args: LifecycleArgs) {
    return this.lifecycle.lifecycle(ctx, args);
  }

  @Query(() => SandboxStatsHistory)
  sandboxStatsHistory(@Ctx() ctx: RequestContext, @Args(() => StatsArgs) args: StatsArgs) {
    return this.io.statsHistory(ctx, args);
  }

  @Query(() => [SandboxPort])
  sandboxPorts(@Ctx() ctx: RequestContext, @Args(() => SandboxIdArgs) args: SandboxIdArgs) {
    return this.io.ports(ctx, args.id);
  }

  @Mutation(() => SandboxPort, { description: 'Makes a port of a running sandbox reachable through the platform (adding it again updates `public`).' })
  addSandboxPort(@Ctx() ctx: RequestContext, @Args(() => AddPortArgs) args: AddPortArgs) {
    return this.io.addPort(ctx, args);
  }

  @Subscription(() => SandboxStatusChange, {
    description: 'Status changes of one sandbox, as they happen.',
    subscribe: ({ args, context }) => (context as Ctx).loaders.services.statusStream(context as Ctx, (args as SandboxIdArgs).id),
  })
  sandboxStatus(@Root() event: SandboxStatusChange, @Args(() => SandboxIdArgs) _args: SandboxIdArgs): SandboxStatusChange {
    return event;
  }

  @Subscription(() => LogLine, {
    description: 'The container\'s output live (tail: lines of history first, default 0).',
    subscribe: ({ args, context }) => (context as Ctx).loaders.services.io.logStream(context as Ctx, args as LogsArgs),
  })
  sandboxLogStream(@Root() line: LogLine, @Args(() => LogsArgs) _args: LogsArgs): LogLine {
    return line;
  }

  @Subscription(() => ExecStreamEvent, {
    description: 'Runs a command and streams its output, then one exit event. Unsubscribing kills it.',
    subscribe: ({ args, context }) => (context as Ctx).loaders.services.io.execStream(context as Ctx, args as ExecArgs),
  })
  sandboxExecStream(@Root() event: ExecStreamEvent, @Args(() => ExecArgs) _args: ExecArgs): ExecStreamEvent {
    return event;
  }
}

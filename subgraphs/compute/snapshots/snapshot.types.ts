import { ArgsType, Field, Float, ID, ObjectType } from 'type-graphql';
import { PageArgs, PaginatedList } from '../../../core/pagination';
import { JSONObjectScalar } from '../../../core/scalars';
import { Sandbox } from '../sandboxes/sandbox.types';

@ObjectType({ description: 'A saved sandbox filesystem (volumes excluded), usable as snapshotId to boot a sandbox.' })
export class Snapshot {
  @Field(() => ID)
  id: string;

  @Field(() => ID)
  workspaceId: string;

  @Field(() => String)
  name: string;

  @Field(() => String, { nullable: true })
  description: string | null;

  @Field(() => JSONObjectScalar)
  labels: Record<string, string>;

  @Field(() => String, { description: 'creating | ready | failed' })
  status: string;

  @Field(() => String, { nullable: true })
  statusReason: string | null;

  @Field(() => ID, { nullable: true, description: 'The sandbox it was taken from.' })
  sandboxId: string | null;

  @Field(() => String, { description: 'The image it was made from.' })
  sourceImage: string;

  @Field(() => Float, { nullable: true })
  sizeBytes: number | null;

  @Field(() => ID, { nullable: true })
  createdByUserId: string | null;

  @Field(() => String)
  createdAt: string;

  @Field(() => String)
  updatedAt: string;

  @Field(() => String, { nullable: true })
  readyAt: string | null;
}

@ObjectType()
export class SnapshotList extends PaginatedList(Snapshot) {}

@ObjectType({ description: 'A sandbox together with the snapshot an operation is taking of it.' })
export class SandboxWithSnapshot {
  @Field(() => Sandbox)
  sandbox: Sandbox;

  @Field(() => Snapshot)
  snapshot: Snapshot;
}

@ObjectType()
export class DeletedSnapshot {
  @Field(() => ID)
  id: string;

  @Field(() => Boolean)
  deleted: boolean;
}

@ArgsType()
export class ListSnapshotsArgs extends PageArgs {
  @Field(() => ID, { nullable: true, description: 'Default: X-Workspace-ID, else the caller\'s personal workspace.' })
  workspaceId?: string | null;

  @Field(() => ID, { nullable: true, description: 'Only snapshots of this sandbox.' })
  sandboxId?: string | null;
}

@ArgsType()
export class SnapshotIdArgs {
  @Field(() => ID)
  id: string;
}

@ArgsType()
export class CreateSnapshotArgs {
  @Field(() => ID, { nullable: true, description: 'Default: the sandbox\'s workspace, else X-Workspace-ID, else the personal workspace.' })
  workspaceId?: string | null;

  @Field(() => ID, { nullable: true, description: 'Snapshot this sandbox (running or stopped); exactly one of sandboxId and image.' })
  sandboxId?: string | null;

  @Field(() => String, { nullable: true, description: 'Snapshot a plain image present on the engine.' })
  image?: string | null;

  @Field(() => String, { nullable: true })
  name?: string | null;

  @Field(() => String, { nullable: true })
  description?: string | null;

  @Field(() => JSONObjectScalar, { nullable: true })
  labels?: Record<string, unknown> | null;
}

@ArgsType()
export class UpdateSnapshotArgs {
  @Field(() => ID)
  id: string;

  @Field(() => String, { nullable: true })
  name?: string | null;

  @Field(() => String, { nullable: true })
  description?: string | null;

  @Field(() => JSONObjectScalar, { nullable: true, description: 'Replaces the labels.' })
  labels?: Record<string, unknown> | null;
}

@ArgsType()
export class RestoreSnapshotArgs {
  @Field(() => ID)
  id: string;

  @Field(() => ID, { nullable: true, description: 'Stopped or failed sandbox to boot from the snapshot; default: the snapshot\'s own sandbox. Ignored when name is given.' })
  sandboxId?: string | null;

  @Field(() => String, { nullable: true, description: 'Create a new sandbox of this name from the snapshot instead.' })
  name?: string | null;
}

import { ArgsType, Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { PageArgs, PaginatedList } from '../../../core/pagination';
import { AiPlatformModel } from './providers.types';
import { AiUpstream } from './upstreams.types';

@ObjectType({ description: 'One member of a pool: an upstream of the workspace or a platform model.' })
export class AiPoolMemberRef {
  @Field(() => ID, { nullable: true })
  upstreamId: string | null;

  @Field(() => ID, { nullable: true })
  platformModelId: string | null;

  @Field(() => Int, { nullable: true, description: "Overrides the upstream's weight in this pool." })
  weight: number | null;

  @Field(() => Int, { description: 'Order for the fallback strategy (lower first).' })
  priority: number;

  @Field(() => String)
  createdAt: string;
}

@ObjectType({ description: 'One member of a pool, with the upstream or platform model it names.' })
export class AiPoolMember extends AiPoolMemberRef {
  @Field(() => AiUpstream, { nullable: true })
  upstream: AiUpstream | null;

  @Field(() => AiPlatformModel, { nullable: true, description: 'The platform model (null when the operator no longer offers it).' })
  platformModel: AiPlatformModel | null;
}

/** The fields every pool shape has; the shapes differ in how much of each member they carry. */
@ObjectType()
abstract class AiPoolFields {
  @Field(() => ID)
  id: string;

  @Field(() => ID)
  workspaceId: string;

  @Field(() => String)
  name: string;

  @Field(() => String, { description: 'weighted | round-robin | least-latency | fallback' })
  strategy: string;

  @Field(() => Boolean, { description: 'Store request and response bodies of requests through this pool.' })
  storeConversations: boolean;

  @Field(() => Int, { description: 'Members tried per request before giving up (1–10).' })
  maxAttempts: number;

  @Field(() => String)
  createdAt: string;

  @Field(() => String)
  updatedAt: string;
}

@ObjectType({ description: 'A set of upstreams and platform models a gateway key sends to, with a strategy.' })
export class AiPool extends AiPoolFields {
  @Field(() => [AiPoolMember], { description: 'In fallback order (priority, then when added).' })
  members: AiPoolMember[];
}

@ObjectType({ description: 'A pool as lists show it: members by id (GET /pools/{id} has the upstreams too).' })
export class AiPoolSummary extends AiPoolFields {
  @Field(() => [AiPoolMemberRef], { description: 'In fallback order (priority, then when added).' })
  members: AiPoolMemberRef[];
}

@ObjectType()
export class AiPoolList extends PaginatedList(AiPoolSummary) {}

@InputType({ description: 'Exactly one of upstreamId and platformModelId.' })
export class AiPoolMemberInput {
  @Field(() => ID, { nullable: true })
  upstreamId?: string | null;

  @Field(() => ID, { nullable: true })
  platformModelId?: string | null;

  @Field(() => Int, { nullable: true, description: '1–1000; default the upstream\'s own weight.' })
  weight?: number | null;

  @Field(() => Int, { nullable: true, description: 'Default 0.' })
  priority?: number | null;
}

@ArgsType()
export class ListAiPoolsArgs extends PageArgs {
  @Field(() => ID, { nullable: true, description: "Default: X-Workspace-ID, else the caller's personal workspace." })
  workspaceId?: string | null;
}

@ArgsType()
export class AiPoolIdArgs {
  @Field(() => ID)
  id: string;
}

@ArgsType()
export class CreateAiPoolArgs {
  @Field(() => ID, { nullable: true, description: "Default: X-Workspace-ID, else the caller's personal workspace." })
  workspaceId?: string | null;

  @Field(() => String)
  name: string;

  @Field(() => String, { nullable: true, description: 'weighted (default) | round-robin | least-latency | fallback' })
  strategy?: string | null;

  @Field(() => Boolean, { nullable: true, description: 'Default false.' })
  storeConversations?: boolean | null;

  @Field(() => Int, { nullable: true, description: '1–10, default 3.' })
  maxAttempts?: number | null;

  @Field(() => [AiPoolMemberInput], { nullable: true })
  members?: AiPoolMemberInput[] | null;
}

@ArgsType()
export class AddAiPoolMemberArgs {
  @Field(() => ID, { description: 'The pool.' })
  id: string;

  @Field(() => ID, { nullable: true })
  upstreamId?: string | null;

  @Field(() => ID, { nullable: true })
  platformModelId?: string | null;

  @Field(() => Int, { nullable: true })
  weight?: number | null;

  @Field(() => Int, { nullable: true })
  priority?: number | null;
}

@ArgsType()
export class RemoveAiPoolMemberArgs {
  @Field(() => ID, { description: 'The pool.' })
  id: string;

  @Field(() => ID)
  upstreamId: string;
}

@ArgsType()
export class RemoveAiPoolPlatformMemberArgs {
  @Field(() => ID, { description: 'The pool.' })
  id: string;

  @Field(() => ID)
  platformModelId: string;
}

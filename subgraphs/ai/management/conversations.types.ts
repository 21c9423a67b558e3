import { ArgsType, Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { PageArgs, PaginatedList } from '../../../core/pagination';
import { JSONScalar } from '../../../core/scalars';

@ObjectType({ description: 'A stored request, without its bodies (lists).' })
export class AiConversationSummary {
  @Field(() => ID)
  requestId: string;

  @Field(() => ID)
  workspaceId: string;

  @Field(() => ID, { nullable: true })
  keyId: string | null;

  @Field(() => ID, { nullable: true })
  poolId: string | null;

  @Field(() => String)
  model: string;

  @Field(() => Int, { description: 'HTTP status answered to the client.' })
  status: number;

  @Field(() => String)
  createdAt: string;
}

@ObjectType({ description: 'A stored request and response, with the request\'s usage when it was recorded.' })
export class AiConversation extends AiConversationSummary {
  @Field(() => JSONScalar, { description: 'The request body as the client sent it.' })
  requestBody: unknown;

  @Field(() => JSONScalar, { nullable: true, description: 'The response as the client received it (a stream assembled into the non-stream shape).' })
  responseBody: unknown;

  @Field(() => ID, { nullable: true })
  upstreamId: string | null;

  @Field(() => Int, { nullable: true })
  inputTokens: number | null;

  @Field(() => Int, { nullable: true })
  outputTokens: number | null;

  @Field(() => Int, { nullable: true })
  cachedTokens: number | null;

  @Field(() => Float, { nullable: true })
  costUsd: number | null;

  @Field(() => Int, { nullable: true })
  latencyMs: number | null;

  @Field(() => Int, { nullable: true })
  ttfbMs: number | null;
}

@ObjectType()
export class AiConversationList extends PaginatedList(AiConversationSummary) {}

@ArgsType()
export class ListAiConversationsArgs extends PageArgs {
  @Field(() => ID, { nullable: true, description: "Default: X-Workspace-ID, else the caller's personal workspace." })
  workspaceId?: string | null;

  @Field(() => ID, { nullable: true, description: 'Only requests made with this gateway key.' })
  keyId?: string | null;
}

@ArgsType()
export class AiConversationArgs {
  @Field(() => ID)
  requestId: string;
}

import { ArgsType, Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { PageArgs, PaginatedList } from '../../../core/pagination';

@ObjectType({ description: 'A key clients put in their vendor SDK to reach a pool through the gateway. The key itself is shown once, at creation.' })
export class AiKey {
  @Field(() => ID)
  id: string;

  @Field(() => ID)
  workspaceId: string;

  @Field(() => String)
  name: string;

  @Field(() => ID)
  poolId: string;

  @Field(() => String, { description: 'The first 12 characters of the key, to recognise it.' })
  keyPrefix: string;

  @Field(() => Int, { nullable: true, description: 'null = no per-key limit.' })
  requestsPerMinute: number | null;

  @Field(() => Int, { nullable: true, description: 'null = no per-key limit.' })
  tokensPerMinute: number | null;

  @Field(() => Float, { nullable: true, description: 'USD per calendar month (UTC); null = unlimited.' })
  monthlyBudgetUsd: number | null;

  @Field(() => Boolean)
  storeConversations: boolean;

  @Field(() => String, { nullable: true })
  expiresAt: string | null;

  @Field(() => String, { nullable: true, description: 'Set when the key was revoked (DELETE); a revoked key is refused.' })
  revokedAt: string | null;

  @Field(() => String)
  createdAt: string;

  @Field(() => String, { nullable: true })
  lastUsedAt: string | null;
}

@ObjectType({ description: 'A new gateway key: the record and the key, which is never shown again.' })
export class AiCreatedKey extends AiKey {
  @Field(() => String, { description: 'The key (`wcp_ai_…`). Store it now: only its hash is kept.' })
  key: string;
}

@ObjectType()
export class AiKeyList extends PaginatedList(AiKey) {}

@ArgsType()
export class ListAiKeysArgs extends PageArgs {
  @Field(() => ID, { nullable: true, description: "Default: X-Workspace-ID, else the caller's personal workspace." })
  workspaceId?: string | null;
}

@ArgsType()
export class AiKeyIdArgs {
  @Field(() => ID)
  id: string;
}

@ArgsType()
export class CreateAiKeyArgs {
  @Field(() => ID, { nullable: true, description: "Default: the pool's workspace (it must match when given)." })
  workspaceId?: string | null;

  @Field(() => String)
  name: string;

  @Field(() => ID)
  poolId: string;

  @Field(() => Int, { nullable: true, description: '1–1000000; default none.' })
  requestsPerMinute?: number | null;

  @Field(() => Int, { nullable: true, description: '1–2000000000; default none.' })
  tokensPerMinute?: number | null;

  @Field(() => Float, { nullable: true, description: '0–1000000000 USD; default none.' })
  monthlyBudgetUsd?: number | null;

  @Field(() => Boolean, { nullable: true, description: 'Default false.' })
  storeConversations?: boolean | null;

  @Field(() => String, { nullable: true, description: 'ISO 8601, in the future.' })
  expiresAt?: string | null;
}

import { ArgsType, Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { JSONScalar } from '../../../core/scalars';

@ObjectType()
export class AiTokenUsage {
  @Field(() => Int, { description: 'The whole prompt, cached part included.' })
  inputTokens: number;

  @Field(() => Int)
  outputTokens: number;

  @Field(() => Int)
  cachedTokens: number;
}

@ObjectType({ description: 'The answer of a playground chat.' })
export class AiPlaygroundChatResult {
  @Field(() => ID, { description: 'The request id its usage row carries.' })
  requestId: string;

  @Field(() => String, { description: 'The model that answered, as the upstream named it.' })
  model: string;

  @Field(() => String, { description: 'The text parts of the answer, joined.' })
  text: string;

  @Field(() => String, { description: 'stop | length | tool_calls | content_filter | error' })
  finishReason: string;

  @Field(() => AiTokenUsage)
  usage: AiTokenUsage;

  @Field(() => ID, { nullable: true, description: 'The upstream that answered (null: a platform model).' })
  upstreamId: string | null;

  @Field(() => Int)
  latencyMs: number;
}

@ObjectType({ description: 'The answer of a playground embeddings request.' })
export class AiPlaygroundEmbeddingsResult {
  @Field(() => ID)
  requestId: string;

  @Field(() => String)
  model: string;

  @Field(() => [[Float]], { description: 'One vector per input, in order.' })
  vectors: number[][];

  @Field(() => AiTokenUsage)
  usage: AiTokenUsage;

  @Field(() => ID, { nullable: true })
  upstreamId: string | null;

  @Field(() => Int)
  latencyMs: number;
}

@ArgsType()
class PlaygroundTargetArgs {
  @Field(() => ID, { nullable: true, description: "Default: the pool's or upstream's workspace (it must match when given)." })
  workspaceId?: string | null;

  @Field(() => ID, { nullable: true, description: 'Send through this pool; exactly one of poolId and upstreamId.' })
  poolId?: string | null;

  @Field(() => ID, { nullable: true, description: 'Send straight to this upstream.' })
  upstreamId?: string | null;

  @Field(() => String)
  model: string;
}

@ArgsType()
export class AiPlaygroundChatArgs extends PlaygroundTargetArgs {
  @Field(() => JSONScalar, { description: 'OpenAI-style messages: [{ role: system | user | assistant, content: string | [{ type: "text", text }] }].' })
  messages: unknown;

  @Field(() => String, { nullable: true, description: 'System prompt (joined before any system messages).' })
  system?: string | null;

  @Field(() => Int, { nullable: true, description: '1–200000.' })
  maxTokens?: number | null;

  @Field(() => Float, { nullable: true, description: '0–2.' })
  temperature?: number | null;
}

@ArgsType()
export class AiPlaygroundEmbeddingsArgs extends PlaygroundTargetArgs {
  @Field(() => JSONScalar, { description: 'A string or an array of 1–256 strings.' })
  input: unknown;
}

import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType({ description: 'A vendor protocol the gateway speaks, and how a client SDK reaches it.' })
export class AiProvider {
  @Field(() => ID, { description: 'vendor-a | vendor-b | vendor-c' })
  id: string;

  @Field(() => String, { description: 'openai | anthropic | gemini' })
  api: string;

  @Field(() => String)
  name: string;

  @Field(() => String, { description: "The SDK's base URL path on this platform (append it to the public URL)." })
  basePath: string;

  @Field(() => String, { description: 'Where the SDK puts the gateway key.' })
  authHeader: string;

  @Field(() => String, { description: 'The npm package of the official SDK.' })
  sdk: string;

  @Field(() => Boolean, { description: 'Whether upstream credentials can be obtained by OAuth on this platform.' })
  oauth: boolean;
}

@ObjectType({ description: 'A model the operator offers every workspace (its credential is the operator\'s).' })
export class AiPlatformModel {
  @Field(() => ID)
  id: string;

  @Field(() => String, { description: 'The model name clients send.' })
  model: string;

  @Field(() => String)
  displayName: string;

  @Field(() => String, { description: 'vendor-a | vendor-b | vendor-c' })
  provider: string;
}

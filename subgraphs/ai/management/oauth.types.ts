import { ArgsType, Field, ID, Int, ObjectType } from 'type-graphql';

@ObjectType({ description: 'Where to send the browser to authorize an upstream credential, and the state to come back with.' })
export class AiOAuthStart {
  @Field(() => String)
  authorizationUrl: string;

  @Field(() => String, { description: 'Single use; completeAiOAuth takes it with the code.' })
  state: string;

  @Field(() => Int, { description: 'Seconds the state stays valid.' })
  expiresIn: number;
}

@ArgsType()
export class StartAiOAuthArgs {
  @Field(() => String, { description: 'vendor-a | vendor-b | vendor-c (fixed by the REST path).' })
  provider: string;

  @Field(() => ID, { nullable: true, description: "Default: X-Workspace-ID, else the caller's personal workspace." })
  workspaceId?: string | null;

  @Field(() => String, { description: 'Name of the upstream the completion creates.' })
  name: string;

  @Field(() => String, { description: 'Base URL of the upstream the completion creates.' })
  baseUrl: string;

  @Field(() => String, { nullable: true, description: "Default: the provider's configured redirect URI." })
  redirectUri?: string | null;
}

@ArgsType()
export class CompleteAiOAuthArgs {
  @Field(() => String)
  provider: string;

  @Field(() => String)
  code: string;

  @Field(() => String)
  state: string;
}

@ArgsType()
export class RefreshAiOAuthArgs {
  @Field(() => String)
  provider: string;

  @Field(() => ID)
  upstreamId: string;
}

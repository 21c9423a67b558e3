import { ArgsType, Field, ID, Int, ObjectType } from 'type-graphql';
import { PageArgs, PaginatedList } from '../../../core/pagination';
import { JSONObjectScalar } from '../../../core/scalars';

@ObjectType({ description: "A workspace's model endpoint: a vendor API at a base URL with a credential. The credential is never returned." })
export class AiUpstream {
  @Field(() => ID)
  id: string;

  @Field(() => ID)
  workspaceId: string;

  @Field(() => String)
  name: string;

  @Field(() => String, { description: 'vendor-a (OpenAI API) | vendor-b (Anthropic) | vendor-c (Gemini).' })
  provider: string;

  @Field(() => String, { description: 'vendor-a: …/v1; vendor-b and vendor-c: the host root.' })
  baseUrl: string;

  @Field(() => String, { description: 'api_key | oauth' })
  authKind: string;

  @Field(() => String, { description: 'The last four characters of the credential, to recognise it ("…abcd").' })
  credentialHint: string;

  @Field(() => String, { nullable: true, description: 'ISO 8601; when an OAuth access token expires (null for API keys).' })
  credentialExpiresAt: string | null;

  @Field(() => [String], { description: 'Models it serves ([] = any the client names).' })
  models: string[];

  @Field(() => JSONObjectScalar, { description: 'Client model name → the upstream\'s model name.' })
  modelMap: Record<string, string>;

  @Field(() => Int, { description: 'Share of traffic in a weighted pool (1–1000).' })
  weight: number;

  @Field(() => Int)
  timeoutMs: number;

  @Field(() => Boolean)
  enabled: boolean;

  @Field(() => String)
  createdAt: string;

  @Field(() => String)
  updatedAt: string;
}

@ObjectType()
export class AiUpstreamList extends PaginatedList(AiUpstream) {}

@ObjectType({ description: 'A record removed (or, for gateway keys, revoked).' })
export class AiDeletedRecord {
  @Field(() => ID)
  id: string;

  @Field(() => Boolean)
  deleted: boolean;
}

@ObjectType({ description: "A live check of an upstream: its models list fetched with the stored credential." })
export class AiUpstreamTestResult {
  @Field(() => Boolean)
  ok: boolean;

  @Field(() => Int, { nullable: true, description: 'HTTP status the upstream answered (null when it did not answer).' })
  status: number | null;

  @Field(() => Int)
  latencyMs: number;

  @Field(() => String, { nullable: true })
  error: string | null;

  @Field(() => [String], { description: 'Model ids the upstream listed.' })
  models: string[];
}

@ArgsType()
export class ListAiUpstreamsArgs extends PageArgs {
  @Field(() => ID, { nullable: true, description: "Default: X-Workspace-ID, else the caller's personal workspace." })
  workspaceId?: string | null;
}

@ArgsType()
export class AiUpstreamIdArgs {
  @Field(() => ID)
  id: string;
}

@ArgsType()
export class CreateAiUpstreamArgs {
  @Field(() => ID, { nullable: true, description: "Default: X-Workspace-ID, else the caller's personal workspace." })
  workspaceId?: string | null;

  @Field(() => String, { description: '1–128 characters.' })
  name: string;

  @Field(() => String, { description: 'vendor-a | vendor-b | vendor-c' })
  provider: string;

  @Field(() => String, { description: 'http(s) URL without credentials (vendor-a: …/v1).' })
  baseUrl: string;

  @Field(() => String, { description: 'The vendor API key (1–4096 characters); stored encrypted, never returned.' })
  apiKey: string;

  @Field(() => [String], { nullable: true, description: 'At most 200 model names; default [] (any).' })
  models?: string[] | null;

  @Field(() => JSONObjectScalar, { nullable: true })
  modelMap?: Record<string, unknown> | null;

  @Field(() => Int, { nullable: true, description: '1–1000, default 1.' })
  weight?: number | null;

  @Field(() => Int, { nullable: true, description: '1000–600000, default 60000.' })
  timeoutMs?: number | null;

  @Field(() => Boolean, { nullable: true, description: 'Default true.' })
  enabled?: boolean | null;
}

@ArgsType()
export class UpdateAiUpstreamArgs {
  @Field(() => ID)
  id: string;

  @Field(() => String, { nullable: true })
  name?: string | null;

  @Field(() => String, { nullable: true })
  baseUrl?: string | null;

  @Field(() => String, { nullable: true, description: 'A new API key (an OAuth upstream becomes an API-key one).' })
  apiKey?: string | null;

  @Field(() => [String], { nullable: true, description: 'Replaces the list.' })
  models?: string[] | null;

  @Field(() => JSONObjectScalar, { nullable: true, description: 'Replaces the map.' })
  modelMap?: Record<string, unknown> | null;

  @Field(() => Int, { nullable: true })
  weight?: number | null;

  @Field(() => Int, { nullable: true })
  timeoutMs?: number | null;

  @Field(() => Boolean, { nullable: true })
  enabled?: boolean | null;
}

@ArgsType()
export class TestAiUpstreamArgs {
  @Field(() => ID)
  id: string;

  @Field(() => String, { nullable: true, description: 'Also check that the upstream lists this model.' })
  model?: string | null;
}

@ArgsType()
export class AiUpstreamUsageArgs {
  @Field(() => ID)
  id: string;

  @Field(() => String, { nullable: true, description: 'ISO 8601; default 30 days before `to`.' })
  from?: string | null;

  @Field(() => String, { nullable: true, description: 'ISO 8601; default now.' })
  to?: string | null;
}

import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType({ description: 'An API key of the caller. The key itself is shown only when created.' })
export class ApiKey {
  @Field(() => ID)
  id: string;

  @Field(() => String)
  name: string;

  @Field(() => String, { description: 'The first 12 characters of the key, to tell keys apart.' })
  prefix: string;

  @Field(() => String, { description: 'ISO 8601.' })
  createdAt: string;

  @Field(() => String, { nullable: true, description: 'ISO 8601; null for a key that does not expire.' })
  expiresAt: string | null;

  @Field(() => String, { nullable: true, description: 'ISO 8601, to the minute.' })
  lastUsedAt: string | null;

  @Field(() => String, { nullable: true, description: 'ISO 8601; set once the key is revoked.' })
  revokedAt: string | null;
}

@ObjectType({ description: 'A new API key, with the key shown this once.' })
export class CreatedApiKey extends ApiKey {
  @Field(() => String, { description: 'Send as X-API-Key. Store it now: it cannot be shown again.' })
  key: string;
}

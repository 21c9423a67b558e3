import { ArgsType, Field, ID, ObjectType } from 'type-graphql';
import { PageArgs, PaginatedList } from '../../../core/pagination';
import { User, type UserReference } from '../user.types';

/** A secret's metadata. The value is write-only: no field returns it. */
@ObjectType({ description: 'A workspace secret. Its value is never returned.' })
export class Secret {
  @Field(() => ID)
  id: string;

  @Field(() => String, { description: 'Name of the secret, usable as an environment variable name.' })
  key: string;

  @Field(() => ID)
  workspaceId: string;

  @Field(() => String, { description: 'ISO 8601.' })
  createdAt: string;

  @Field(() => String, { description: 'ISO 8601; changes when the key or the value changes.' })
  updatedAt: string;

  @Field(() => User, { description: 'The user who created the secret.' })
  createdBy: UserReference;
}

@ObjectType({ description: 'A page of secrets.' })
export class SecretList extends PaginatedList(Secret) {}

@ObjectType({ description: 'What deleting a secret answers.' })
export class DeletedSecret {
  @Field(() => ID)
  id: string;

  @Field(() => Boolean)
  deleted: boolean;
}

@ArgsType()
export class ListSecretsArgs extends PageArgs {
  @Field(() => ID)
  workspaceId: string;
}

@ArgsType()
export class SecretArgs {
  @Field(() => ID)
  workspaceId: string;

  @Field(() => ID)
  secretId: string;
}

@ArgsType()
export class CreateSecretArgs {
  @Field(() => ID)
  workspaceId: string;

  @Field(() => String)
  key: string;

  @Field(() => String, { description: 'Stored encrypted; never returned.' })
  value: string;
}

@ArgsType()
export class UpdateSecretArgs {
  @Field(() => ID)
  workspaceId: string;

  @Field(() => ID)
  secretId: string;

  @Field(() => String, { nullable: true, description: 'New key; give key, value or both.' })
  key?: string | null;

  @Field(() => String, { nullable: true, description: 'New value, stored encrypted; never returned.' })
  value?: string | null;
}

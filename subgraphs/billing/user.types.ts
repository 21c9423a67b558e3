import { Directive, Field, ID, ObjectType } from 'type-graphql';

/**
 * The identity subgraph's User, as a reference only: billing returns `{ __typename, id }` and
 * the gateway fetches the fields from identity in one batched `_entities` call.
 */
@Directive('@key(fields: "id", resolvable: false)')
@ObjectType()
export class User {
  @Field(() => ID)
  id: string;
}

export interface UserReference {
  __typename: 'User';
  id: string;
}

export function userReference(id: string): UserReference {
  return { __typename: 'User', id };
}

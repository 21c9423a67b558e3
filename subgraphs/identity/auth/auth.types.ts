import { Field, Int, ObjectType } from 'type-graphql';
import { User } from '../users/user.types';

@ObjectType({ description: 'Tokens of a session: a short-lived access JWT and a rotating refresh token.' })
export class AuthPayload {
  @Field(() => String)
  accessToken: string;

  @Field(() => String, { description: 'Opaque; single use: each refresh answers a new one.' })
  refreshToken: string;

  @Field(() => String, { description: 'Always "Bearer".' })
  tokenType: string;

  @Field(() => Int, { description: 'Lifetime of the access token in seconds.' })
  expiresIn: number;

  @Field(() => User)
  user: User;
}

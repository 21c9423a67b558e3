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

@ObjectType({
  description:
    'What login answers. Without a second factor: the session tokens and the user. For a user with TOTP on: no tokens, no user, but mfaRequired and a short-lived mfaChallenge to send with a code to POST /auth/totp/verify (GraphQL: verifyTotp).',
})
export class LoginResult {
  @Field(() => String, { nullable: true })
  accessToken: string | null;

  @Field(() => String, { nullable: true, description: 'Opaque; single use: each refresh answers a new one.' })
  refreshToken: string | null;

  @Field(() => String, { nullable: true, description: '"Bearer" when tokens are answered.' })
  tokenType: string | null;

  @Field(() => Int, { nullable: true, description: 'Lifetime of the access token in seconds.' })
  expiresIn: number | null;

  @Field(() => User, { nullable: true })
  user: User | null;

  @Field(() => Boolean, { description: 'True when a second factor is needed before tokens are issued.' })
  mfaRequired: boolean;

  @Field(() => String, { nullable: true, description: 'Single use; exchanged with a TOTP or recovery code for the tokens.' })
  mfaChallenge: string | null;

  @Field(() => Int, { nullable: true, description: 'Seconds the challenge stays valid.' })
  mfaChallengeExpiresIn: number | null;
}

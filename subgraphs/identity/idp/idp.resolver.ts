import { Arg, Ctx, Mutation, Resolver } from 'type-graphql';
import { LoginResult } from '../auth/auth.types';
import type { IdentityContext } from '../identity.context';
import type { IdpService } from './idp.service';

@Resolver()
export class IdpResolver {
  constructor(private readonly service: IdpService) {}

  @Mutation(() => LoginResult, {
    description:
      'Public. Trades the one-time code a sign-in through an identity provider (GET /v1/auth/idp-a, /v1/auth/idp-b) left in the console URL fragment (#handoff=<code>) for what login answers: tokens, or an MFA challenge. Single use, valid for a minute.',
  })
  exchangeLoginHandoff(@Arg('code', () => String) code: string, @Ctx() ctx: IdentityContext): Promise<LoginResult> {
    return this.service.exchangeHandoff(ctx, { code });
  }
}

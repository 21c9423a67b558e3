import { Arg, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { AuthPayload } from '../auth/auth.types';
import type { IdentityContext } from '../identity.context';
import type { TotpService } from './totp.service';
import { TotpRecoveryCodes, TotpSetup, TotpStatus } from './totp.types';

@Resolver()
export class TotpResolver {
  constructor(private readonly service: TotpService) {}

  @Query(() => TotpStatus, { description: "The caller's TOTP second factor." })
  totpStatus(@Ctx() ctx: IdentityContext): Promise<TotpStatus> {
    return this.service.status(ctx);
  }

  @Mutation(() => TotpSetup, { description: 'Starts TOTP enrolment (signed-in session only, not an API key); confirm it with verifyTotpSetup.' })
  setupTotp(@Ctx() ctx: IdentityContext): Promise<TotpSetup> {
    return this.service.setup(ctx);
  }

  @Mutation(() => TotpRecoveryCodes, { description: 'Confirms the pending setup with a code from the app; TOTP is on from now and recovery codes are shown once.' })
  verifyTotpSetup(@Arg('code', () => String) code: string, @Ctx() ctx: IdentityContext): Promise<TotpRecoveryCodes> {
    return this.service.verifySetup(ctx, { code });
  }

  @Mutation(() => AuthPayload, { description: 'Public. Trades the mfaChallenge of login and one of a TOTP code or a recovery code for the session tokens.' })
  verifyTotp(
    @Arg('challenge', () => String) challenge: string,
    @Arg('code', () => String, { nullable: true }) code: string | null | undefined,
    @Arg('recoveryCode', () => String, { nullable: true }) recoveryCode: string | null | undefined,
    @Ctx() ctx: IdentityContext,
  ): Promise<AuthPayload> {
    return this.service.verify(ctx, { challenge, code, recoveryCode });
  }

  @Mutation(() => TotpStatus, { description: 'Turns TOTP off given a current code or a recovery code (signed-in session only).' })
  disableTotp(
    @Arg('code', () => String, { nullable: true }) code: string | null | undefined,
    @Arg('recoveryCode', () => String, { nullable: true }) recoveryCode: string | null | undefined,
    @Ctx() ctx: IdentityContext,
  ): Promise<TotpStatus> {
    return this.service.disable(ctx, { code, recoveryCode });
  }
}

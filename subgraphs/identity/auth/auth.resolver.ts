import { Arg, Ctx, Mutation, Resolver } from 'type-graphql';
import type { IdentityContext } from '../identity.context';
import type { AuthService } from './auth.service';
import { AuthPayload, LoginResult } from './auth.types';

@Resolver()
export class AuthResolver {
  constructor(private readonly service: AuthService) {}

  @Mutation(() => LoginResult, { description: 'Public. Signs in with a username and password; a user with TOTP on gets an MFA challenge instead of tokens.' })
  login(@Arg('username', () => String) username: string, @Arg('password', () => String) password: string, @Ctx() ctx: IdentityContext): Promise<LoginResult> {
    return this.service.login(ctx, { username, password });
  }

  @Mutation(() => AuthPayload, { description: 'Public. Trades a refresh token for new tokens; the old one is spent.' })
  refresh(@Arg('refreshToken', () => String) refreshToken: string, @Ctx() ctx: IdentityContext): Promise<AuthPayload> {
    return this.service.refresh(ctx, { refreshToken });
  }

  @Mutation(() => Boolean, { description: "Public. Revokes the refresh token's session (its whole family)." })
  logout(@Arg('refreshToken', () => String) refreshToken: string, @Ctx() ctx: IdentityContext): Promise<boolean> {
    return this.service.logout(ctx, { refreshToken });
  }
}

import { Field, Int, ObjectType } from 'type-graphql';

@ObjectType({ description: 'A TOTP setup awaiting its first code (verifyTotpSetup). The secret is shown only in this answer.' })
export class TotpSetup {
  @Field(() => String, { description: 'The secret, base32, for typing into an authenticator app.' })
  secret: string;

  @Field(() => String, { description: 'otpauth://totp/… URI of the secret (SHA1, 6 digits, 30 s).' })
  otpauthUrl: string;

  @Field(() => String, { description: 'The otpauthUrl as a QR code: data:image/png;base64,…' })
  qrCodeDataUrl: string;

  @Field(() => Int, { description: 'Seconds left to confirm the setup with a code.' })
  expiresIn: number;
}

@ObjectType({ description: 'A confirmed TOTP setup, with recovery codes shown this once.' })
export class TotpRecoveryCodes {
  @Field(() => Boolean)
  enabled: boolean;

  @Field(() => [String], { description: 'Each signs in once in place of a code. Store them now: they cannot be shown again.' })
  recoveryCodes: string[];
}

@ObjectType({ description: "The caller's TOTP second factor." })
export class TotpStatus {
  @Field(() => Boolean)
  enabled: boolean;

  @Field(() => String, { nullable: true, description: 'ISO 8601; null while TOTP is off.' })
  enabledAt: string | null;

  @Field(() => Int, { description: 'Recovery codes not used yet.' })
  recoveryCodesRemaining: number;
}

import { HOTP, Secret, TOTP } from 'otpauth';
import { safeEqual } from '../../../core/crypto';

/** RFC 6238 parameters every authenticator app understands. */
export const TOTP_PARAMS = { algorithm: 'SHA1', digits: 6, period: 30 } as const;

/** 20 bytes, the size of the HMAC-SHA1 key RFC 4226 recommends. */
const SECRET_BYTES = 20;
const CODE_FORMAT = /^\d{6}$/;

/** A new random 160-bit secret, base32 (the form authenticator apps take). */
export function newTotpSecret(): string {
  return new Secret({ size: SECRET_BYTES }).base32;
}

/** The `otpauth://totp/<issuer>:<username>?…` URI that authenticator apps scan. */
export function otpauthUrl(issuer: string, username: string, secretBase32: string): string {
  return new TOTP({ issuer, label: username, secret: Secret.fromBase32(secretBase32), ...TOTP_PARAMS }).toString();
}

/** The time step (RFC 6238 counter T) a moment falls in. */
export function stepAt(epochMs: number): number {
  return Math.floor(epochMs / 1000 / TOTP_PARAMS.period);
}

/** The code of one time step. */
export function codeForStep(secretBase32: string, step: number): string {
  return HOTP.generate({ secret: Secret.fromBase32(secretBase32), counter: step, algorithm: TOTP_PARAMS.algorithm, digits: TOTP_PARAMS.digits });
}

export function isTotpCodeFormat(code: string): boolean {
  return CODE_FORMAT.test(code);
}

/**
 * The step a code belongs to, or null. Only the current step and the one before it count:
 * one step back tolerates a code typed just as it rolled over, while future steps and older
 * ones would only widen what a guesser or a shoulder-surfer can use.
 */
export function matchingStep(secretBase32: string, code: string, epochMs: number): number | null {
  if (!isTotpCodeFormat(code)) return null;
  const current = stepAt(epochMs);
  for (const step of [current, current - 1]) {
    if (safeEqual(codeForStep(secretBase32, step), code)) return step;
  }
  return null;
}

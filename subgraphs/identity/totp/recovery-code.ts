import { randomBytes } from 'node:crypto';
import { sha256 } from '../../../core/crypto';

/** How many recovery codes an enrolment gets. */
export const RECOVERY_CODE_COUNT = 10;

/** RFC 4648 base32, lower case: no 0/1/8/9, so no O/0 or l/1 confusion when typed. */
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
/** 10 characters of 5 bits: 50 bits of randomness per code. */
const CODE_LENGTH = 10;
const NORMALISED = /^[a-z2-7]{10}$/;

/** `xxxxx-xxxxx` codes, each from its own random bytes (32 divides 256, so no modulo bias). */
export function newRecoveryCodes(count = RECOVERY_CODE_COUNT): string[] {
  return Array.from({ length: count }, () => {
    const chars = [...randomBytes(CODE_LENGTH)].map((byte) => ALPHABET[byte % ALPHABET.length]).join('');
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
}

/** Whether what a user typed can be a recovery code (any case, hyphens and spaces ignored). */
export function isRecoveryCodeFormat(input: string): boolean {
  return NORMALISED.test(normalise(input));
}

/**
 * What is stored of a code, from any typed form of it. A fast hash is enough: 50 random bits
 * cannot be found by guessing online (attempts are throttled), and the user id in the input
 * keeps one precomputed table from serving every user's codes at once offline.
 */
export function hashRecoveryCode(userId: string, code: string): string {
  return sha256(`${userId}:${normalise(code)}`);
}

function normalise(input: string): string {
  return input.replace(/[\s-]/g, '').toLowerCase();
}

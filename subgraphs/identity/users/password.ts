import * as argon2 from 'argon2';

/**
 * argon2id at the OWASP minimum (19 MiB, 2 passes, 1 lane): about 30-50 ms per hash on a
 * server core, slow enough to make offline guessing expensive, cheap enough for logins.
 */
export const PASSWORD_HASH_PARAMS = {
  type: argon2.argon2id,
  memoryCost: 19456,
  timeCost: 2,
  parallelism: 1,
} as const;

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, PASSWORD_HASH_PARAMS);
}

/** False for a wrong password and for a hash that does not parse. */
export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await argon2.verify(hash, password);
  } catch {
    return false;
  }
}

let dummyHash: Promise<string> | undefined;

/**
 * Spends the time a real verification would, for a username that does not exist, so the
 * response time does not tell an attacker which usernames are real.
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  dummyHash ??= hashPassword('dummy-password-for-unknown-users');
  await verifyPassword(await dummyHash, password);
  return false;
}

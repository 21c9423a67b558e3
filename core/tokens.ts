import { createSecretKey, type KeyObject } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { UnauthenticatedError } from './errors';

const ISSUER = 'platform';
const AUDIENCE = 'platform-api';

/** Claims of an access token: who (`sub`) and nothing else; roles are looked up per request. */
export interface AccessClaims {
  sub: string;
  /** Expiry, seconds since the epoch (set on verified tokens). */
  exp?: number;
  /** Refresh-token family the token was issued from, so a revoked family can be told apart. */
  fam?: string;
}

// A KeyObject made once: given raw bytes, jose would build one on every sign and verify.
const keyCache = new Map<string, KeyObject>();
function keyOf(secret: string): KeyObject {
  let key = keyCache.get(secret);
  if (!key) keyCache.set(secret, (key = createSecretKey(Buffer.from(secret, 'utf8'))));
  return key;
}

/** A short-lived HS256 access JWT. */
export function signAccessToken(secret: string, claims: AccessClaims, ttlSeconds: number): Promise<string> {
  return new SignJWT({ ...(claims.fam ? { fam: claims.fam } : {}), typ: 'access' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.sub)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(`${ttlSeconds}s`)
    .sign(keyOf(secret));
}

/**
 * Verifies an access JWT: HS256 only (so `alg: none` and key-confusion tokens fail), our issuer
 * and audience, not expired, typ access. Throws UnauthenticatedError with a reason.
 */
export async function verifyAccessToken(secret: string, token: string): Promise<AccessClaims> {
  try {
    const { payload } = await jwtVerify(token, keyOf(secret), { algorithms: ['HS256'], issuer: ISSUER, audience: AUDIENCE });
    if (payload.typ !== 'access' || typeof payload.sub !== 'string') throw new UnauthenticatedError('Not an access token');
    return { sub: payload.sub, exp: payload.exp, fam: typeof payload.fam === 'string' ? payload.fam : undefined };
  } catch (err) {
    if (err instanceof UnauthenticatedError) throw err;
    if (err instanceof joseErrors.JWTExpired) throw new UnauthenticatedError('Access token expired');
    throw new UnauthenticatedError('Invalid access token');
  }
}

/** API keys carry a typed prefix so they are recognisable in logs and by secret scanners. */
export const API_KEY_PREFIX = 'wcp_key_';

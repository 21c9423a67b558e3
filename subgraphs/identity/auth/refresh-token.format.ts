import { hasPrefix, ID_PREFIX } from '../../../core/ids';
import { randomToken } from '../../../core/crypto';

/** `rt_<id>.<secret>`: the id finds the row, the secret (stored as sha256) proves possession. */
export interface ParsedRefreshToken {
  id: string;
  secret: string;
}

export function newRefreshSecret(): string {
  return randomToken(32);
}

export function formatRefreshToken(id: string, secret: string): string {
  return `${id}.${secret}`;
}

/** Null for anything that is not shaped like one of ours. */
export function parseRefreshToken(token: unknown): ParsedRefreshToken | null {
  if (typeof token !== 'string' || token.length > 256) return null;
  const dot = token.indexOf('.');
  if (dot <= 0) return null;
  const id = token.slice(0, dot);
  const secret = token.slice(dot + 1);
  if (!hasPrefix(id, ID_PREFIX.refreshToken) || !/^[A-Za-z0-9_-]{16,128}$/.test(secret)) return null;
  return { id, secret };
}

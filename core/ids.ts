import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/** Prefixes of record ids, one per record kind, so an id says what it names. */
export const ID_PREFIX = {
  user: 'usr',
  workspace: 'ws',
  workspaceMember: 'wsm',
  apiKey: 'key',
  refreshToken: 'rt',
  secret: 'sec',
  oauthConnection: 'oac',
  sandbox: 'sbx',
  snapshot: 'snp',
  upstream: 'ups',
  pool: 'pool',
  gatewayKey: 'gk',
  workflow: 'wf',
  installation: 'ins',
  funnel: 'fnl',
  execution: 'exe',
} as const;

/**
 * A prefixed random id such as `usr_3k9x…`: 20 characters of base36 (about 103 bits).
 * Time order is not encoded; records sort by createdAt.
 */
export function newId(prefix: string, length = 20): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[bytes[i] % 36];
  return `${prefix}_${out}`;
}

/** True when `id` looks like an id of the given prefix; used to answer 404 early. */
export function hasPrefix(id: string, prefix: string): boolean {
  return id.startsWith(`${prefix}_`) && id.length <= prefix.length + 64;
}

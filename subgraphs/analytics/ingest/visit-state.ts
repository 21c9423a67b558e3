import { createHash, randomFillSync } from 'node:crypto';
import type { Redis } from '../../../core/redis';

/**
 * Per-visitor state in Redis, read and written in one round trip per request (one script call):
 * - `<prefix>:an:sess:<installation>:<visitor>` → `<sessionId>:<startedAtMs>`, 30 minutes after the
 *   visitor's latest request (a visit ends after 30 minutes without events);
 * - `<prefix>:an:uid:<installation>:<visitor>` → the user id of the visitor's latest identify, 24 h;
 * - `<prefix>:an:dd:<installation>:<eventId>` → seen, 24 h: a client event id seen again is a duplicate.
 */
export interface VisitState {
  sessionId: string;
  /** The identified user of the visitor, if any. */
  userId: string | null;
  /** Per event id asked about: true when first seen (keep), false for a duplicate. */
  fresh: boolean[];
}

export interface VisitStore {
  /**
   * The visitor's session (its current one, or a new one) and user, and which of `eventIds` are
   * new. `identifiedAs` maps the visitor to a user (identify) instead of reading the mapping.
   */
  resolve(installationId: string, visitorId: string, eventIds: readonly string[], identifiedAs: string | null, now: number): Promise<VisitState>;
}

export const SESSION_IDLE_MS = 30 * 60_000;
const USER_TTL_S = 24 * 3600;
const DEDUPE_TTL_S = 24 * 3600;

/**
 * KEYS: session, user mapping, then one dedupe key per client event id. ARGV: the candidate
 * session value, the session idle ms, the identified user ('' to read the mapping instead), the
 * mapping's TTL s, the dedupe TTL s. Returns [current session value or nil (the candidate was
 * set), user id or nil, one '1' (first seen) or '0' (duplicate) per dedupe key].
 * The same commands as a pipeline of SET NX per event id, without the client-side cost of one
 * command per id (about 4× less CPU per request of 50 events).
 */
const RESOLVE_VISIT_LUA = `
local session = redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX', 'GET')
redis.call('PEXPIRE', KEYS[1], ARGV[2])
local user
if ARGV[3] == '' then
  user = redis.call('GET', KEYS[2])
else
  redis.call('SET', KEYS[2], ARGV[3], 'EX', ARGV[4])
  user = ARGV[3]
end
local fresh = {}
for i = 3, #KEYS do
  fresh[i - 2] = redis.call('SET', KEYS[i], '1', 'EX', ARGV[5], 'NX') and '1' or '0'
end
return {session, user, table.concat(fresh)}
`;
const RESOLVE_VISIT_SHA = createHash('sha1').update(RESOLVE_VISIT_LUA).digest('hex');

export function createVisitStore(redis: Redis, redisPrefix: string): VisitStore {
  const base = `${redisPrefix}:an:`;

  /** EVALSHA, loading the script once per Redis (after a restart or a SCRIPT FLUSH too). */
  const run = async (numKeys: number, args: Array<string | number>): Promise<unknown> => {
    try {
      return await redis.evalsha(RESOLVE_VISIT_SHA, numKeys, ...args);
    } catch (err) {
      if (!String((err as Error).message).startsWith('NOSCRIPT')) throw err;
      return redis.eval(RESOLVE_VISIT_LUA, numKeys, ...args);
    }
  };

  return {
    async resolve(installationId, visitorId, eventIds, identifiedAs, now) {
      const visitor = `${installationId}:${visitorId}`;
      const candidate = newSessionId();
      const args: Array<string | number> = [`${base}sess:${visitor}`, `${base}uid:${visitor}`];
      for (const id of eventIds) args.push(`${base}dd:${installationId}:${id}`);
      args.push(`${candidate}:${now}`, SESSION_IDLE_MS, identifiedAs ?? '', USER_TTL_S, DEDUPE_TTL_S);
      const [current, userId, flags] = (await run(2 + eventIds.length, args)) as [string | null, string | null, string];
      const fresh: boolean[] = new Array(eventIds.length);
      for (let i = 0; i < eventIds.length; i++) fresh[i] = flags.charCodeAt(i) === 49; /* '1' */
      return { sessionId: current ? current.slice(0, current.indexOf(':')) : candidate, userId: userId || null, fresh };
    },
  };
}

/** Random bytes drawn 4 KiB at a time: one draw serves 512 session ids. */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

/** A random positive 63-bit integer, in decimal. */
export function newSessionId(): string {
  if (poolOffset + 8 > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const value = pool.readBigUInt64BE(poolOffset) & 0x7fff_ffff_ffff_ffffn;
  poolOffset += 8;
  return value === 0n ? '1' : value.toString();
}

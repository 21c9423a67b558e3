import { Redis, type RedisOptions } from 'ioredis';

/**
 * A Redis connection. `maxRetriesPerRequest: null` is what BullMQ requires of the connections
 * it blocks on; the rest of the platform is fine with it too (commands wait for a reconnect
 * instead of failing at once).
 */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true, lazyConnect: false, ...options });
}

export type { Redis };

import { sha256 } from './crypto';
import type { Redis } from './redis';

/**
 * Short-lived values in Redis keyed by a random secret the client holds (an OAuth state, an MFA
 * challenge, a sign-in hand-off code): the key is `<prefix>:<kind>:<sha256(secret)>`, so a Redis
 * dump hands out nothing usable, and Redis expiry does the cleanup. `take` is GETDEL: atomic, so
 * a value is handed out at most once even when the secret is replayed concurrently.
 */
export class OneTimeValues {
  constructor(
    private readonly redis: Redis,
    private readonly redisPrefix: string,
    private readonly kind: string,
  ) {}

  async put(secret: string, value: string, ttlSeconds: number): Promise<void> {
    await this.redis.set(this.key(secret), value, 'EX', ttlSeconds);
  }

  /** The value, left in place; null when unknown or expired. */
  peek(secret: string): Promise<string | null> {
    return this.redis.get(this.key(secret));
  }

  /** The value, removed; null when unknown, expired or already taken. */
  take(secret: string): Promise<string | null> {
    return this.redis.getdel(this.key(secret));
  }

  private key(secret: string): string {
    return `${this.redisPrefix}:${this.kind}:${sha256(secret)}`;
  }
}

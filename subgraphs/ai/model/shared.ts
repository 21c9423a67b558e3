import { decrypt, encrypt } from '../../../core/crypto';

/**
 * What the management API and the proxy agree on: how upstream credentials are sealed, how
 * gateway keys look, and the Redis keys of live usage and key limits.
 */

/** Upstream credentials (API key or OAuth access token), bound to the row by AAD. */
export function sealCredential(encryptionKey: Buffer, upstreamId: string, value: string, kind: 'credential' | 'refresh_token' = 'credential'): string {
  return encrypt(encryptionKey, value, `${upstreamId}:${kind}`);
}

export function openCredential(encryptionKey: Buffer, upstreamId: string, ciphertext: string, kind: 'credential' | 'refresh_token' = 'credential'): string {
  return decrypt(encryptionKey, ciphertext, `${upstreamId}:${kind}`).toString('utf8');
}

/** Gateway keys are `wcp_ai_<43 base64url chars>` (256 bits); stored as SHA-256 hex of the whole key. */
export const GATEWAY_KEY_PREFIX = 'wcp_ai_';

/** Live usage is counted in 10-second buckets kept 3 minutes; usage/realtime sums the last six. */
export const REALTIME_BUCKET_SECONDS = 10;

export function aiRedisKeys(redisPrefix: string) {
  return {
    /** Hash with fields requests, errors, inputTokens, outputTokens, cachedTokens, costMicroUsd. */
    realtime: (workspaceId: string, bucket: number) => `${redisPrefix}:ai:rt:${workspaceId}:${bucket}`,
    /** Requests of a key in the current minute (INCR, TTL 60 s). */
    keyRequests: (keyId: string, minute: number) => `${redisPrefix}:ai:key-rpm:${keyId}:${minute}`,
    /** Tokens of a key in the current minute (INCRBY after each request, TTL 120 s). */
    keyTokens: (keyId: string, minute: number) => `${redisPrefix}:ai:key-tpm:${keyId}:${minute}`,
    /** USD spent by a key in a calendar month (INCRBYFLOAT; seeded from ai.usage when missing). */
    keySpend: (keyId: string, month: string) => `${redisPrefix}:ai:key-spend:${keyId}:${month}`,
  };
}

export function realtimeBucket(now = Date.now()): number {
  return Math.floor(now / 1000 / REALTIME_BUCKET_SECONDS);
}

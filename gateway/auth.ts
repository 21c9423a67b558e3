import type { IncomingHttpHeaders } from 'node:http';
import { sha256 } from '../core/crypto';
import { UnauthenticatedError, UnavailableError } from '../core/errors';
import type { Logger } from '../core/logger';
import { signEnvelope, type Principal, ENVELOPE_HEADER } from '../core/principal';
import { TOPICS, type PlatformPubSub } from '../core/pubsub';
import { API_KEY_PREFIX, verifyAccessToken, type AccessClaims } from '../core/tokens';

export interface AuthenticatorOptions {
  jwtSecret: string;
  internalSigningSecret: string;
  /** Base URL of the identity subgraph (without /graphql). */
  identityUrl: string;
  pubsub: PlatformPubSub;
  logger: Logger;
  /** How long a resolved principal is reused. @defaultValue 30000 */
  cacheTtlMs?: number;
}

interface CacheEntry {
  value: Promise<Principal | null>;
  expiresAt: number;
}

const MAX_CACHE_ENTRIES = 50_000;

/**
 * Authentication, once, at the gateway: `X-API-Key` or `Authorization: Bearer <jwt>`.
 * Access tokens are verified locally (HS256 only); the principal (memberships included) comes
 * from the identity subgraph's internal API and is cached briefly. Identity publishes
 * `principalChanged` whenever a membership, user or key changes, and every gateway drops the
 * affected entries at once, so a revoked key stops working everywhere without waiting for the TTL.
 */
export class Authenticator {
  private readonly byUser = new Map<string, CacheEntry>();
  private readonly byKeyHash = new Map<string, CacheEntry>();
  private readonly verifiedTokens = new Map<string, { claims: AccessClaims; expiresAt: number }>();
  private readonly ttl: number;
  private readonly unsubscribe: () => void;

  constructor(private readonly options: AuthenticatorOptions) {
    this.ttl = options.cacheTtlMs ?? 30_000;
    this.unsubscribe = options.pubsub.on<{ userId?: string; apiKeyId?: string }>(TOPICS.principalChanged, (event) => this.evict(event));
  }

  /** The caller, or null for an anonymous request. Bad credentials throw UnauthenticatedError. */
  async authenticate(headers: IncomingHttpHeaders | Record<string, unknown>): Promise<Principal | null> {
    const apiKey = headerOf(headers, 'x-api-key');
    const authorization = headerOf(headers, 'authorization');
    if (apiKey !== undefined) return this.byApiKey(apiKey);
    if (authorization !== undefined) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
      if (!match) throw new UnauthenticatedError('Authorization header must be "Bearer <token>"');
      // An API key in a bearer header is accepted too, for clients that only speak bearer.
      if (match[1].startsWith(API_KEY_PREFIX)) return this.byApiKey(match[1]);
      const claims = await this.verified(match[1]);
      const principal = await this.cached(this.byUser, claims.sub, { userId: claims.sub });
      if (!principal) throw new UnauthenticatedError('The account of this token no longer exists');
      return principal;
    }
    return null;
  }

  /**
   * Verifies an access token, remembering verified ones until they expire: verifying the same
   * bytes again can only give the same answer, and clients send one token many times.
   */
  private async verified(token: string): Promise<AccessClaims> {
    const now = Date.now();
    const hit = this.verifiedTokens.get(token);
    if (hit && hit.expiresAt > now) return hit.claims;
    const claims = await verifyAccessToken(this.options.jwtSecret, token);
    if (this.verifiedTokens.size >= MAX_CACHE_ENTRIES) this.verifiedTokens.clear();
    this.verifiedTokens.set(token, { claims, expiresAt: (claims.exp ?? 0) * 1000 });
    return claims;
  }

  close(): void {
    this.verifiedTokens.clear();
    this.unsubscribe();
    this.byUser.clear();
    this.byKeyHash.clear();
  }

  private async byApiKey(key: string): Promise<Principal> {
    if (!key.startsWith(API_KEY_PREFIX) || key.length > 200) throw new UnauthenticatedError('Invalid API key');
    const principal = await this.cached(this.byKeyHash, sha256(key), { apiKey: key });
    if (!principal) throw new UnauthenticatedError('Invalid API key');
    return principal;
  }

  private cached(cache: Map<string, CacheEntry>, key: string, body: Record<string, string>): Promise<Principal | null> {
    const now = Date.now();
    const hit = cache.get(key);
    if (hit && hit.expiresAt > now) return hit.value;
    if (cache.size >= MAX_CACHE_ENTRIES) cache.clear();
    const value = this.fetchPrincipal(body);
    cache.set(key, { value, expiresAt: now + this.ttl });
    // A failed lookup is not remembered.
    value.catch(() => cache.delete(key));
    return value;
  }

  private async fetchPrincipal(body: Record<string, string>): Promise<Principal | null> {
    const envelope = signEnvelope(this.options.internalSigningSecret, { principal: null, requestId: 'auth', clientIp: '', iat: Math.floor(Date.now() / 1000) });
    let response: Response;
    try {
      response = await fetch(`${this.options.identityUrl}/internal/principal`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [ENVELOPE_HEADER]: envelope },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(5000),
      });
    } catch (err) {
      this.options.logger.error('identity unreachable during authentication', { err });
      throw new UnavailableError('Authentication is temporarily unavailable');
    }
    if (!response.ok) {
      this.options.logger.error('identity refused a principal lookup', { status: response.status });
      throw new UnavailableError('Authentication is temporarily unavailable');
    }
    const json = (await response.json()) as { data: Principal | null };
    return json.data;
  }

  private evict(event: { userId?: string; apiKeyId?: string }): void {
    if (event.userId) this.byUser.delete(event.userId);
    // Key-hash entries are found by what they resolved to.
    for (const [hash, entry] of this.byKeyHash) {
      void entry.value.then(
        (principal) => {
          if (principal && (principal.userId === event.userId || (event.apiKeyId && principal.apiKeyId === event.apiKeyId))) {
            if (this.byKeyHash.get(hash) === entry) this.byKeyHash.delete(hash);
          }
        },
        () => undefined,
      );
    }
  }
}

function headerOf(headers: IncomingHttpHeaders | Record<string, unknown>, name: string): string | undefined {
  const value = (headers as Record<string, unknown>)[name];
  if (Array.isArray(value)) return value[0] as string;
  return typeof value === 'string' ? value : undefined;
}

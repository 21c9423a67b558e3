import { hmac, safeEqual } from './crypto';

export const WORKSPACE_ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type WorkspaceRole = (typeof WORKSPACE_ROLES)[number];

/** Who is calling, as the gateway established it once per request. */
export interface Principal {
  userId: string;
  username: string;
  isAdmin: boolean;
  /** How the caller authenticated. */
  via: 'jwt' | 'api_key';
  apiKeyId?: string;
  /** The user's personal workspace, used when a request names none. */
  defaultWorkspaceId: string;
  /** Workspace id → the caller's role there. */
  memberships: Record<string, WorkspaceRole>;
}

/**
 * What the gateway forwards to a subgraph with every operation: the principal (null for an
 * anonymous caller of a public operation) and request facts the subgraph cannot see itself.
 */
export interface Envelope {
  principal: Principal | null;
  requestId: string;
  clientIp: string;
  /** The X-Workspace-ID header, if the caller sent one. */
  workspaceHeader?: string;
  /** Seconds since the epoch when the gateway signed it. */
  iat: number;
}

export const ENVELOPE_HEADER = 'x-platform-envelope';
/** Signed envelopes older than this are refused, bounding replay of a captured header. */
const MAX_AGE_SECONDS = 300;

/** `<base64url(json)>.<hmac>` */
export function signEnvelope(secret: string, envelope: Envelope): string {
  const payload = Buffer.from(JSON.stringify(envelope)).toString('base64url');
  return `${payload}.${hmac(secret, payload)}`;
}

/** The envelope if the signature is the gateway's and it is fresh, else null. */
export function verifyEnvelope(secret: string, header: string | undefined | null, now = Date.now()): Envelope | null {
  if (!header || header.length > 64 * 1024) return null;
  const dot = header.lastIndexOf('.');
  if (dot <= 0) return null;
  const payload = header.slice(0, dot);
  if (!safeEqual(header.slice(dot + 1), hmac(secret, payload))) return null;
  try {
    const envelope = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Envelope;
    if (typeof envelope.iat !== 'number' || Math.abs(now / 1000 - envelope.iat) > MAX_AGE_SECONDS) return null;
    return envelope;
  } catch {
    return null;
  }
}

import type { IncomingMessage } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { RequestContext } from '../core/context';
import { clientAddress } from '../core/http';
import type { Authenticator } from './auth';

/** The gateway's per-request context: the request facts plus the envelope, signed lazily once. */
export interface GatewayContext extends RequestContext {
  envelopeHeader?: string;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Random per process, so ids of several gateway processes do not collide. */
const PROCESS_PREFIX = `req_${randomBytes(6).toString('base64url')}`;
let sequence = 0;

/**
 * The caller's X-Request-Id when it is sane, else a new one: a per-process random prefix and a
 * counter (unique and cheap; a request id identifies, it need not be unguessable).
 */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  if (typeof given === 'string' && REQUEST_ID.test(given)) return given;
  return newRequestId();
}

/**
 * A request id of this process. Routes whose request id keys a record (the AI gateway's usage
 * row, written once per id) use it instead of the caller's, which could collide or be replayed.
 */
export function newRequestId(): string {
  sequence = (sequence + 1) % Number.MAX_SAFE_INTEGER;
  return `${PROCESS_PREFIX}${sequence.toString(36)}`;
}

const WORKSPACE_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** Authenticates a request and builds its context (bad credentials throw UnauthenticatedError). */
export async function buildContext(authenticator: Authenticator, req: IncomingMessage, requestId: string): Promise<GatewayContext> {
  const principal = await authenticator.authenticate(req.headers);
  const workspace = req.headers['x-workspace-id'];
  return {
    principal,
    requestId,
    clientIp: clientAddress(req),
    workspaceHeader: typeof workspace === 'string' && WORKSPACE_ID.test(workspace) ? workspace : undefined,
  };
}

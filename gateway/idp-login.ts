import type { IncomingMessage, ServerResponse } from 'node:http';
import { IDP_NAMES, type IdpName, type PlatformConfig } from '../core/config';
import { clientAddress } from '../core/http';
import type { ExtraRawRoute, RawRouteContext, RawRouteHandler } from '../rest-compat';
import type { InternalClient } from '../core/internal-client';

/** Cookie binding a sign-in to the browser that started it (login CSRF protection). */
export const BINDING_COOKIE = 'wcp_idp_binding';
const COOKIE_PATH = '/v1/auth';

export interface IdpLoginOptions {
  config: Pick<PlatformConfig, 'publicUrl' | 'oauthStateTtlSeconds'>;
  /** The identity subgraph's internal API. */
  identity: InternalClient;
  /** Base URL of the edge as browsers reach it (PUBLIC_URL, else the gateway's listening URL). */
  edgeUrl(): string;
}

/**
 * Browser sign-in through identity providers, the gateway's half (identity holds the logic,
 * subgraphs/identity/idp/idp.service.ts):
 *
 * - `GET /v1/auth/<provider>?returnTo=/path` asks identity (`idp/start`) for the provider's
 *   authorization URL, answers 302 there and sets the `wcp_idp_binding` cookie (HttpOnly,
 *   SameSite=Lax so it comes back on the provider's top-level redirect, Path=/v1/auth, the state's
 *   lifetime, Secure behind https). Identity keeps only the cookie's sha256.
 * - `GET /v1/auth/<provider>/callback?code&state` hands the full callback URL and the cookie to
 *   identity (`idp/callback`), then answers 302 to the console with `#handoff=<one-time code>`
 *   and clears the cookie. The console trades the code with the `exchangeLoginHandoff` mutation:
 *   tokens never appear in a URL.
 *
 * Failures answer the platform's error JSON: 400 a bad state, binding or returnTo, a refusal
 * by the provider or an answer of its that fails verification (nonce, ID token); 403 a
 * disabled user; 503 a provider not configured, unreachable or failing.
 */
export function createIdpLogin(options: IdpLoginOptions): { rawHandlers: { idpLogin: RawRouteHandler }; extraRawRoutes: ExtraRawRoute[] } {
  const { config, identity } = options;
  const secure = () => options.edgeUrl().startsWith('https:');

  const idpLogin: RawRouteHandler = async (req, res, ctx) => {
    const provider = providerOf(ctx.path);
    const returnTo = ctx.query.get('returnTo') ?? undefined;
    const redirectUri = `${options.edgeUrl()}${COOKIE_PATH}/${provider}/callback`;
    const started = await identity.call<{ authorizationUrl: string; binding: string }>('idp/start', { provider, redirectUri, returnTo }, requestOf(req, ctx));
    redirect(res, started.authorizationUrl, cookie(started.binding, config.oauthStateTtlSeconds, secure()));
  };

  const callback: RawRouteHandler = async (req, res, ctx) => {
    const provider = providerOf(ctx.path);
    const callbackUrl = `${options.edgeUrl()}${req.url ?? ''}`;
    const binding = cookieValue(req, BINDING_COOKIE);
    const finished = await identity.call<{ redirectTo: string }>('idp/callback', { provider, callbackUrl, binding }, requestOf(req, ctx));
    redirect(res, finished.redirectTo, cookie('', 0, secure()));
  };

  return {
    rawHandlers: { idpLogin },
    extraRawRoutes: IDP_NAMES.map((name) => ({ method: 'GET' as const, path: `/auth/${name}/callback`, handler: callback })),
  };
}

/** `/auth/idp-a` and `/auth/idp-a/callback` → `idp-a`. */
function providerOf(path: string): IdpName {
  const name = path.split('/')[2];
  if (!(IDP_NAMES as readonly string[]).includes(name)) throw new Error(`no identity provider in route ${path}`);
  return name as IdpName;
}

function requestOf(req: IncomingMessage, ctx: RawRouteContext): { requestId: string; clientIp: string } {
  return { requestId: ctx.requestId, clientIp: clientAddress(req) };
}

function redirect(res: ServerResponse, location: string, setCookie: string): void {
  res.writeHead(302, {
    location,
    'set-cookie': setCookie,
    // Neither the provider's URL (state) nor the console's (handoff code) may be cached or leak onwards.
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'content-length': '0',
  });
  res.end();
}

function cookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  return [`${BINDING_COOKIE}=${value}`, `Path=${COOKIE_PATH}`, `Max-Age=${maxAgeSeconds}`, 'HttpOnly', 'SameSite=Lax', ...(secure ? ['Secure'] : [])].join('; ');
}

function cookieValue(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

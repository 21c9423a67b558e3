import type { InternalRoute } from '../../../core/subgraph';
import { BadRequestError } from '../../../core/errors';
import type { IdpService } from './idp.service';

/**
 * Identity's internal routes of browser sign-in, called by the gateway's raw handlers
 * (gateway/idp-login.ts) with a signed envelope:
 * - `idp/start` `{ provider, redirectUri, returnTo? }` → `{ authorizationUrl, state, binding }`
 * - `idp/callback` `{ provider, callbackUrl, binding? }` → `{ redirectTo }`
 * The service checks every field's value; here only the body's shape.
 */
export function idpInternalRoutes(service: IdpService): Record<string, InternalRoute> {
  return {
    'idp/start': async ({ body }) => {
      const { provider, redirectUri, returnTo } = objectOf(body);
      return service.start({ provider: provider as never, redirectUri: redirectUri as string, returnTo: returnTo as string | undefined });
    },
    'idp/callback': async ({ body }) => {
      const { provider, callbackUrl, binding } = objectOf(body);
      return service.finish({ provider: provider as never, callbackUrl: callbackUrl as string, binding: typeof binding === 'string' ? binding : null });
    },
  };
}

function objectOf(body: unknown): Record<string, unknown> {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new BadRequestError('Body must be a JSON object');
  return body as Record<string, unknown>;
}

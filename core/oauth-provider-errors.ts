import { errors } from 'openid-client';
import { BadRequestError, DomainError, UnavailableError } from './errors';

/**
 * OAuth error codes that say the platform's side is wrong or the provider is down (its client
 * registration, a grant type it does not allow, an outage), not the caller's request: 503.
 */
const PROVIDER_SIDE_ERRORS = new Set(['invalid_client', 'unauthorized_client', 'unsupported_grant_type', 'server_error', 'temporarily_unavailable']);

/**
 * What an openid-client failure means to the platform's caller, as a domain error:
 * - the provider refused the request (`invalid_grant` for a used or expired code, a bad
 *   redirect URI, …) or its answer failed validation (ID token, nonce, issuer): 400;
 * - the provider cannot be reached, timed out, answered 5xx or refused the platform's own
 *   credentials: 503.
 * Anything else (a programming error) is returned as it is and ends as 500.
 * Messages name the provider's error code and description, never a token.
 */
export function providerError(err: unknown, provider: string, action: string): unknown {
  if (err instanceof DomainError) return err;
  if (err instanceof errors.OPError) {
    const code = err.error ?? 'unknown_error';
    const status = err.response?.statusCode ?? 400;
    // processResponse reports a non-OAuth answer (an HTML 502 page, say) as "expected 200 OK, got: …".
    const nonStandard = code.startsWith('expected ');
    const details = { provider, error: nonStandard ? 'unexpected_response' : code };
    if (nonStandard || status >= 500 || PROVIDER_SIDE_ERRORS.has(code)) {
      return new UnavailableError(`Identity provider ${provider} failed to ${action}: ${err.message}`, details);
    }
    return new BadRequestError(`Identity provider ${provider} refused to ${action}: ${err.message}`, details);
  }
  if (err instanceof errors.RPError) {
    if (err.message.startsWith('outgoing request timed out')) {
      return new UnavailableError(`Identity provider ${provider} did not answer in time to ${action}`, { provider, error: 'timeout' });
    }
    return new BadRequestError(`The answer of identity provider ${provider} failed validation (${action}): ${err.message}`, { provider, error: 'invalid_response' });
  }
  if (isNetworkError(err)) {
    return new UnavailableError(`Identity provider ${provider} cannot be reached to ${action} (${(err as { code: string }).code})`, { provider, error: 'unreachable' });
  }
  return err;
}

/** The OAuth error code of a provider's refusal (`invalid_grant`, …), when that is what `err` is. */
export function oauthErrorCode(err: unknown): string | undefined {
  return err instanceof errors.OPError ? err.error : undefined;
}

/**
 * Node's socket and DNS failures carry a string `code` such as ECONNREFUSED or ENOTFOUND. Not
 * `instanceof Error`: errors made by Node's internals may come from another realm (jest's vm).
 */
function isNetworkError(err: unknown): boolean {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^E[A-Z_]+$/.test(code);
}

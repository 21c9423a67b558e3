import { ValidationError } from '../../../core/errors';

/**
 * An access token expiring within this many seconds is refreshed before it is handed out, so
 * a caller never receives a token that dies in the middle of its request to the provider.
 */
export const REFRESH_MARGIN_SECONDS = 60;
/** Most scopes one authorization request may ask for. */
export const MAX_SCOPES = 50;
/** A scope token (RFC 6749 §3.3: printable ASCII except space, `"` and `\`), at most 200 characters. */
export const SCOPE_PATTERN = /^[\x21\x23-\x5B\x5D-\x7E]{1,200}$/;
/** Longest `code`, `state` or `iss` accepted from a caller; real ones are far shorter. */
export const MAX_CALLBACK_PARAM_LENGTH = 2_048;
/** Longest redirect URI. */
export const MAX_REDIRECT_URI_LENGTH = 2_048;

/** An absolute http(s) URI without a fragment (RFC 6749 §3.1.2); the provider checks it is registered. */
export function validateRedirectUri(value: unknown): string {
  const fail = () => new ValidationError('redirectUri must be an absolute http or https URL without a fragment', { field: 'redirectUri' });
  if (typeof value !== 'string' || value.length > MAX_REDIRECT_URI_LENGTH) throw fail();
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw fail();
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.hash || value.includes('#')) throw fail();
  return value;
}

/** 1 to MAX_SCOPES scope tokens, duplicates dropped, order kept. */
export function validateScopes(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_SCOPES || !value.every((s) => typeof s === 'string' && SCOPE_PATTERN.test(s))) {
    throw new ValidationError(`scopes must be a list of 1 to ${MAX_SCOPES} scope names without spaces or quotes`, { field: 'scopes' });
  }
  return [...new Set(value as string[])];
}

/** A non-empty string of at most MAX_CALLBACK_PARAM_LENGTH characters (a code, state or issuer from the redirect). */
export function validateCallbackParam(field: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_CALLBACK_PARAM_LENGTH) {
    throw new ValidationError(`${field} must be a non-empty string of at most ${MAX_CALLBACK_PARAM_LENGTH} characters`, { field });
  }
  return value;
}

import { errors } from 'openid-client';
import { BadRequestError, UnauthenticatedError, UnavailableError } from './errors';
import { oauthErrorCode, providerError } from './oauth-provider-errors';

/** An OPError as openid-client builds it from a provider's HTTP answer. */
function opError(body: { error: string; error_description?: string }, statusCode: number) {
  return new errors.OPError(body, { statusCode } as never);
}

describe('providerError', () => {
  it('turns a refusal of what the caller sent into 400 naming the provider and the OAuth error', () => {
    const err = providerError(opError({ error: 'invalid_grant', error_description: 'grant request is invalid' }, 400), 'idp-a', 'exchange the authorization code');
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err).toMatchObject({ message: 'Identity provider idp-a refused to exchange the authorization code: invalid_grant (grant request is invalid)', details: { provider: 'idp-a', error: 'invalid_grant' } });
    expect(oauthErrorCode(opError({ error: 'invalid_grant' }, 400))).toBe('invalid_grant');
  });

  it.each([
    ['the platform client is refused', opError({ error: 'invalid_client' }, 401), 'invalid_client'],
    ['the provider fails', opError({ error: 'server_error' }, 500), 'server_error'],
    ['the provider answers something that is not OAuth', opError({ error: 'expected 200 OK, got: 502 Bad Gateway' }, 502), 'unexpected_response'],
    ['the provider is slow', new errors.RPError('outgoing request timed out after 5000ms'), 'timeout'],
    ['the provider is not there', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }), 'unreachable'],
  ])('answers 503 when %s', (_what, cause, code) => {
    const err = providerError(cause, 'idp-b', 'refresh the access token');
    expect(err).toBeInstanceOf(UnavailableError);
    expect((err as UnavailableError).details).toEqual({ provider: 'idp-b', error: code });
  });

  it('answers 400 to an answer that fails validation (ID token, nonce, issuer)', () => {
    const err = providerError(new errors.RPError({ printf: ['nonce mismatch, expected %s, got: %s', 'a', 'b'] }), 'idp-a', 'exchange the authorization code');
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).message).toContain('nonce mismatch');
  });

  it('leaves domain errors and programming errors as they are', () => {
    const domain = new UnauthenticatedError();
    const bug = new TypeError('checks.state argument is missing');
    expect(providerError(domain, 'idp-a', 'x')).toBe(domain);
    expect(providerError(bug, 'idp-a', 'x')).toBe(bug);
    expect(oauthErrorCode(bug)).toBeUndefined();
  });
});

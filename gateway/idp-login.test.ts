import type { IncomingMessage, ServerResponse } from 'node:http';
import { URLSearchParams } from 'node:url';
import { createIdpLogin } from './idp-login';
import type { InternalClient } from '../core/internal-client';

/* The gateway's half of browser sign-in, with identity's internal API replaced. */

function fakeResponse() {
  const written: { status?: number; headers?: Record<string, string> } = {};
  const res = {
    writeHead: (status: number, headers: Record<string, string>) => Object.assign(written, { status, headers }),
    end: () => undefined,
  } as unknown as ServerResponse;
  return { res, written };
}

function setup(publicUrl?: string) {
  const calls: Array<{ name: string; body: any }> = [];
  const identity = {
    call: jest.fn(async (name: string, body: unknown) => {
      calls.push({ name, body });
      return name === 'idp/start' ? { authorizationUrl: 'https://idp.example/auth?state=s', state: 's', binding: 'b1nd' } : { redirectTo: 'https://console.example/#handoff=c' };
    }),
  };
  const login = createIdpLogin({ config: { publicUrl, oauthStateTtlSeconds: 600 }, identity: identity as unknown as InternalClient, edgeUrl: () => publicUrl ?? 'http://127.0.0.1:9999' });
  return { login, calls };
}

const req = (url: string, cookie?: string) => ({ url, headers: cookie ? { cookie } : {}, socket: { remoteAddress: '10.1.2.3' } }) as unknown as IncomingMessage;

describe('createIdpLogin', () => {
  it('starts with the redirect URI of the edge and sets the binding cookie; Secure behind https', async () => {
    const { login, calls } = setup('https://platform.example');
    const { res, written } = fakeResponse();
    await login.rawHandlers.idpLogin(req('/v1/auth/idp-b?returnTo=%2Fx'), res, { params: {}, query: new URLSearchParams('returnTo=/x'), requestId: 'r1', path: '/auth/idp-b' });
    expect(calls[0]).toEqual({ name: 'idp/start', body: { provider: 'idp-b', redirectUri: 'https://platform.example/v1/auth/idp-b/callback', returnTo: '/x' } });
    expect(written.status).toBe(302);
    expect(written.headers).toMatchObject({ location: 'https://idp.example/auth?state=s', 'cache-control': 'no-store' });
    expect(written.headers!['set-cookie']).toBe('wcp_idp_binding=b1nd; Path=/v1/auth; Max-Age=600; HttpOnly; SameSite=Lax; Secure');
  });

  it('hands the callback URL and the cookie to identity, redirects to the console and clears the cookie', async () => {
    const { login, calls } = setup();
    expect(login.extraRawRoutes.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /auth/idp-a/callback', 'GET /auth/idp-b/callback']);
    const { res, written } = fakeResponse();
    await login.extraRawRoutes[0].handler(req('/v1/auth/idp-a/callback?code=c&state=s', 'other=1; wcp_idp_binding=b1nd'), res, {
      params: {},
      query: new URLSearchParams('code=c&state=s'),
      requestId: 'r2',
      path: '/auth/idp-a/callback',
    });
    expect(calls[0]).toEqual({ name: 'idp/callback', body: { provider: 'idp-a', callbackUrl: 'http://127.0.0.1:9999/v1/auth/idp-a/callback?code=c&state=s', binding: 'b1nd' } });
    expect(written.status).toBe(302);
    expect(written.headers!.location).toBe('https://console.example/#handoff=c');
    expect(written.headers!['set-cookie']).toBe('wcp_idp_binding=; Path=/v1/auth; Max-Age=0; HttpOnly; SameSite=Lax');
  });
});

import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';

/** A client registered with the stand-in provider. */
export interface OidcTestClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  grant_types?: string[];
  token_endpoint_auth_method?: 'client_secret_basic' | 'client_secret_post';
}

/** Claims of the account signed in at the provider's next authorization request. */
export interface OidcTestAccount {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
}

export interface OidcTestProvider {
  /** http://127.0.0.1:<port>; also the base of every endpoint (discovery at /.well-known/openid-configuration). */
  issuer: string;
  /** Who signs in next (the fixture signs them in without a form). */
  setAccount(account: OidcTestAccount): Promise<void>;
  /** Grant types of the token-endpoint calls answered so far. */
  tokenCalls(): Promise<{ grantType: string; at: number }[]>;
  stop(): Promise<void>;
}

const FIXTURE = path.resolve(__dirname, 'fixtures/oidc-provider.mjs');

/**
 * Starts `oidc-provider` (a certified OpenID Connect server) as a child process on loopback.
 * It is ESM-only, so it runs under plain node beside jest rather than inside it.
 */
export async function startOidcProvider(options: { clients: OidcTestClient[]; accessTokenTtlSeconds?: number }): Promise<OidcTestProvider> {
  const child: ChildProcess = spawn(process.execPath, [FIXTURE], {
    env: { ...process.env, OIDC_CLIENTS: JSON.stringify(options.clients), OIDC_ACCESS_TOKEN_TTL: String(options.accessTokenTtlSeconds ?? 3600) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const issuer = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`oidc-provider did not start in 15 s: ${stderr}`)), 15_000);
    child.once('exit', (code) => reject(new Error(`oidc-provider exited with ${code}: ${stderr}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith('READY ')) return;
      clearTimeout(timer);
      resolve(line.slice('READY '.length).trim());
    });
  });
  const call = async (method: string, pathname: string, body?: unknown) => {
    const response = await fetch(`${issuer}${pathname}`, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    if (!response.ok) throw new Error(`fixture ${pathname}: ${response.status}`);
    return response.json() as Promise<Record<string, unknown>>;
  };
  return {
    issuer,
    setAccount: async (account) => void (await call('POST', '/__test/account', account)),
    tokenCalls: async () => (await call('GET', '/__test/log')).tokenCalls as { grantType: string; at: number }[],
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

/**
 * Follows redirects by hand, like a browser: keeps cookies per host, stops at the first
 * response whose Location leaves `stopAt` origins untouched… or after `max` hops. Returns every
 * hop, so tests can inspect (or tamper with) each one.
 */
export class BrowserLike {
  private readonly jar = new Map<string, Map<string, string>>();

  /** GET `url` and follow redirects while `follow(location)` says so; returns the last response and the chain. */
  async walk(url: string, follow: (location: URL) => boolean = () => true, max = 10): Promise<{ response: Response; chain: string[] }> {
    const chain: string[] = [url];
    let current = url;
    for (let hop = 0; ; hop++) {
      const response = await this.get(current);
      const location = response.headers.get('location');
      if (response.status < 300 || response.status >= 400 || !location) return { response, chain };
      const next = new URL(location, current);
      chain.push(next.toString());
      if (!follow(next) || hop >= max) return { response, chain };
      current = next.toString();
    }
  }

  async get(url: string): Promise<Response> {
    const target = new URL(url);
    const cookies = this.jar.get(target.host);
    const response = await fetch(url, { redirect: 'manual', headers: cookies?.size ? { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {} });
    for (const header of response.headers.getSetCookie()) {
      const [pair] = header.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const hostJar = this.jar.get(target.host) ?? new Map<string, string>();
      if (value === '' || /max-age=0|expires=Thu, 01 Jan 1970/i.test(header)) hostJar.delete(name);
      else hostJar.set(name, value);
      this.jar.set(target.host, hostJar);
    }
    return response;
  }

  cookie(host: string, name: string): string | undefined {
    return this.jar.get(host)?.get(name);
  }
}

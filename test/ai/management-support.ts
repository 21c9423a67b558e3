import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import { startTestPlatform, type TestPlatform } from '../harness';
import { createUserAndLogin, gql, loginAdmin, rest } from '../helpers';

/**
 * Local stand-ins for the management API's live calls: a vendor models endpoint per protocol
 * (what testAiUpstream fetches) and an OAuth 2 token endpoint (what completeAiOAuth and
 * refreshAiOAuth post to). They record every request they get.
 */

export const GOOD_KEY = 'sk-live-management-test-key-0123456789';

export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  form?: Record<string, string>;
}

export interface TokenGrant {
  access_token: string;
  refresh_token?: string;
  expires_in?: number;
}

export interface LocalVendor {
  url: string;
  seen: SeenRequest[];
  /** Authorization codes the token endpoint accepts, with the S256 challenge the verifier must match. */
  codes: Map<string, { challenge: string; grant: TokenGrant }>;
  /** Refresh tokens it accepts, and what each one gives. */
  refreshTokens: Map<string, TokenGrant>;
  stop(): Promise<void>;
}

const json = (body: unknown) => JSON.stringify(body);

export async function startLocalVendor(): Promise<LocalVendor> {
  const seen: SeenRequest[] = [];
  const codes = new Map<string, { challenge: string; grant: TokenGrant }>();
  const refreshTokens = new Map<string, TokenGrant>();

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0];
      const record: SeenRequest = { method: req.method ?? 'GET', path, headers: req.headers };
      seen.push(record);
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(json(body));
      };

      if (path === '/token' && req.method === 'POST') {
        const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
        record.form = form;
        if (form.client_id !== 'ai-client') return send(401, { error: 'invalid_client' });
        if (form.grant_type === 'authorization_code') {
          const entry = codes.get(form.code);
          codes.delete(form.code);
          const challenge = createHash('sha256').update(form.code_verifier ?? '').digest('base64url');
          if (!entry || entry.challenge !== challenge || !form.redirect_uri) return send(400, { error: 'invalid_grant', error_description: 'code unknown or verifier wrong' });
          return send(200, { token_type: 'Bearer', ...entry.grant });
        }
        if (form.grant_type === 'refresh_token') {
          const grant = refreshTokens.get(form.refresh_token);
          if (!grant) return send(400, { error: 'invalid_grant', error_description: 'refresh token revoked' });
          return send(200, { token_type: 'Bearer', ...grant });
        }
        return send(400, { error: 'unsupported_grant_type' });
      }

      // Models lists, one base URL per behaviour and protocol.
      if (path === '/openai/v1/models') {
        if (req.headers.authorization !== `Bearer ${GOOD_KEY}` && !String(req.headers.authorization).startsWith('Bearer oauth-access-')) {
          return send(401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } });
        }
        return send(200, { object: 'list', data: [{ id: 'gpt-small', object: 'model' }, { id: 'gpt-large', object: 'model' }] });
      }
      if (path === '/anthropic/v1/models') {
        if (req.headers['x-api-key'] !== GOOD_KEY || req.headers['anthropic-version'] !== '2023-06-01') return send(401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
        return send(200, { data: [{ id: 'claude-small', type: 'model' }], has_more: false });
      }
      if (path === '/gemini/v1beta/models') {
        if (req.headers['x-goog-api-key'] !== GOOD_KEY) return send(403, { error: { code: 403, message: 'API key not valid' } });
        return send(200, { models: [{ name: 'models/gemini-small' }, { name: 'models/text-embedding' }] });
      }
      if (path === '/echo/v1/models') {
        // Answers the credential back: the management API must not pass it on.
        return send(500, { error: { message: `bad key ${String(req.headers.authorization)}` } });
      }
      send(404, { error: { message: 'no such route' } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    codes,
    refreshTokens,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

type Auth = Record<string, string>;

export interface Caller {
  auth: Auth;
  userId: string;
  workspaceId: string;
}

export interface Answer {
  status: number;
  body: any;
  text: string;
}

export const PLATFORM_MODEL_KEY = 'sk-platform-operator-key-never-shown-0001';

/**
 * A platform with identity, ai and the gateway; one platform model (pm-small), OAuth for
 * vendor-a (with a redirect URI) and vendor-c (without) against the local token endpoint; three
 * users: alice, mallory (another workspace) and a viewer of alice's workspace. Every answer is
 * kept in `answers`, every credential handed over in `credentials`, for the final check.
 */
export interface ManagementBench {
  platform: TestPlatform;
  vendor: LocalVendor;
  pg: Client;
  alice: Caller;
  mallory: Caller;
  viewer: Caller;
  answers: string[];
  credentials: string[];
  call(who: Caller, method: string, path: string, body?: unknown, headers?: Auth): Promise<Answer>;
  graphql(who: Caller, query: string, variables: Record<string, unknown>): Promise<{ data?: any; errors?: Array<{ message: string; extensions?: { code?: string; details?: any } }> }>;
  createUpstream(who: Caller, body?: Record<string, unknown>, headers?: Auth): Promise<any>;
  createPool(who: Caller, body?: Record<string, unknown>): Promise<any>;
  stop(): Promise<void>;
}

export async function startManagementBench(label: string): Promise<ManagementBench> {
  const vendor = await startLocalVendor();
  const platform = await startTestPlatform({
    services: ['identity', 'ai', 'gateway'],
    env: {
      AI_PLATFORM_MODELS: JSON.stringify([{ id: 'pm-small', model: 'small-1', displayName: 'Small One', api: 'openai', baseUrl: `${vendor.url}/openai/v1`, apiKey: PLATFORM_MODEL_KEY }]),
      AI_OAUTH_VENDOR_A_CLIENT_ID: 'ai-client',
      AI_OAUTH_VENDOR_A_AUTHORIZATION_URL: 'https://auth.vendor-a.test/authorize',
      AI_OAUTH_VENDOR_A_TOKEN_URL: `${vendor.url}/token`,
      AI_OAUTH_VENDOR_A_SCOPES: 'models.read inference',
      AI_OAUTH_VENDOR_A_REDIRECT_URI: 'http://127.0.0.1:9/ai/callback',
      AI_OAUTH_VENDOR_C_CLIENT_ID: 'ai-client',
      AI_OAUTH_VENDOR_C_AUTHORIZATION_URL: 'https://auth.vendor-c.test/authorize',
      AI_OAUTH_VENDOR_C_TOKEN_URL: `${vendor.url}/token`,
    },
  });
  const pg = new Client({ connectionString: platform.databaseUrl });
  await pg.connect();
  const admin = await loginAdmin(platform);
  const caller = async (name: string): Promise<Caller> => {
    const login = await createUserAndLogin(platform, admin.auth, `${label}-${name}`);
    return { auth: login.auth, userId: login.userId, workspaceId: login.defaultWorkspaceId };
  };
  const alice = await caller('alice');
  const mallory = await caller('mallory');
  const viewer = await caller('viewer');
  const added = await gql(platform, 'mutation($w: ID!, $u: ID!) { addWorkspaceMember(workspaceId: $w, userId: $u, role: viewer) { id } }', { w: alice.workspaceId, u: viewer.userId }, alice.auth);
  if (added.errors) throw new Error(`addWorkspaceMember failed: ${JSON.stringify(added.errors)}`);

  const answers: string[] = [];
  const call: ManagementBench['call'] = async (who, method, path, body, headers = {}) => {
    const response = await rest(platform, method, path, body, { ...who.auth, ...headers });
    const text = await response.text();
    answers.push(text);
    return { status: response.status, body: text ? JSON.parse(text) : undefined, text };
  };
  const bench: ManagementBench = {
    platform,
    vendor,
    pg,
    alice,
    mallory,
    viewer,
    answers,
    credentials: [GOOD_KEY, PLATFORM_MODEL_KEY],
    call,
    async graphql(who, query, variables) {
      const result = await gql(platform, query, variables, who.auth);
      answers.push(JSON.stringify(result));
      return result;
    },
    async createUpstream(who, body = {}, headers = {}) {
      const res = await call(who, 'POST', '/ai-gateway/upstreams', { name: 'primary', provider: 'vendor-a', baseUrl: `${vendor.url}/openai/v1`, apiKey: GOOD_KEY, ...body }, headers);
      if (res.status !== 201) throw new Error(`createAiUpstream answered ${res.status}: ${res.text}`);
      return res.body;
    },
    async createPool(who, body = {}) {
      const res = await call(who, 'POST', '/ai-gateway/pools', { name: 'pool', ...body });
      if (res.status !== 201) throw new Error(`createAiPool answered ${res.status}: ${res.text}`);
      return res.body;
    },
    async stop() {
      await pg.end().catch(() => undefined);
      await platform.stop();
      await vendor.stop();
    },
  };
  return bench;
}

/** The platform's error answer: status, code and (when given) the field it names. */
export function expectError(res: Answer, status: number, code: string, field?: string): void {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  if (field) expect(res.body.error.details.field).toBe(field);
}

/** Every answer kept, checked for every credential handed over. */
export function expectNoCredentials(bench: ManagementBench, minimumAnswers: number): void {
  expect(bench.answers.length).toBeGreaterThanOrEqual(minimumAnswers);
  const all = bench.answers.join('\n');
  for (const credential of bench.credentials) expect(all).not.toContain(credential);
  expect(all).not.toMatch(/credential_ciphertext|credentialCiphertext|keyHash|key_hash/);
}

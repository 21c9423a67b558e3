import type { TestPlatform } from './harness';

/** POSTs a GraphQL operation to the gateway; returns the parsed body and the response. */
export async function gql<T = any>(
  platform: TestPlatform,
  query: string,
  variables: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<{ status: number; data?: T; errors?: Array<{ message: string; extensions?: { code?: string; details?: any } }>; headers: Headers }> {
  const response = await fetch(platform.graphqlUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: T; errors?: any[] };
  return { status: response.status, data: body.data, errors: body.errors, headers: response.headers };
}

/**
 * Calls a REST route under /v1: an object body is sent as JSON, a string body as it is (for
 * malformed-JSON tests).
 */
export function rest(platform: TestPlatform, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${platform.restUrl}${path}`, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Parses a response body as JSON; a body that is not JSON fails with its status and first characters. */
export async function json<T = any>(response: Response): Promise<T> {
  const text = await response.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`not JSON (${response.status}): ${text.slice(0, 200)}`);
  }
}

/** Logs in through GraphQL and returns the bearer header and the user id. */
export async function loginAs(platform: TestPlatform, username: string, password: string): Promise<{ auth: Record<string, string>; userId: string; accessToken: string; refreshToken: string; defaultWorkspaceId: string }> {
  const result = await gql(platform, 'mutation($u: String!, $p: String!) { login(username: $u, password: $p) { accessToken refreshToken user { id defaultWorkspaceId } } }', { u: username, p: password });
  if (!result.data) throw new Error(`login failed: ${JSON.stringify(result.errors)}`);
  const { accessToken, refreshToken, user } = result.data.login;
  return { auth: { authorization: `Bearer ${accessToken}` }, userId: user.id, accessToken, refreshToken, defaultWorkspaceId: user.defaultWorkspaceId };
}

export function loginAdmin(platform: TestPlatform) {
  return loginAs(platform, platform.config.adminUsername, platform.config.adminPassword);
}

/** Creates a user (as admin) and logs in as them. */
export async function createUserAndLogin(platform: TestPlatform, admin: Record<string, string>, username: string, password = 'correct horse battery') {
  const created = await gql(platform, 'mutation($u: String!, $p: String!) { createUser(username: $u, password: $p) { id } }', { u: username, p: password }, admin);
  if (!created.data) throw new Error(`createUser failed: ${JSON.stringify(created.errors)}`);
  return loginAs(platform, username, password);
}

export { eventually } from './services';

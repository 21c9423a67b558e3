import { parse, type DocumentNode } from 'graphql';
import { NotFoundError, ValidationError } from '../core/errors';
import { readBody, sendJson } from '../core/http';
import type { RawRouteHandler, RestExecutor } from '../rest-compat';
import { toRestError } from '../rest-compat/errors';
import { parseJsonObject } from '../rest-compat/request-input';

const UPSTREAM_FIELDS = 'id workspaceId name provider baseUrl authKind credentialHint credentialExpiresAt models modelMap weight timeoutMs enabled createdAt updatedAt';

interface Step {
  document: DocumentNode;
  field: string;
  /** Body keys the step takes, each a String. */
  args: readonly string[];
  required: readonly string[];
  status: 200 | 201;
}

/**
 * `POST /v1/ai-gateway/oauth/<vendor>/<step>`: the OAuth 2 (PKCE) flow that puts an upstream's
 * credential in place, run as the ai subgraph's mutations through the gateway's pipeline.
 *
 * - `start` `{ workspaceId?, name, baseUrl, redirectUri? }` → `{ authorizationUrl, state, expiresIn }`
 * - `callback` (also `complete`) `{ code, state }` → 201 the new upstream (authKind oauth)
 * - `refresh` `{ upstreamId }` → the upstream with its new token
 *
 * The vendor comes from the path; a body that names `provider` is refused (400).
 */
const STEPS: Record<string, Step> = {
  start: {
    document: parse(`mutation StartAiOAuth($provider: String!, $workspaceId: ID, $name: String!, $baseUrl: String!, $redirectUri: String) {
      startAiOAuth(provider: $provider, workspaceId: $workspaceId, name: $name, baseUrl: $baseUrl, redirectUri: $redirectUri) { authorizationUrl state expiresIn } }`),
    field: 'startAiOAuth',
    args: ['workspaceId', 'name', 'baseUrl', 'redirectUri'],
    required: ['name', 'baseUrl'],
    status: 200,
  },
  callback: {
    document: parse(`mutation CompleteAiOAuth($provider: String!, $code: String!, $state: String!) {
      completeAiOAuth(provider: $provider, code: $code, state: $state) { ${UPSTREAM_FIELDS} } }`),
    field: 'completeAiOAuth',
    args: ['code', 'state'],
    required: ['code', 'state'],
    status: 201,
  },
  refresh: {
    document: parse(`mutation RefreshAiOAuth($provider: String!, $upstreamId: ID!) {
      refreshAiOAuth(provider: $provider, upstreamId: $upstreamId) { ${UPSTREAM_FIELDS} } }`),
    field: 'refreshAiOAuth',
    args: ['upstreamId'],
    required: ['upstreamId'],
    status: 200,
  },
};
STEPS.complete = STEPS.callback;

export function createAiOAuthHandler(options: { execute: RestExecutor; maxBodyBytes: number }): RawRouteHandler {
  return async (req, res, ctx) => {
    const match = /^\/ai-gateway\/oauth\/(vendor-[abc])\/\*$/.exec(ctx.path);
    const provider = match?.[1];
    const tail = (req.url ?? '').split('?')[0].replace(/^.*\/ai-gateway\/oauth\/vendor-[abc]\//, '');
    const step = STEPS[tail];
    if (!provider || !step) throw new NotFoundError('OAuth step', tail || '(none)');
    const body = parseJsonObject(await readBody(req, options.maxBodyBytes));
    if ('provider' in body) throw new ValidationError('The provider is fixed by the path; do not send it', { field: 'provider' });
    const variables: Record<string, unknown> = { provider };
    for (const name of step.args) {
      const value = body[name];
      if (value === undefined || value === null) continue;
      if (typeof value !== 'string') throw new ValidationError(`${name} must be a string`, { field: name });
      variables[name] = value;
    }
    for (const name of step.required) if (variables[name] === undefined) throw new ValidationError(`"${name}" is required`, { field: name });
    const result = await options.execute({ document: step.document, variables, operationName: undefined, req, requestId: ctx.requestId });
    const data = result.data?.[step.field];
    if (result.errors?.length || !data) {
      const error = toRestError(result.errors?.length ? result.errors : [{ message: 'No answer', extensions: { code: 'INTERNAL' } }], ctx.requestId);
      return sendJson(res, error.status, error.body, { ...result.headers, ...error.headers, 'x-request-id': ctx.requestId });
    }
    sendJson(res, step.status, data, { ...result.headers, 'x-request-id': ctx.requestId });
  };
}

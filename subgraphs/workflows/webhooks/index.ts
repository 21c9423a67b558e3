import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DataSource } from 'typeorm';
import type { WorkflowsConfig } from '../../../core/config';
import { DomainError } from '../../../core/errors';
import { errorBody, readBody, sendError, sendJson } from '../../../core/http';
import { ID_PREFIX, newId } from '../../../core/ids';
import type { Logger } from '../../../core/logger';
import { ENVELOPE_HEADER, type Envelope } from '../../../core/principal';
import type { RawHttpRoutes } from '../../../core/subgraph';
import { SECRET_PLACEHOLDER, type SecretParameters } from '../api/secret-parameters';
import type { ReplyWaiter, WebhookResponse } from '../engine/replies';
import type { ExecutionStarter } from '../executions/execution-starter';
import type { WorkflowConnection, WorkflowNode, WorkflowSettings } from '../model/entities';
import { verifyWebhookAuth, webhookRoute } from '../nodes';

export interface WebhookDeps {
  dataSource: DataSource;
  /** This process's reply channel: the engine sends the answer there. */
  replies: ReplyWaiter;
  starter: ExecutionStarter;
  /** Opens the node's sealed auth secret. */
  secrets: SecretParameters;
  config: { workflows: Pick<WorkflowsConfig, 'webhookMaxBodyBytes'> };
  logger: Logger;
  /** How long a caller waits for a lastNode / respondNode answer before a 504, ms. @defaultValue 30000 */
  responseTimeoutMs?: number;
  /** How long a registration is cached in memory, ms. @defaultValue 3000 */
  cacheTtlMs?: number;
}

/** The raw routes plus the registration cache's invalidation (deploy, undeploy, update). */
export interface WebhookRoutes extends RawHttpRoutes {
  /** Drops the cached registrations of a workflow (all of them without an id). */
  invalidate(workflowId?: string): void;
}

interface Registration {
  workflowId: string;
  workspaceId: string;
  version: number;
  definition: { nodes: WorkflowNode[]; connections: WorkflowConnection[]; settings: WorkflowSettings };
  node: WorkflowNode;
  /** The node's parameters with its auth secret opened; null when it does not open (every call is then refused, 403). */
  authParameters: Record<string, unknown> | null;
  method: string;
  path: string;
}

const PREFIX = '/webhooks/';
const DROPPED_HEADERS = new Set(['authorization', 'cookie', ENVELOPE_HEADER, 'proxy-authorization']);

/**
 * `/webhooks/v1/<workflowId>/<nodeId>[/<tail…>]`, any method, public (the edge forwards it
 * unauthenticated): finds the deployed webhook trigger, checks its method, path suffix and auth,
 * starts an execution with the request as input, and answers per the node's `respond`:
 * `immediately` → 202 `{ executionId }`; `lastNode` / `respondNode` → the execution's `respond`
 * event (bounded by responseTimeoutMs, then 504). It never hangs: the execution row is also
 * checked every second while waiting, in case an event was missed.
 */
export function createWebhookRoutes(deps: WebhookDeps): WebhookRoutes {
  const { dataSource: db, replies, starter, logger } = deps;
  const cacheTtlMs = deps.cacheTtlMs ?? 3000;
  const responseTimeoutMs = deps.responseTimeoutMs ?? 30_000;
  const cache = new Map<string, { at: number; value: Promise<Registration | null> }>();

  const lookup = (workflowId: string, nodeId: string): Promise<Registration | null> => {
    const key = `${workflowId}\u0000${nodeId}`;
    const hit = cache.get(key);
    if (hit && Date.now() - hit.at < cacheTtlMs) return hit.value;
    const value = load(db, deps.secrets, logger, workflowId, nodeId);
    cache.set(key, { at: Date.now(), value });
    value.then(
      (reg) => {
        // Only found registrations stay cached: a workflow deployed a moment later is served at once.
        if (!reg && cache.get(key)?.value === value) cache.delete(key);
      },
      () => cache.delete(key),
    );
    if (cache.size > 10_000) cache.delete(cache.keys().next().value!);
    return value;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, envelope: Envelope | null): Promise<void> => {
    const requestId = envelope?.requestId ?? newId('req');
    const url = new URL(req.url ?? '/', 'http://webhook');
    const parts = url.pathname.slice(PREFIX.length).split('/');
    // parts: ['v1', workflowId, nodeId, ...tail]
    if (parts[0] !== 'v1' || !parts[1] || !parts[2]) {
      req.resume();
      return sendError(res, 'NOT_FOUND', 'No such webhook', requestId);
    }
    let workflowId: string, nodeId: string, tail: string;
    try {
      workflowId = decodeURIComponent(parts[1]);
      nodeId = decodeURIComponent(parts[2]);
      tail = parts.slice(3).map(decodeURIComponent).join('/').replace(/^\/+|\/+$/g, '');
    } catch {
      req.resume();
      return sendError(res, 'NOT_FOUND', 'No such webhook', requestId);
    }
    const method = (req.method ?? 'GET').toUpperCase();
    const reg = await lookup(workflowId, nodeId);
    if (!reg || (reg.method !== '*' && reg.method !== method) || (reg.path && reg.path !== tail)) {
      req.resume();
      return sendError(res, 'NOT_FOUND', `No webhook ${method} ${url.pathname}: the workflow is not deployed or has no such trigger`, requestId);
    }

    let raw: Buffer;
    try {
      raw = await readBody(req, deps.config.workflows.webhookMaxBodyBytes);
    } catch (err) {
      if (err instanceof DomainError) return sendError(res, err.code, err.message, requestId, err.details);
      throw err;
    }

    const parameters = reg.node.parameters ?? {};
    if (!reg.authParameters || !verifyWebhookAuth(reg.authParameters, { headers: req.headers, rawBody: raw })) {
      const missing = credentialMissing(parameters, req.headers);
      return sendError(res, missing ? 'UNAUTHENTICATED' : 'FORBIDDEN', missing ? 'This webhook requires authentication' : 'Webhook authentication failed', requestId);
    }

    let body: unknown;
    try {
      body = parseBody(raw, String(req.headers['content-type'] ?? ''));
    } catch {
      return sendError(res, 'BAD_REQUEST', 'Body is not valid JSON', requestId);
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      const lower = name.toLowerCase();
      if (value === undefined || DROPPED_HEADERS.has(lower)) continue;
      headers[lower] = Array.isArray(value) ? value.join(', ') : value;
    }
    // The graph (and whoever reads its steps) sees that the secret header came, not the secret.
    const credential = credentialHeader(parameters);
    if (credential?.isSecret && headers[credential.name] !== undefined) headers[credential.name] = SECRET_PLACEHOLDER;
    const query: Record<string, string | string[]> = {};
    for (const [k, v] of url.searchParams) {
      const prev = query[k];
      query[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
    }
    const input = { body, query, headers, method, path: tail };
    const respond = typeof parameters.respond === 'string' ? parameters.respond : 'lastNode';
    const responseCode = typeof parameters.responseCode === 'number' ? parameters.responseCode : 200;
    const executionId = newId(ID_PREFIX.execution);
    const start = (reply?: ReturnType<ReplyWaiter['request']>) =>
      starter.start({
        reply,
        id: executionId,
        workspaceId: reg.workspaceId,
        workflowId: reg.workflowId,
        workflowVersion: reg.version,
        definition: reg.definition,
        mode: 'webhook',
        triggerNodeId: reg.node.id,
        input,
        userId: null,
      });

    if (respond === 'immediately') {
      await start();
      return sendJson(res, 202, { executionId }, { 'x-request-id': requestId, 'x-execution-id': executionId });
    }

    // Subscribe before starting: a fast execution's answer must not go out before anyone listens.
    const answer = await waitForAnswer(executionId, start, responseTimeoutMs);
    if (!answer) {
      return sendJson(res, 504, errorBody('TIMEOUT', `The workflow did not answer within ${Math.round(responseTimeoutMs / 1000)} s`, requestId, { executionId }), {
        'x-request-id': requestId,
        'x-execution-id': executionId,
      });
    }
    const status = respond === 'lastNode' && answer.status === 200 ? responseCode : answer.status;
    sendAnswer(res, { ...answer, status }, { 'x-request-id': requestId, 'x-execution-id': executionId });
  };

  /** The execution's answer on this process's reply channel, or, should it be missed, the answer its finished row implies; null after the timeout. */
  const waitForAnswer = async (executionId: string, start: (reply: ReturnType<ReplyWaiter['request']>) => Promise<unknown>, timeoutMs: number): Promise<WebhookResponse | null> => {
    let settled = false;
    let poll: NodeJS.Timeout | undefined;
    let timer: NodeJS.Timeout | undefined;
    let resolveAnswer!: (value: WebhookResponse | null) => void;
    const answer = new Promise<WebhookResponse | null>((resolve) => (resolveAnswer = resolve));
    const done = (value: WebhookResponse | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(poll);
      off();
      resolveAnswer(value);
    };
    // Registered before the start: a fast execution's answer must not come before anyone listens.
    const off = replies.on(executionId, (reply) => {
      if (reply.kind === 'respond') done(reply.response);
    });
    const check = async () => {
      if (settled) return;
      const [row] = (await db.query(`SELECT status, output, error FROM workflows.executions WHERE id = $1`, [executionId]).catch(() => [])) as Array<{ status: string; output: unknown; error: string | null }>;
      if (settled) return;
      // Give the reply a moment more: it may be on its way… or lost.
      if (row?.status === 'succeeded') return void setTimeout(() => done({ status: 200, headers: {}, body: Array.isArray(row.output) ? (row.output[0] ?? {}) : (row.output ?? {}) }), 200);
      if (row && (row.status === 'failed' || row.status === 'cancelled')) return void setTimeout(() => done({ status: 500, headers: {}, body: { error: row.error ?? row.status } }), 200);
      poll = setTimeout(() => void check(), 1000);
    };
    try {
      await replies.ready;
      await start(replies.request('respond'));
    } catch (err) {
      settled = true;
      off();
      throw err;
    }
    if (!settled) {
      timer = setTimeout(() => done(null), timeoutMs);
      poll = setTimeout(() => void check(), 1000);
    }
    return answer;
  };

  return {
    prefix: PREFIX,
    async handle(req, res, envelope) {
      try {
        await handle(req, res, envelope);
      } catch (err) {
        const requestId = envelope?.requestId ?? 'none';
        if (res.headersSent) return void res.destroy();
        if (err instanceof DomainError) return sendError(res, err.code, err.message, requestId, err.details);
        logger.error('webhook failed', { err, requestId });
        sendError(res, 'INTERNAL', 'Internal server error', requestId);
      }
    },
    invalidate(workflowId) {
      if (!workflowId) return cache.clear();
      for (const key of cache.keys()) if (key.startsWith(`${workflowId}\u0000`)) cache.delete(key);
    },
  };
}

async function load(db: DataSource, secrets: SecretParameters, logger: Logger, workflowId: string, nodeId: string): Promise<Registration | null> {
  const [row] = (await db.query(
    `SELECT r.method, w.workspace_id, w.version, w.nodes, w.connections, w.settings
       FROM workflows.webhook_registrations r JOIN workflows.workflows w ON w.id = r.workflow_id
      WHERE r.workflow_id = $1 AND r.node_id = $2 AND w.deployed`,
    [workflowId, nodeId],
  )) as Array<{ method: string; workspace_id: string; version: number; nodes: WorkflowNode[]; connections: WorkflowConnection[]; settings: WorkflowSettings }>;
  if (!row) return null;
  const node = row.nodes.find((n) => n.id === nodeId);
  if (!node || node.type !== 'webhook') return null;
  const route = webhookRoute(node.parameters ?? {});
  let authParameters: Record<string, unknown> | null;
  try {
    authParameters = secrets.open(node, workflowId);
  } catch (err) {
    logger.error('a webhook\'s auth secret does not open: every call is refused until it is set again', { err, workflowId, nodeId });
    authParameters = null;
  }
  return {
    workflowId,
    workspaceId: row.workspace_id,
    version: row.version,
    definition: { nodes: row.nodes, connections: row.connections, settings: row.settings ?? {} },
    node,
    authParameters,
    method: (row.method || route.method).toUpperCase(),
    path: route.path,
  };
}

/** JSON (by content type, or a body that looks like it without one), form-urlencoded → object, else text; empty → null. */
function parseBody(raw: Buffer, contentType: string): unknown {
  if (raw.length === 0) return null;
  const type = contentType.split(';')[0].trim().toLowerCase();
  const text = raw.toString('utf8');
  if (type === 'application/json' || type.endsWith('+json')) return JSON.parse(text);
  if (type === 'application/x-www-form-urlencoded') {
    const out: Record<string, string | string[]> = {};
    for (const [k, v] of new URLSearchParams(text)) {
      const prev = out[k];
      out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
    }
    return out;
  }
  return text;
}

/**
 * The header (lower case) carrying the node's credential, if its auth uses one, and whether its
 * value is the secret itself (header auth; an HMAC signature is not).
 */
function credentialHeader(parameters: Record<string, unknown>): { name: string; isSecret: boolean } | undefined {
  const auth = (parameters.auth ?? {}) as Record<string, unknown>;
  const name = auth.type === 'header' ? auth.name : auth.type === 'hmac' ? (typeof auth.header === 'string' && auth.header ? auth.header : 'x-signature') : undefined;
  return typeof name === 'string' ? { name: name.toLowerCase(), isSecret: auth.type === 'header' } : undefined;
}

/** Whether the request lacks the credential the node's auth looks for (401), rather than carrying a wrong one (403). */
function credentialMissing(parameters: Record<string, unknown>, headers: IncomingMessage['headers']): boolean {
  const credential = credentialHeader(parameters);
  return credential !== undefined && headers[credential.name] === undefined;
}

function sendAnswer(res: ServerResponse, answer: WebhookResponse, extra: Record<string, string>): void {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(answer.headers ?? {})) if (typeof v === 'string' && /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(k)) headers[k.toLowerCase()] = v;
  delete headers['content-length'];
  delete headers['transfer-encoding'];
  const status = Number.isInteger(answer.status) && answer.status >= 100 && answer.status <= 599 ? answer.status : 200;
  if (typeof answer.body === 'string') {
    headers['content-type'] ??= 'text/plain; charset=utf-8';
    const payload = Buffer.from(answer.body, 'utf8');
    res.writeHead(status, { ...headers, ...extra, 'content-length': String(payload.length) });
    return void res.end(payload);
  }
  const payload = Buffer.from(JSON.stringify(answer.body ?? null), 'utf8');
  headers['content-type'] ??= 'application/json; charset=utf-8';
  res.writeHead(status, { ...headers, ...extra, 'content-length': String(payload.length) });
  res.end(payload);
}

import { newId } from '../../../core/ids';
import { InternalClient } from '../../../core/internal-client';
import type { Logger } from '../../../core/logger';
import { serviceBaseUrl } from '../../../core/subgraph';
import type { NodeServices } from '../../../subgraphs/workflows/nodes/types';
import type { ProcessorContext } from '../types';

/** The exec route's default command timeout, when the node gives none (POST /sandboxes/{id}/exec's). */
const DEFAULT_EXEC_TIMEOUT_SECONDS = 60;
/** Beyond the command's own timeout: the engine's kill, the output's way back, the HTTP round trip. */
const EXEC_MARGIN_MS = 30_000;
/** Longest wait for one chat: an upstream's own timeout is at most 600 s; the execution's timeout (the signal) usually ends it first. */
const CHAT_TIMEOUT_MS = 600_000;

/**
 * Services nodes use to reach other domains: the compute and ai subgraphs' internal routes
 * (`workflows/sandbox-exec`, `workflows/chat`), called with a signed envelope without a
 * principal. Those routes check that the sandbox, pool or upstream belongs to the execution's
 * workspace; their domain errors (404, 409, 400) arrive with their messages, which become the
 * step's error. The node's signal aborts the call (cancel, execution timeout).
 */
export function internalNodeServices(ctx: ProcessorContext, logger: Logger): NodeServices {
  // Built on first use: the URLs of subgraphs in this process are known once they listen.
  const clients = new Map<'compute' | 'ai', InternalClient>();
  const client = (name: 'compute' | 'ai'): InternalClient => {
    let found = clients.get(name);
    if (!found) {
      found = new InternalClient({ baseUrl: serviceBaseUrl(ctx.runtime, name), internalSigningSecret: ctx.config.internalSigningSecret, logger, serviceName: `${name} service` });
      clients.set(name, found);
    }
    return found;
  };
  const request = () => ({ requestId: newId('req'), clientIp: 'worker' });

  return {
    sandboxExec({ signal, ...input }) {
      const timeoutMs = (input.timeoutSeconds ?? DEFAULT_EXEC_TIMEOUT_SECONDS) * 1000 + EXEC_MARGIN_MS;
      return client('compute').call('workflows/sandbox-exec', input, request(), { signal, timeoutMs });
    },
    aiChat({ signal, ...input }) {
      return client('ai').call('workflows/chat', input, request(), { signal, timeoutMs: CHAT_TIMEOUT_MS });
    },
  };
}

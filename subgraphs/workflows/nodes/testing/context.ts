import { resolveParameters } from '../expressions';
import type { Item, NodeExecutionContext, NodeServices, NodeType } from '../types';

/** A fake execution context for executor tests: resolves expressions the way the engine does. */
export function fakeContext(type: NodeType, parameters: Record<string, unknown>, over: Partial<NodeExecutionContext> & { items?: Item[] } = {}): NodeExecutionContext {
  const items = over.items ?? [];
  const inputs = over.inputs ?? [items];
  const scope = over.scope ?? {
    $node: {},
    $trigger: {},
    $execution: { id: 'exe_1', workflowId: 'wf_1', mode: 'manual' },
    $now: '2025-01-01T00:00:00.000Z',
  };
  const services: NodeServices = over.services ?? {
    async sandboxExec() { throw new Error('no sandbox service'); },
    async aiChat() { throw new Error('no ai service'); },
  };
  return {
    executionId: 'exe_1',
    workspaceId: 'ws_1',
    node: { id: 'n1', type: type.definition.type, name: 'Node', parameters },
    parametersFor: (i) => resolveParameters(parameters, { ...scope, $json: items[i]?.json ?? {} }, { skip: type.definition.noExpressions }),
    rawParameters: parameters,
    items,
    inputs,
    scope,
    signal: over.signal ?? new AbortController().signal,
    services,
    remainingMs: over.remainingMs ?? 60_000,
  };
}

import { ValidationError } from '../../../core/errors';
import { createNodeRegistry, TRUSTED_PLUGINS_HELP } from './registry';
import { fakeContext } from './testing/context';
import type { WorkflowGraph } from './types';
import type { WorkflowNode } from '../model/entities';

const registry = createNodeRegistry();

function graph(nodes: WorkflowNode[], connections: WorkflowGraph['connections'] = [], settings: WorkflowGraph['settings'] = {}): WorkflowGraph {
  return { nodes, connections, settings };
}

const trigger: WorkflowNode = { id: 'n1', type: 'webhook', name: 'Hook', parameters: { method: 'POST', path: 'in' } };
const fetchNode: WorkflowNode = { id: 'n2', type: 'http-request', name: 'Fetch', parameters: { url: 'https://example.com/{{ $json.body.id }}' } };

function validationError(g: WorkflowGraph): ValidationError {
  try {
    registry.validate(g);
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    return err as ValidationError;
  }
  throw new Error('expected a ValidationError');
}

describe('node registry', () => {
  it('lists the built-ins with schemas closed to unknown parameters', () => {
    const types = registry.list().map((d) => d.type);
    expect(types).toEqual(expect.arrayContaining(['manual-trigger', 'webhook', 'schedule', 'http-request', 'code', 'if', 'switch', 'set', 'merge', 'wait', 'respond-to-webhook', 'sandbox-exec', 'ai-chat']));
    for (const d of registry.list()) {
      expect(d.parametersSchema.additionalProperties).toBe(false);
      expect(d.description).toBeTruthy();
    }
    expect(registry.get('if')?.definition.outputNames).toEqual(['true', 'false']);
    expect(registry.get('nope')).toBeUndefined();
  });

  it('accepts a good graph', () => {
    expect(() => registry.validate(graph([
      trigger,
      fetchNode,
      { id: 'n3', type: 'if', name: 'Ok?', parameters: { conditions: [{ left: '{{ $json.status }}', operator: 'equals', right: 200 }] } },
      { id: 'n4', type: 'switch', name: 'Route', parameters: { rules: [{ left: '{{ $json.a }}', operator: 'gt', right: 1 }, { left: '{{ $json.a }}', operator: 'lt', right: 0 }], fallback: true } },
      { id: 'n5', type: 'set', name: 'Set', parameters: { values: { 'a.b': '{{ $json.x }}', c: 1 } } },
      { id: 'n6', type: 'code', name: 'Code', parameters: { code: 'return items.map(i => ({ ...i, ok: {{}} }))' } },
      { id: 'n7', type: 'respond-to-webhook', name: 'Reply', parameters: { status: 201 } },
      { id: 'n8', type: 'schedule', name: 'Every 5', parameters: { cron: '*/5 * * * *', timezone: 'Europe/Paris' } },
      { id: 'n9', type: 'wait', name: 'Wait', parameters: { seconds: 60 } },
    ], [
      { from: 'n1', to: 'n2' }, { from: 'n2', to: 'n3' }, { from: 'n3', fromOutput: 1, to: 'n4' }, { from: 'n4', fromOutput: 2, to: 'n5' },
      { from: 'n5', to: 'n6' }, { from: 'n6', to: 'n7' }, { from: 'n8', to: 'n9' }, { from: 'n9', to: 'n2' },
    ], { timeoutSeconds: 60, retries: 3, concurrency: 5 }))).not.toThrow();
  });

  it('rejects unknown types', () => {
    const e = validationError(graph([{ id: 'n1', type: 'teleport', name: 'Beam', parameters: {} }]));
    expect(e.message).toBe('Node "Beam" (n1): unknown node type "teleport"');
    expect(e.details).toMatchObject({ nodeId: 'n1', field: 'type' });
  });

  it('names the node and the field of bad parameters', () => {
    let e = validationError(graph([trigger, { ...fetchNode, parameters: { url: 42 } }]));
    expect(e.message).toBe('Node "Fetch" (n2): parameters.url must be a string');
    expect(e.details).toMatchObject({ nodeId: 'n2', field: 'parameters.url' });

    e = validationError(graph([{ ...fetchNode, parameters: {} }]));
    expect(e.details).toMatchObject({ nodeId: 'n2', field: 'parameters.url' });
    expect(e.message).toMatch(/parameters.url is required/);

    e = validationError(graph([{ ...fetchNode, parameters: { url: 'https://x', bogus: 1 } }]));
    expect(e.details).toMatchObject({ field: 'parameters.bogus' });

    e = validationError(graph([{ ...fetchNode, parameters: { url: 'ftp://x' } }]));
    expect(e.message).toBe('Node "Fetch" (n2): parameters.url must use http or https');

    e = validationError(graph([{ id: 'i', type: 'if', name: 'If', parameters: { conditions: [{ left: 1, operator: 'like' }] } }]));
    expect(e.details).toMatchObject({ field: 'parameters.conditions[0].operator' });
    expect(e.message).toMatch(/must be one of/);

    e = validationError(graph([{ id: 'w', type: 'wait', name: 'W', parameters: {} }]));
    expect(e.message).toBe('Node "W" (w): parameters needs exactly one of: seconds, until');

    e = validationError(graph([{ id: 'c', type: 'code', name: 'C', parameters: { code: 'return 1', memoryMb: 4 } }]));
    expect(e.details).toMatchObject({ field: 'parameters.memoryMb' });

    e = validationError(graph([{ id: 'h', type: 'webhook', name: 'H', parameters: { auth: { type: 'hmac' } } }]));
    expect(e.details).toMatchObject({ field: 'parameters.auth' });

    e = validationError(graph([{ id: 's', type: 'set', name: 'S', parameters: { values: { '__proto__.x': 1 } } }]));
    expect(e.details).toMatchObject({ nodeId: 's' });
  });

  it('rejects bad expressions at save time (injection)', () => {
    const e = validationError(graph([{ ...fetchNode, parameters: { url: 'https://x/{{ constructor.constructor("return process")() }}' } }]));
    expect(e.details).toMatchObject({ nodeId: 'n2', field: 'parameters.url' });
    expect(e.message).toMatch(/^Node "Fetch" \(n2\): parameters.url Invalid expression/);
  });

  it('rejects bad cron and time zones', () => {
    let e = validationError(graph([{ id: 's', type: 'schedule', name: 'S', parameters: { cron: 'every minute' } }]));
    expect(e.details).toMatchObject({ nodeId: 's', field: 'parameters.cron' });
    e = validationError(graph([{ id: 's', type: 'schedule', name: 'S', parameters: { cron: '61 * * * *' } }]));
    expect(e.details).toMatchObject({ field: 'parameters.cron' });
    e = validationError(graph([{ id: 's', type: 'schedule', name: 'S', parameters: { cron: '* * * * *', timezone: 'Mars/Base' } }]));
    expect(e.details).toMatchObject({ field: 'parameters.timezone' });
  });

  it('checks ids, names and sizes', () => {
    expect(validationError(graph([])).details).toMatchObject({ field: 'nodes' });
    let e = validationError(graph([trigger, { ...fetchNode, id: 'n1' }]));
    expect(e.message).toMatch(/id "n1" is used by another node/);
    e = validationError(graph([{ ...trigger, id: 'bad id!' }]));
    expect(e.details).toMatchObject({ field: 'id' });
    e = validationError(graph([{ ...trigger, name: ' ' }]));
    expect(e.details).toMatchObject({ field: 'name' });
    e = validationError(graph([{ ...trigger, name: 'x'.repeat(129) }]));
    expect(e.details).toMatchObject({ field: 'name' });
    e = validationError(graph([trigger, { ...fetchNode, name: 'Hook' }]));
    expect(e.details).toMatchObject({ nodeId: 'n2', field: 'name' });
    const many = Array.from({ length: 201 }, (_, i) => ({ id: `s${i}`, type: 'set', name: `S${i}`, parameters: { values: {} } }));
    expect(validationError(graph(many)).message).toMatch(/at most 200 nodes/);
  });

  it('checks connections: dangling, output index, triggers, cycles', () => {
    let e = validationError(graph([trigger, fetchNode], [{ from: 'n1', to: 'ghost' }]));
    expect(e.details).toMatchObject({ field: 'connections[0].to' });
    e = validationError(graph([trigger, fetchNode], [{ from: 'ghost', to: 'n2' }]));
    expect(e.details).toMatchObject({ field: 'connections[0].from' });
    e = validationError(graph([trigger, fetchNode], [{ from: 'n1', fromOutput: 1, to: 'n2' }]));
    expect(e.message).toBe('Node "Hook" (n1): output 1 does not exist (it has 1)');
    expect(e.details).toMatchObject({ nodeId: 'n1', field: 'connections[0].fromOutput' });
    const sw: WorkflowNode = { id: 'sw', type: 'switch', name: 'Sw', parameters: { rules: [{ left: 1, operator: 'exists' }, { left: 1, operator: 'exists' }] } };
    expect(() => registry.validate(graph([sw, fetchNode], [{ from: 'sw', fromOutput: 2, to: 'n2' }]))).not.toThrow();
    expect(validationError(graph([sw, fetchNode], [{ from: 'sw', fromOutput: 3, to: 'n2' }])).message).toMatch(/output 3 does not exist \(it has 3\)/);
    e = validationError(graph([trigger, fetchNode], [{ from: 'n2', to: 'n1' }]));
    expect(e.message).toMatch(/trigger cannot have incoming/);
    const a: WorkflowNode = { id: 'a', type: 'set', name: 'A', parameters: { values: {} } };
    const b: WorkflowNode = { id: 'b', type: 'set', name: 'B', parameters: { values: {} } };
    const c: WorkflowNode = { id: 'c', type: 'set', name: 'C', parameters: { values: {} } };
    e = validationError(graph([a, b, c], [{ from: 'a', to: 'b' }, { from: 'b', to: 'c' }, { from: 'c', to: 'a' }]));
    expect(e.message).toMatch(/cycle/);
    expect(validationError(graph([a], [{ from: 'a', to: 'a' }])).message).toMatch(/cycle/);
    // A diamond is not a cycle.
    const m: WorkflowNode = { id: 'm', type: 'merge', name: 'M', parameters: {} };
    expect(() => registry.validate(graph([a, b, c, m], [{ from: 'a', to: 'b' }, { from: 'a', to: 'c' }, { from: 'b', to: 'm' }, { from: 'c', to: 'm' }]))).not.toThrow();
  });

  it('checks settings ranges', () => {
    expect(validationError(graph([trigger], [], { timeoutSeconds: 0 })).details).toMatchObject({ field: 'settings.timeoutSeconds' });
    expect(validationError(graph([trigger], [], { timeoutSeconds: 86_401 })).details).toMatchObject({ field: 'settings.timeoutSeconds' });
    expect(validationError(graph([trigger], [], { retries: 11 })).details).toMatchObject({ field: 'settings.retries' });
    expect(validationError(graph([trigger], [], { concurrency: 1.5 })).details).toMatchObject({ field: 'settings.concurrency' });
    expect(validationError(graph([trigger], [], { bogus: 1 } as never)).details).toMatchObject({ field: 'settings.bogus' });
  });

  it('requires unique webhook routes per (method, path)', () => {
    const h2: WorkflowNode = { id: 'h2', type: 'webhook', name: 'Hook 2', parameters: { method: 'POST', path: '/in/' } };
    expect(validationError(graph([trigger, h2])).details).toMatchObject({ nodeId: 'h2', field: 'parameters.path' });
    expect(() => registry.validate(graph([trigger, { ...h2, parameters: { method: 'GET', path: 'in' } }]))).not.toThrow();
    expect(validationError(graph([trigger, { ...h2, parameters: { method: '*', path: 'in' } }])).message).toMatch(/already used/);
    expect(() => registry.validate(graph([trigger, { ...h2, parameters: { method: 'POST', path: 'other' } }]))).not.toThrow();
  });

  it('loads only trusted plugins, namespaced', async () => {
    const loader = jest.fn((pkg: string) => {
      if (pkg === '@acme/nodes') return require('./testing/example-plugin');
      throw new Error(`not installed: ${pkg}`);
    });
    const reg = createNodeRegistry({ trustedPlugins: ['@acme/nodes'], pluginLoader: loader });
    expect(loader).toHaveBeenCalledTimes(1);
    expect(loader).toHaveBeenCalledWith('@acme/nodes');
    const shout = reg.get('@acme/nodes/shout');
    expect(shout?.definition).toMatchObject({ type: '@acme/nodes/shout', plugin: '@acme/nodes' });
    expect(reg.get('shout')).toBeUndefined();
    expect(reg.list().some((d) => d.type === '@acme/nodes/shout')).toBe(true);

    // A graph using an untrusted plugin's type is refused without loading anything.
    expect(() => reg.validate(graph([{ id: 'x', type: '@evil/nodes/pwn', name: 'X', parameters: {} }]))).toThrow(/unknown node type/);
    expect(() => reg.validate(graph([{ id: 'x', type: '@acme/nodes/shout', name: 'X', parameters: { text: 1 } }]))).toThrow('Node "X" (x): parameters.text must be a string');
    expect(loader).toHaveBeenCalledTimes(1);
    expect(loader.mock.calls.map((c) => c[0])).not.toContain('@evil/nodes');

    const r = await shout!.executor.execute(fakeContext(shout!, { text: 'hi {{ $json.who }}' }, { items: [{ json: { who: 'bob' } }] }));
    expect(r).toEqual({ kind: 'output', outputs: [[{ json: { text: 'HI BOB' } }]] });

    // The default loader never requires anything without trusted plugins.
    expect(() => createNodeRegistry({ trustedPlugins: ['@missing/pkg'], pluginLoader: loader })).toThrow(TRUSTED_PLUGINS_HELP);
    const bad = jest.fn(() => ({ default: 'nope' }));
    expect(() => createNodeRegistry({ trustedPlugins: ['bad'], pluginLoader: bad })).toThrow(/exports no node types/);
  });
});

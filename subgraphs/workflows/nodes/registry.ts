import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { ValidationError } from '../../../core/errors';
import type { WorkflowNode } from '../model/entities';
import { BUILTIN_NODE_TYPES } from './builtins';
import { webhookRoute } from './builtins/webhook';
import { findExpressionError } from './expressions';
import type { NodeDefinition, NodeRegistry, NodeType, WorkflowGraph } from './types';

export const NODE_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const MAX_NODES = 200;
export const MAX_NODE_NAME = 128;
export const MAX_CONNECTIONS = 1000;
export const SETTINGS_RANGES = {
  timeoutSeconds: [1, 86_400],
  retries: [1, 10],
  concurrency: [1, 1000],
} as const;

export const TRUSTED_PLUGINS_HELP = [
  'Workflow node plugins are npm packages installed next to the platform whose default export',
  '(or `nodeTypes` export) is an array of NodeType ({ definition, executor }, see',
  'subgraphs/workflows/nodes/types.ts). Only packages listed as trusted are ever loaded (require()d):',
  'a plugin runs with the full rights of the worker process, so list only packages you have reviewed.',
  'Their types are namespaced `<package>/<type>` (e.g. `@acme/nodes/crm-lookup`).',
].join(' ');

const PLUGIN_TYPE_PATTERN = /^[a-z0-9][a-z0-9-]{0,63}$/;

export interface NodeRegistryOptions {
  /** Package names whose node types are loaded; nothing else is ever required. */
  trustedPlugins?: string[];
  /** Loads a package (default: require). Tests pass a loader for fixture modules. */
  pluginLoader?: (pkg: string) => unknown;
}

interface Entry {
  type: NodeType;
  validate: ValidateFunction;
}

function fail(message: string, nodeId: string | null, field: string | null, extra?: Record<string, unknown>): never {
  throw new ValidationError(message, { nodeId, field, ...extra });
}

function nodeLabel(node: { id?: unknown; name?: unknown }): string {
  return `Node "${typeof node.name === 'string' ? node.name : ''}" (${String(node.id)})`;
}

function pointerToField(instancePath: string): string {
  let out = 'parameters';
  for (const raw of instancePath.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(seg) ? `[${seg}]` : `.${seg}`;
  }
  return out;
}

const ARTICLE: Record<string, string> = { string: 'a string', number: 'a number', integer: 'an integer', boolean: 'a boolean', object: 'an object', array: 'an array', null: 'null' };

/** One readable `{ field, message }` from ajv's errors (the most specific one). */
function describeAjvErrors(errors: ErrorObject[]): { field: string; message: string } {
  // Prefer errors outside oneOf/anyOf branches (those are noisy) unless only they exist.
  const combinators = new Set(['oneOf', 'anyOf', 'if']);
  const branchPaths = errors.filter((e) => combinators.has(e.keyword)).map((e) => e.schemaPath.replace(/\/(oneOf|anyOf|if)$/, '/$1/'));
  const direct = errors.filter((e) => !combinators.has(e.keyword) && !branchPaths.some((p) => e.schemaPath.startsWith(p)));
  const e = direct[0] ?? errors.find((x) => combinators.has(x.keyword)) ?? errors[0];
  let field = pointerToField(e.instancePath);
  let message: string;
  switch (e.keyword) {
    case 'type': {
      const t = (e.params as { type: string | string[] }).type;
      message = `must be ${(Array.isArray(t) ? t : String(t).split(',')).map((x) => ARTICLE[x] ?? x).join(' or ')}`;
      break;
    }
    case 'required':
      field = `${field}.${(e.params as { missingProperty: string }).missingProperty}`;
      message = 'is required';
      break;
    case 'additionalProperties':
      field = `${field}.${(e.params as { additionalProperty: string }).additionalProperty}`;
      message = 'is not a known parameter';
      break;
    case 'enum':
      message = `must be one of: ${((e.params as { allowedValues: unknown[] }).allowedValues).map((v) => JSON.stringify(v)).join(', ')}`;
      break;
    case 'const':
      message = `must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`;
      break;
    case 'oneOf':
    case 'anyOf': {
      // A root-level oneOf of `required` branches ("seconds or until").
      const reqs = errors.filter((x) => x.keyword === 'required' && x.schemaPath.startsWith(e.schemaPath)).map((x) => (x.params as { missingProperty: string }).missingProperty);
      message = reqs.length > 1 && e.instancePath === '' ? `needs exactly one of: ${reqs.join(', ')}` : 'does not match any allowed form';
      break;
    }
    default:
      message = e.message ?? 'is invalid';
  }
  return { field, message };
}

function checkNodeType(type: unknown, pkg: string): NodeType {
  const t = type as NodeType;
  if (!t || typeof t !== 'object' || !t.definition || typeof t.definition !== 'object' || !t.executor || typeof t.executor.execute !== 'function') {
    throw new Error(`Plugin ${pkg}: every node type must be { definition, executor: { execute() } }`);
  }
  if (typeof t.definition.type !== 'string' || !PLUGIN_TYPE_PATTERN.test(t.definition.type)) {
    throw new Error(`Plugin ${pkg}: node type "${String(t.definition.type)}" must match ${PLUGIN_TYPE_PATTERN}`);
  }
  return t;
}

/** Creates the registry of built-in node types plus those of the trusted plugin packages. */
export function createNodeRegistry(options: NodeRegistryOptions = {}): NodeRegistry {
  // strictTypes off: schemas use `required` in oneOf branches without repeating `type`.
  const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, strictRequired: false });
  const entries = new Map<string, Entry>();

  const add = (type: NodeType): void => {
    if (entries.has(type.definition.type)) throw new Error(`Node type ${type.definition.type} is registered twice`);
    let validate: ValidateFunction;
    try {
      validate = ajv.compile(type.definition.parametersSchema);
    } catch (err) {
      throw new Error(`Node type ${type.definition.type} has an invalid parametersSchema: ${(err as Error).message}`);
    }
    entries.set(type.definition.type, { type, validate });
  };

  for (const t of BUILTIN_NODE_TYPES) add(t);

  const loader = options.pluginLoader ?? ((pkg: string): unknown => require(pkg));
  for (const pkg of new Set(options.trustedPlugins ?? [])) {
    if (typeof pkg !== 'string' || !pkg.trim()) continue;
    let mod: unknown;
    try {
      mod = loader(pkg);
    } catch (err) {
      throw new Error(`Trusted workflow plugin ${pkg} could not be loaded: ${(err as Error).message}. ${TRUSTED_PLUGINS_HELP}`);
    }
    const m = mod as { default?: unknown; nodeTypes?: unknown } | unknown[];
    const list = Array.isArray(m) ? m : Array.isArray(m?.default) ? m.default : Array.isArray(m?.nodeTypes) ? m.nodeTypes : null;
    if (!list) throw new Error(`Trusted workflow plugin ${pkg} exports no node types. ${TRUSTED_PLUGINS_HELP}`);
    for (const raw of list) {
      const t = checkNodeType(raw, pkg);
      add({
        ...t,
        definition: { ...t.definition, type: `${pkg}/${t.definition.type}`, plugin: pkg, group: t.definition.group ?? 'integration' },
      });
    }
  }

  const definitions: NodeDefinition[] = [...entries.values()].map((e) => e.type.definition);

  const outputCount = (type: NodeType, parameters: Record<string, unknown>): number => {
    const o = type.definition.outputs;
    if (typeof o === 'number') return o;
    return type.outputCount ? type.outputCount(parameters) : 1;
  };

  const validate = (graph: WorkflowGraph): void => {
    if (!graph || typeof graph !== 'object') fail('A workflow graph is required', null, null);
    const { nodes, connections } = graph;
    const settings = graph.settings ?? {};
    if (!Array.isArray(nodes)) fail('nodes must be an array', null, 'nodes');
    if (!Array.isArray(connections)) fail('connections must be an array', null, 'connections');
    if (nodes.length === 0) fail('A workflow needs at least one node', null, 'nodes');
    if (nodes.length > MAX_NODES) fail(`A workflow has at most ${MAX_NODES} nodes (got ${nodes.length})`, null, 'nodes');
    if (connections.length > MAX_CONNECTIONS) fail(`A workflow has at most ${MAX_CONNECTIONS} connections`, null, 'connections');

    // Settings.
    if (typeof settings !== 'object' || Array.isArray(settings)) fail('settings must be an object', null, 'settings');
    for (const key of Object.keys(settings)) {
      if (!(key in SETTINGS_RANGES)) fail(`settings.${key} is not a known setting`, null, `settings.${key}`);
    }
    for (const [key, [min, max]] of Object.entries(SETTINGS_RANGES)) {
      const v = (settings as Record<string, unknown>)[key];
      if (v === undefined || v === null) continue;
      if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
        fail(`settings.${key} must be an integer from ${min} to ${max}`, null, `settings.${key}`);
      }
    }

    // Nodes.
    const byId = new Map<string, { node: WorkflowNode; type: NodeType }>();
    const names = new Map<string, string>();
    for (const node of nodes) {
      if (!node || typeof node !== 'object') fail('Every node must be an object', null, 'nodes');
      const id = node.id;
      if (typeof id !== 'string' || !NODE_ID_PATTERN.test(id)) {
        fail(`${nodeLabel(node)}: id must be 1–64 letters, digits, _ or -`, typeof id === 'string' ? id : null, 'id');
      }
      if (byId.has(id)) fail(`${nodeLabel(node)}: id "${id}" is used by another node`, id, 'id');
      if (typeof node.name !== 'string' || !node.name.trim()) fail(`${nodeLabel(node)}: name must not be empty`, id, 'name');
      if (node.name.length > MAX_NODE_NAME) fail(`${nodeLabel(node)}: name must be at most ${MAX_NODE_NAME} characters`, id, 'name');
      // Expressions address nodes by name ($node["Name"]), so names are unique too.
      const other = names.get(node.name);
      if (other !== undefined) fail(`${nodeLabel(node)}: name is also used by node ${other}`, id, 'name');
      names.set(node.name, id);
      if (typeof node.type !== 'string') fail(`${nodeLabel(node)}: type must be a string`, id, 'type');
      const entry = entries.get(node.type);
      if (!entry) fail(`${nodeLabel(node)}: unknown node type "${node.type}"`, id, 'type');
      const parameters = node.parameters ?? {};
      if (typeof parameters !== 'object' || Array.isArray(parameters)) fail(`${nodeLabel(node)}: parameters must be an object`, id, 'parameters');
      if (node.position !== undefined && (typeof node.position !== 'object' || node.position === null
        || typeof node.position.x !== 'number' || typeof node.position.y !== 'number'
        || !Number.isFinite(node.position.x) || !Number.isFinite(node.position.y))) {
        fail(`${nodeLabel(node)}: position must be { x, y } numbers`, id, 'position');
      }
      if (!entry.validate(parameters)) {
        const { field, message } = describeAjvErrors(entry.validate.errors ?? []);
        fail(`${nodeLabel(node)}: ${field} ${message}`, id, field);
      }
      const exprError = findExpressionError(parameters, 'parameters', entry.type.definition.noExpressions ?? []);
      if (exprError) fail(`${nodeLabel(node)}: ${exprError.field} ${exprError.message}`, id, exprError.field);
      for (const e of entry.type.validateParameters?.(parameters) ?? []) fail(`${nodeLabel(node)}: ${e.field} ${e.message}`, id, e.field);
      byId.set(id, { node, type: entry.type });
    }

    // Connections.
    const adjacency = new Map<string, string[]>([...byId.keys()].map((id) => [id, []]));
    const seen = new Set<string>();
    connections.forEach((c, i) => {
      const field = `connections[${i}]`;
      if (!c || typeof c !== 'object') fail(`${field} must be an object`, null, field);
      const from = byId.get(c.from);
      if (!from) fail(`${field}: from "${String(c.from)}" is not a node of this workflow`, null, `${field}.from`);
      const to = byId.get(c.to);
      if (!to) fail(`${field}: to "${String(c.to)}" is not a node of this workflow`, from.node.id, `${field}.to`);
      const out = c.fromOutput ?? 0;
      const count = outputCount(from.type, from.node.parameters ?? {});
      if (typeof out !== 'number' || !Number.isInteger(out) || out < 0 || out >= count) {
        fail(`${nodeLabel(from.node)}: output ${String(out)} does not exist (it has ${count})`, from.node.id, `${field}.fromOutput`);
      }
      if (to.type.definition.inputs === 0) {
        fail(`${nodeLabel(to.node)}: a trigger cannot have incoming connections`, to.node.id, `${field}.to`);
      }
      const key = `${c.from}\u0000${out}\u0000${c.to}`;
      if (seen.has(key)) fail(`${field}: duplicate connection ${c.from}[${out}] → ${c.to}`, from.node.id, field);
      seen.add(key);
      adjacency.get(c.from)!.push(c.to);
    });

    // Cycles (iterative DFS, colors).
    const color = new Map<string, 0 | 1 | 2>();
    for (const start of byId.keys()) {
      if (color.get(start)) continue;
      const stack: Array<[string, number]> = [[start, 0]];
      color.set(start, 1);
      while (stack.length) {
        const top = stack[stack.length - 1];
        const next = adjacency.get(top[0])![top[1]++];
        if (next === undefined) {
          color.set(top[0], 2);
          stack.pop();
          continue;
        }
        const c = color.get(next) ?? 0;
        if (c === 1) {
          const n = byId.get(next)!.node;
          fail(`${nodeLabel(n)}: connections form a cycle through this node`, n.id, 'connections');
        }
        if (c === 0) {
          color.set(next, 1);
          stack.push([next, 0]);
        }
      }
    }

    // Webhook routes: one trigger per (method, path); * overlaps every method.
    const routes = new Map<string, Array<{ method: string; node: WorkflowNode }>>();
    for (const { node, type } of byId.values()) {
      if (type.definition.trigger !== 'webhook') continue;
      const { method, path } = webhookRoute(node.parameters ?? {});
      const list = routes.get(path) ?? [];
      const clash = list.find((r) => r.method === method || r.method === '*' || method === '*');
      if (clash) {
        fail(`${nodeLabel(node)}: webhook ${method} /${path} is already used by node ${nodeLabel(clash.node)}`, node.id, 'parameters.path');
      }
      list.push({ method, node });
      routes.set(path, list);
    }
  };

  return {
    list: () => definitions.slice(),
    get: (type: string) => entries.get(type)?.type,
    validate,
  };
}

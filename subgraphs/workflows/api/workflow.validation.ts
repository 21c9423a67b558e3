import { ValidationError } from '../../../core/errors';
import type { WorkflowConnection, WorkflowNode, WorkflowSettings } from '../model/entities';
import type { NodeRegistry, WorkflowGraph } from '../nodes/types';

const MAX_NODES = 500;
const MAX_CONNECTIONS = 2000;
const MAX_NAME = 200;
const MAX_DESCRIPTION = 4000;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function fail(message: string, field: string, nodeId?: string): never {
  throw new ValidationError(message, nodeId ? { nodeId, field } : { field });
}

export function requireName(value: unknown, field = 'name'): string {
  if (typeof value !== 'string' || !value.trim()) fail(`${field} is required`, field);
  const name = value.trim();
  if (name.length > MAX_NAME) fail(`${field} must be at most ${MAX_NAME} characters`, field);
  return name;
}

export function optionalDescription(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string') fail('description must be a string', 'description');
  if (value.length > MAX_DESCRIPTION) fail(`description must be at most ${MAX_DESCRIPTION} characters`, 'description');
  return value;
}

/** `nodes`: an array of { id, type, name, parameters, position? }; each problem names the node and field. */
export function parseNodes(value: unknown): WorkflowNode[] {
  if (!Array.isArray(value)) fail('nodes must be an array of nodes', 'nodes');
  if (value.length > MAX_NODES) fail(`nodes may hold at most ${MAX_NODES} nodes`, 'nodes');
  return value.map((raw, i) => {
    const at = `nodes[${i}]`;
    if (!isObject(raw)) fail(`${at} must be an object`, at);
    const id = raw.id;
    if (typeof id !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(id)) fail(`${at}.id must be 1 to 64 letters, digits, "_" or "-"`, 'id', typeof id === 'string' ? id : undefined);
    if (typeof raw.type !== 'string' || !raw.type) fail(`Node ${id}: type is required`, 'type', id);
    const name = raw.name ?? id;
    if (typeof name !== 'string' || !name.trim() || name.length > MAX_NAME) fail(`Node ${id}: name must be a non-empty string of at most ${MAX_NAME} characters`, 'name', id);
    const parameters = raw.parameters ?? {};
    if (!isObject(parameters)) fail(`Node ${id}: parameters must be an object`, 'parameters', id);
    const node: WorkflowNode = { id, type: raw.type, name, parameters };
    if (raw.position !== undefined && raw.position !== null) {
      const p = raw.position;
      if (!isObject(p) || typeof p.x !== 'number' || typeof p.y !== 'number' || !Number.isFinite(p.x) || !Number.isFinite(p.y)) {
        fail(`Node ${id}: position must be { x: number, y: number }`, 'position', id);
      }
      node.position = { x: p.x as number, y: p.y as number };
    }
    const extra = Object.keys(raw).filter((k) => !['id', 'type', 'name', 'parameters', 'position'].includes(k));
    if (extra.length) fail(`Node ${id}: unknown field ${extra[0]}`, extra[0], id);
    return node;
  });
}

/** `connections`: an array of { from, fromOutput?, to }. */
export function parseConnections(value: unknown): WorkflowConnection[] {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) fail('connections must be an array of { from, fromOutput?, to }', 'connections');
  if (value.length > MAX_CONNECTIONS) fail(`connections may hold at most ${MAX_CONNECTIONS} entries`, 'connections');
  return value.map((raw, i) => {
    const at = `connections[${i}]`;
    if (!isObject(raw)) fail(`${at} must be an object`, at);
    if (typeof raw.from !== 'string' || !raw.from) fail(`${at}.from must be a node id`, `${at}.from`);
    if (typeof raw.to !== 'string' || !raw.to) fail(`${at}.to must be a node id`, `${at}.to`);
    const connection: WorkflowConnection = { from: raw.from, to: raw.to };
    if (raw.fromOutput !== undefined && raw.fromOutput !== null) {
      if (!Number.isInteger(raw.fromOutput) || (raw.fromOutput as number) < 0) fail(`${at}.fromOutput must be an integer of at least 0`, `${at}.fromOutput`);
      connection.fromOutput = raw.fromOutput as number;
    }
    return connection;
  });
}

export function parseSettings(value: unknown): WorkflowSettings {
  if (value === null || value === undefined) return {};
  if (!isObject(value)) fail('settings must be an object', 'settings');
  return value as WorkflowSettings;
}

/** Shapes first (this file), then the registry's checks (types, parameters, connections, cycles, settings). */
export function validateGraph(registry: NodeRegistry, input: { nodes: unknown; connections: unknown; settings: unknown }): WorkflowGraph {
  const graph: WorkflowGraph = { nodes: parseNodes(input.nodes), connections: parseConnections(input.connections), settings: parseSettings(input.settings) };
  registry.validate(graph);
  return graph;
}

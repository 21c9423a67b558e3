import { ValidationError } from '../../../core/errors';
import type { WorkflowNode } from '../model/entities';
import type { NodeRegistry } from '../nodes/types';

/**
 * Secret parameters (a webhook's expected header value, its HMAC secret): those a node type's
 * parameter schema marks `writeOnly`. They are stored and used, and never shown again: readers
 * get this placeholder in their place. Sending the placeholder back in an update keeps the stored
 * value, so a client may read a workflow, change something else and save it whole.
 */
export const SECRET_PLACEHOLDER = '<secret: stored, not shown>';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Paths of the `writeOnly` properties of a schema, through properties and oneOf/anyOf/allOf branches. */
function secretPaths(schema: unknown, at: string[] = [], out: string[][] = []): string[][] {
  if (!isObject(schema)) return out;
  if (schema.writeOnly === true && at.length && !out.some((p) => p.join('.') === at.join('.'))) out.push(at);
  if (isObject(schema.properties)) for (const [key, sub] of Object.entries(schema.properties)) secretPaths(sub, [...at, key], out);
  for (const branch of ['oneOf', 'anyOf', 'allOf'] as const) {
    const list = schema[branch];
    if (Array.isArray(list)) for (const sub of list) secretPaths(sub, at, out);
  }
  return out;
}

export class SecretParameters {
  private readonly byType = new Map<string, string[][]>();

  constructor(private readonly registry: NodeRegistry) {}

  /** The nodes as readers see them: every secret string replaced by the placeholder. */
  redact(nodes: WorkflowNode[]): WorkflowNode[] {
    return nodes.map((node) => {
      const paths = this.pathsOf(node.type);
      if (!paths.length) return node;
      let parameters = node.parameters;
      for (const path of paths) {
        if (typeof valueAt(parameters, path) !== 'string') continue;
        parameters = withValueAt(parameters, path, SECRET_PLACEHOLDER);
      }
      return parameters === node.parameters ? node : { ...node, parameters };
    });
  }

  /**
   * The nodes to store: a placeholder sent back is replaced by the value stored for the same node
   * (same id and type) at the same place. A placeholder with nothing stored behind it (a new node,
   * another type, a create) is a 400 naming the node and field rather than a secret of that text.
   */
  restore(nodes: WorkflowNode[], previous: WorkflowNode[]): WorkflowNode[] {
    return nodes.map((node) => {
      let parameters = node.parameters;
      for (const path of this.pathsOf(node.type)) {
        if (valueAt(parameters, path) !== SECRET_PLACEHOLDER) continue;
        const before = previous.find((p) => p.id === node.id && p.type === node.type);
        const stored = before ? valueAt(before.parameters, path) : undefined;
        if (typeof stored !== 'string' || stored === SECRET_PLACEHOLDER) {
          throw new ValidationError(`Node ${node.id}: parameters.${path.join('.')} is the placeholder of a stored secret, and this node has none stored there; send the secret itself`, {
            nodeId: node.id,
            field: `parameters.${path.join('.')}`,
          });
        }
        parameters = withValueAt(parameters, path, stored);
      }
      return parameters === node.parameters ? node : { ...node, parameters };
    });
  }

  private pathsOf(type: string): string[][] {
    let paths = this.byType.get(type);
    if (!paths) {
      const definition = this.registry.get(type)?.definition;
      paths = definition ? secretPaths(definition.parametersSchema) : [];
      this.byType.set(type, paths);
    }
    return paths;
  }
}

function valueAt(root: unknown, path: string[]): unknown {
  let at = root;
  for (const key of path) {
    if (!isObject(at)) return undefined;
    at = at[key];
  }
  return at;
}

/** A copy of `root` with `value` at `path` (which exists): the objects along the path are copied, the rest shared. */
function withValueAt(root: Record<string, unknown>, path: string[], value: unknown): Record<string, unknown> {
  const [key, ...rest] = path;
  return { ...root, [key]: rest.length ? withValueAt(root[key] as Record<string, unknown>, rest, value) : value };
}

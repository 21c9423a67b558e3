import { decrypt, encrypt } from '../../../core/crypto';
import { ValidationError } from '../../../core/errors';
import type { WorkflowNode } from '../model/entities';
import type { NodeRegistry } from '../nodes/types';

/**
 * Secret parameters (a webhook's expected header value, its HMAC secret): those a node type's
 * parameter schema marks `writeOnly`.
 * - Stored sealed: AES-256-GCM under SECRETS_ENCRYPTION_KEY, bound (AAD) to the workflow, node and
 *   parameter, so a sealed value copied elsewhere does not open. Executions' definition snapshots
 *   and job data carry the sealed form too; the webhook route and the engine open them to use them.
 * - Never shown again: readers get SECRET_PLACEHOLDER in their place. Sending the placeholder
 *   back in an update keeps the stored value, so a client may read a workflow, change something
 *   else and save it whole.
 * - Definitions of in-memory executions are not stored, and not sealed.
 */
export const SECRET_PLACEHOLDER = '<secret: stored, not shown>';
const SEALED = 'sealed:';

/** A sealed secret that does not open (another key, or copied from elsewhere). */
export class SealedSecretError extends Error {
  constructor(readonly nodeId: string, readonly field: string) {
    super(`The stored secret parameters.${field} of node ${nodeId} cannot be opened (sealed under another key, or copied from elsewhere): set it again`);
  }
}

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

  /** `key`: 32 bytes (config.secretsEncryptionKey). */
  constructor(
    private readonly registry: NodeRegistry,
    private readonly key: Buffer,
  ) {}

  /** The nodes to store for `workflowId`: every secret string sealed (a fresh nonce each time). */
  seal(nodes: WorkflowNode[], workflowId: string): WorkflowNode[] {
    return this.mapSecrets(nodes, (node, path, value) => `${SEALED}${encrypt(this.key, value, aadOf(workflowId, node.id, path))}`);
  }

  /** One stored node's parameters with its sealed secrets opened, to use them. Throws SealedSecretError. */
  open(node: WorkflowNode, workflowId: string): Record<string, unknown> {
    return this.mapSecrets([node], (n, path, value) => {
      const opened = this.unseal(value, workflowId, n.id, path);
      if (opened === null) throw new SealedSecretError(n.id, path.join('.'));
      return opened;
    })[0].parameters;
  }

  /**
   * Stored nodes with their secrets opened, for an update to restore from and seal again. One that
   * no longer opens counts as none stored (the placeholder): the update must send it anew.
   */
  openAll(nodes: WorkflowNode[], workflowId: string): WorkflowNode[] {
    return this.mapSecrets(nodes, (node, path, value) => this.unseal(value, workflowId, node.id, path) ?? SECRET_PLACEHOLDER);
  }

  /** A stored value opened: a sealed one decrypted (null when it does not open), any other as it is. */
  private unseal(value: string, workflowId: string, nodeId: string, path: string[]): string | null {
    if (!value.startsWith(SEALED)) return value;
    try {
      return decrypt(this.key, value.slice(SEALED.length), aadOf(workflowId, nodeId, path)).toString('utf8');
    } catch {
      return null;
    }
  }

  /** `nodes` with `fn` applied to every secret string; untouched nodes are returned as they are. */
  private mapSecrets(nodes: WorkflowNode[], fn: (node: WorkflowNode, path: string[], value: string) => string): WorkflowNode[] {
    return nodes.map((node) => {
      let parameters = node.parameters;
      for (const path of this.pathsOf(node.type)) {
        const value = valueAt(parameters, path);
        if (typeof value !== 'string') continue;
        const next = fn(node, path, value);
        if (next !== value) parameters = withValueAt(parameters, path, next);
      }
      return parameters === node.parameters ? node : { ...node, parameters };
    });
  }

  /** The nodes as readers see them: every secret string replaced by the placeholder. */
  redact(nodes: WorkflowNode[]): WorkflowNode[] {
    return this.mapSecrets(nodes, () => SECRET_PLACEHOLDER);
  }

  /**
   * The nodes to seal and store: a placeholder sent back is replaced by the value stored for the
   * same node (same id and type) at the same place (`previous`: opened, see openAll). A
   * placeholder with nothing stored behind it (a new node, another type, a create) is a 400
   * naming the node and field rather than a secret of that text.
   */
  restore(nodes: WorkflowNode[], previous: WorkflowNode[]): WorkflowNode[] {
    return this.mapSecrets(nodes, (node, path, value) => {
      if (value !== SECRET_PLACEHOLDER) return value;
      const before = previous.find((p) => p.id === node.id && p.type === node.type);
      const stored = before ? valueAt(before.parameters, path) : undefined;
      if (typeof stored !== 'string' || stored === SECRET_PLACEHOLDER) {
        throw new ValidationError(`Node ${node.id}: parameters.${path.join('.')} is the placeholder of a stored secret, and this node has none stored there; send the secret itself`, {
          nodeId: node.id,
          field: `parameters.${path.join('.')}`,
        });
      }
      return stored;
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

function aadOf(workflowId: string, nodeId: string, path: string[]): string {
  return `workflow-secret:${workflowId}:${nodeId}:${path.join('.')}`;
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

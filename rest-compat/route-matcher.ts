/**
 * Path matching over a segment trie built once at startup. Literal segments win over `{param}`
 * segments, which win over a trailing `*`; among the paths that match, the first whose methods
 * include the request's method is chosen (so `GET /workflows/node-definitions` is the literal
 * route, not `GET /workflows/{id}`).
 */
export interface RouteMatch<T> {
  /** The entry for the request's method, or undefined when the path is known but the method is not. */
  entry?: T;
  /** Path parameters, decoded. */
  params: Record<string, string>;
  /** Every method the matched path answers to, for `Allow`. */
  methods: string[];
}

interface TrieNode<T> {
  literal: Map<string, TrieNode<T>>;
  param?: { name: string; node: TrieNode<T> };
  /** A trailing `*`: one or more further segments. */
  wildcard?: Map<string, T>;
  /** Entries by method (`*` for any) of the path that ends here. */
  methods?: Map<string, T>;
}

export class MalformedPathError extends Error {
  override name = 'MalformedPathError';
}

export class RouteMatcher<T> {
  private readonly root: TrieNode<T> = newNode();

  /** Adds `method path` (spec form: `/a/{b}/c`, `/a/*`); throws on a duplicate. */
  add(method: string, path: string, entry: T): void {
    let node = this.root;
    const segments = splitPath(path);
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i];
      if (segment === '*') {
        if (i !== segments.length - 1) throw new Error(`"*" must be the last segment of ${path}`);
        node.wildcard ??= new Map();
        setOnce(node.wildcard, method, entry, path);
        return;
      }
      const param = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(segment);
      if (param) {
        if (node.param && node.param.name !== param[1]) {
          throw new Error(`${path}: parameter {${param[1]}} conflicts with {${node.param.name}} at the same position`);
        }
        node.param ??= { name: param[1], node: newNode() };
        node = node.param.node;
      } else {
        let next = node.literal.get(segment);
        if (!next) node.literal.set(segment, (next = newNode()));
        node = next;
      }
    }
    node.methods ??= new Map();
    setOnce(node.methods, method, entry, path);
  }

  /**
   * Matches a request path (no query string, raw percent-encoding) for a method; undefined when no
   * path matches. Throws MalformedPathError on bad percent-encoding in a parameter.
   */
  match(method: string, path: string): RouteMatch<T> | undefined {
    const segments = path.split('/');
    // A path starts with '/', so segments[0] is ''; empty segments elsewhere match nothing.
    let fallback: RouteMatch<T> | undefined;
    const params: string[] = [];
    const names: string[] = [];

    const visit = (node: TrieNode<T>, index: number): RouteMatch<T> | undefined => {
      if (index === segments.length) {
        if (!node.methods) return undefined;
        return this.found(node.methods, method, names, params, (m) => (fallback ??= m));
      }
      const segment = segments[index];
      if (segment === '') return undefined;
      const literal = node.literal.get(segment);
      if (literal) {
        const hit = visit(literal, index + 1);
        if (hit) return hit;
      }
      if (node.param) {
        names.push(node.param.name);
        params.push(segment);
        const hit = visit(node.param.node, index + 1);
        if (hit) return hit;
        names.pop();
        params.pop();
      }
      if (node.wildcard) return this.found(node.wildcard, method, names, params, (m) => (fallback ??= m));
      return undefined;
    };

    return visit(this.root, 1) ?? fallback;
  }

  private found(
    methods: Map<string, T>,
    method: string,
    names: string[],
    values: string[],
    remember: (m: RouteMatch<T>) => void,
  ): RouteMatch<T> | undefined {
    const entry = methods.get(method) ?? methods.get('*');
    const match = { entry, params: decodeParams(names, values), methods: [...methods.keys()] };
    if (entry) return match;
    remember(match);
    return undefined;
  }
}

function decodeParams(names: string[], values: string[]): Record<string, string> {
  const params: Record<string, string> = {};
  for (let i = 0; i < names.length; i++) {
    try {
      params[names[i]] = values[i].includes('%') ? decodeURIComponent(values[i]) : values[i];
    } catch {
      throw new MalformedPathError(`Path parameter "${names[i]}" is not valid percent-encoding`);
    }
  }
  return params;
}

function splitPath(path: string): string[] {
  if (!path.startsWith('/') || path.length < 2 || path.endsWith('/')) throw new Error(`Invalid route path "${path}"`);
  return path.slice(1).split('/');
}

function setOnce<T>(map: Map<string, T>, method: string, entry: T, path: string): void {
  if (map.has(method)) throw new Error(`Route ${method} ${path} is defined twice`);
  map.set(method, entry);
}

function newNode<T>(): TrieNode<T> {
  return { literal: new Map() };
}

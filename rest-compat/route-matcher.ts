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
  /** Every entry of the matched path by method (`*` for any), for `Allow`. */
  methods: ReadonlyMap<string, T>;
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
    // A path starts with '/', so segments[0] is ''; empty segments elsewhere match nothing.
    const search: Search<T> = { method, segments: path.split('/'), names: [], values: [] };
    return this.visit(this.root, 1, search) ?? search.fallback;
  }

  private visit(node: TrieNode<T>, index: number, search: Search<T>): RouteMatch<T> | undefined {
    const { segments } = search;
    if (index === segments.length) return node.methods ? this.found(node.methods, search) : undefined;
    const segment = segments[index];
    if (segment === '') return undefined;
    const literal = node.literal.get(segment);
    if (literal) {
      const hit = this.visit(literal, index + 1, search);
      if (hit) return hit;
    }
    if (node.param) {
      search.names.push(node.param.name);
      search.values.push(segment);
      const hit = this.visit(node.param.node, index + 1, search);
      if (hit) return hit;
      search.names.pop();
      search.values.pop();
    }
    return node.wildcard ? this.found(node.wildcard, search) : undefined;
  }

  /** The match when the path's methods include the request's; otherwise remembered for `Allow`. */
  private found(methods: Map<string, T>, search: Search<T>): RouteMatch<T> | undefined {
    const entry = methods.get(search.method) ?? methods.get('*');
    if (!entry && search.fallback) return undefined;
    const match = { entry, params: decodeParams(search.names, search.values), methods };
    if (entry) return match;
    search.fallback = match;
    return undefined;
  }
}

interface Search<T> {
  method: string;
  segments: string[];
  names: string[];
  values: string[];
  /** The first path that matched without the method. */
  fallback?: RouteMatch<T>;
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

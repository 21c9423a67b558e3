import { ValidationError } from '../../../core/errors';
import type { ExpressionScope } from './types';

/**
 * A safe template evaluator for `{{ expr }}` in string parameters. It never uses `eval` or
 * `Function`: expressions are parsed into a tiny AST (paths, literals, `||`, `&&`, `==`, `!=`)
 * and interpreted. Property access reads own properties of plain data only (no prototype
 * chain, no `constructor`/`__proto__`), and there are no calls, so no code can run.
 *
 * Grammar:
 *   expr    := and ('||' and)*
 *   and     := cmp ('&&' cmp)*
 *   cmp     := primary (('==' | '!=' | '===' | '!==') primary)?
 *   primary := literal | path | '(' expr ')'
 *   path    := ROOT ('.' IDENT | '[' (STRING | NUMBER) ']')*
 *   ROOT    := $json | $node | $trigger | $execution | $now
 *   literal := STRING | NUMBER | true | false | null
 */

export type Expr =
  | { t: 'lit'; v: unknown }
  | { t: 'path'; root: Root; keys: Array<string | number> }
  | { t: 'or'; a: Expr; b: Expr }
  | { t: 'and'; a: Expr; b: Expr }
  | { t: 'eq'; a: Expr; b: Expr; neg: boolean };

type Root = '$json' | '$node' | '$trigger' | '$execution' | '$now';
const ROOTS = new Set<string>(['$json', '$node', '$trigger', '$execution', '$now']);
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

type Tok =
  | { k: 'id'; v: string }
  | { k: 'str'; v: string }
  | { k: 'num'; v: number }
  | { k: 'op'; v: string };

const MAX_EXPRESSION_LENGTH = 2000;

export class ExpressionError extends ValidationError {
  constructor(message: string, expr: string) {
    super(`Invalid expression {{ ${expr.length > 80 ? `${expr.slice(0, 80)}…` : expr} }}: ${message}`, { expression: expr });
  }
}

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') { i++; continue; }
    if (/[A-Za-z_$]/.test(c)) {
      let j = i + 1;
      while (j < src.length && /[A-Za-z0-9_$]/.test(src[j])) j++;
      out.push({ k: 'id', v: src.slice(i, j) });
      i = j;
      continue;
    }
    if (/[0-9]/.test(c) || (c === '-' && /[0-9]/.test(src[i + 1] ?? ''))) {
      const m = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/.exec(src.slice(i));
      if (!m) throw new Error(`bad number at ${i}`);
      out.push({ k: 'num', v: Number(m[0]) });
      i += m[0].length;
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      let s = '';
      for (;;) {
        if (j >= src.length) throw new Error('unterminated string');
        const d = src[j];
        if (d === c) break;
        if (d === '\\') {
          const e = src[j + 1];
          if (e === undefined) throw new Error('unterminated string');
          s += e === 'n' ? '\n' : e === 't' ? '\t' : e === 'r' ? '\r' : e;
          j += 2;
          continue;
        }
        s += d;
        j++;
      }
      out.push({ k: 'str', v: s });
      i = j + 1;
      continue;
    }
    const three = src.slice(i, i + 3);
    if (three === '===' || three === '!==') { out.push({ k: 'op', v: three.slice(0, 2) }); i += 3; continue; }
    const two = src.slice(i, i + 2);
    if (two === '||' || two === '&&' || two === '==' || two === '!=') { out.push({ k: 'op', v: two }); i += 2; continue; }
    if ('.[]()'.includes(c)) { out.push({ k: 'op', v: c }); i++; continue; }
    throw new Error(`unexpected character "${c}"`);
  }
  return out;
}

function parse(src: string): Expr {
  if (src.length > MAX_EXPRESSION_LENGTH) throw new Error(`longer than ${MAX_EXPRESSION_LENGTH} characters`);
  const toks = tokenize(src);
  let p = 0;
  const peek = (): Tok | undefined => toks[p];
  const isOp = (v: string): boolean => { const t = toks[p]; return !!t && t.k === 'op' && t.v === v; };
  const expect = (v: string): void => {
    if (!isOp(v)) throw new Error(`expected "${v}"`);
    p++;
  };

  const primary = (): Expr => {
    const t = peek();
    if (!t) throw new Error('unexpected end of expression');
    if (t.k === 'str' || t.k === 'num') { p++; return { t: 'lit', v: t.v }; }
    if (t.k === 'op' && t.v === '(') {
      p++;
      const e = orExpr();
      expect(')');
      return e;
    }
    if (t.k === 'id') {
      if (t.v === 'true' || t.v === 'false') { p++; return { t: 'lit', v: t.v === 'true' }; }
      if (t.v === 'null') { p++; return { t: 'lit', v: null }; }
      if (t.v === 'undefined') { p++; return { t: 'lit', v: undefined }; }
      if (!ROOTS.has(t.v)) throw new Error(`unknown name "${t.v}" (use $json, $node, $trigger, $execution or $now)`);
      p++;
      const keys: Array<string | number> = [];
      for (;;) {
        if (isOp('.')) {
          p++;
          const id = peek();
          if (!id || id.k !== 'id') throw new Error('expected a property name after "."');
          p++;
          keys.push(id.v);
        } else if (isOp('[')) {
          p++;
          const k = peek();
          if (!k || (k.k !== 'str' && k.k !== 'num')) throw new Error('expected a string or number inside [ ]');
          if (k.k === 'num' && (!Number.isInteger(k.v) || k.v < 0)) throw new Error('index must be a non-negative integer');
          p++;
          expect(']');
          keys.push(k.v);
        } else if (isOp('(')) {
          throw new Error('function calls are not allowed');
        } else break;
      }
      for (const k of keys) if (typeof k === 'string' && FORBIDDEN_KEYS.has(k)) throw new Error(`property "${k}" is not allowed`);
      return { t: 'path', root: t.v as Root, keys };
    }
    throw new Error(`unexpected "${t.v}"`);
  };
  const cmp = (): Expr => {
    const a = primary();
    if (isOp('==') || isOp('!=')) {
      const neg = (toks[p] as { v: string }).v === '!=';
      p++;
      return { t: 'eq', a, b: primary(), neg };
    }
    return a;
  };
  const andExpr = (): Expr => {
    let a = cmp();
    while (isOp('&&')) { p++; a = { t: 'and', a, b: cmp() }; }
    return a;
  };
  const orExpr = (): Expr => {
    let a = andExpr();
    while (isOp('||')) { p++; a = { t: 'or', a, b: andExpr() }; }
    return a;
  };
  const e = orExpr();
  if (p < toks.length) {
    const t = toks[p];
    throw new Error(t.k === 'op' && t.v === '(' ? 'function calls are not allowed' : `unexpected "${String(t.v)}"`);
  }
  return e;
}

/** Reads `key` of `obj` when it is an own property of plain data; anything else is undefined. */
function getKey(obj: unknown, key: string | number): unknown {
  if (obj === null || obj === undefined) return undefined;
  if (typeof obj === 'string') {
    if (key === 'length') return obj.length;
    return typeof key === 'number' ? obj[key] : undefined;
  }
  if (typeof obj !== 'object') return undefined;
  if (Array.isArray(obj)) {
    if (key === 'length') return obj.length;
    const idx = typeof key === 'number' ? key : /^(0|[1-9][0-9]*)$/.test(key) ? Number(key) : -1;
    return idx >= 0 && idx < obj.length ? obj[idx] : undefined;
  }
  const k = String(key);
  if (FORBIDDEN_KEYS.has(k)) return undefined;
  return Object.prototype.hasOwnProperty.call(obj, k) ? (obj as Record<string, unknown>)[k] : undefined;
}

function looseEq(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if ((a === null || a === undefined) && (b === null || b === undefined)) return true;
  if (typeof a === 'number' && typeof b === 'string' && b.trim() !== '') return a === Number(b);
  if (typeof b === 'number' && typeof a === 'string' && a.trim() !== '') return b === Number(a);
  return false;
}

function truthy(v: unknown): boolean {
  return !(v === undefined || v === null || v === false || v === '' || v === 0 || Number.isNaN(v));
}

function interpret(e: Expr, scope: ExpressionScope): unknown {
  switch (e.t) {
    case 'lit':
      return e.v;
    case 'path': {
      let v: unknown = (scope as unknown as Record<string, unknown>)[e.root];
      for (const k of e.keys) {
        v = getKey(v, k);
        if (v === undefined) return undefined;
      }
      return v;
    }
    case 'or': {
      const a = interpret(e.a, scope);
      return truthy(a) ? a : interpret(e.b, scope);
    }
    case 'and': {
      const a = interpret(e.a, scope);
      return truthy(a) ? interpret(e.b, scope) : a;
    }
    case 'eq': {
      const r = looseEq(interpret(e.a, scope), interpret(e.b, scope));
      return e.neg ? !r : r;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Templates

type Template =
  | { k: 'text'; v: string }
  | { k: 'single'; e: Expr }
  | { k: 'parts'; parts: Array<string | Expr> };

const CACHE_LIMIT = 5000;
const exprCache = new Map<string, Expr>();
const templateCache = new Map<string, Template>();

function remember<V>(cache: Map<string, V>, key: string, value: V): V {
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(key, value);
  return value;
}

/** Parses one expression (without braces), cached. Throws ExpressionError (a ValidationError). */
export function compileExpression(src: string): Expr {
  const hit = exprCache.get(src);
  if (hit) return hit;
  let e: Expr;
  try {
    e = parse(src);
  } catch (err) {
    throw new ExpressionError((err as Error).message, src.trim());
  }
  return remember(exprCache, src, e);
}

/** Whether a string holds `{{`. */
export function hasExpression(value: string): boolean {
  return value.includes('{{');
}

/** Parses a string into text and `{{ expr }}` parts, cached. Throws ExpressionError. */
export function compileTemplate(src: string): Template {
  const hit = templateCache.get(src);
  if (hit) return hit;
  if (!src.includes('{{')) return remember(templateCache, src, { k: 'text', v: src });
  const parts: Array<string | Expr> = [];
  let i = 0;
  let text = '';
  while (i < src.length) {
    const open = src.indexOf('{{', i);
    if (open < 0) { text += src.slice(i); break; }
    text += src.slice(i, open);
    // Find the closing }} outside string literals.
    let j = open + 2;
    let quote: string | null = null;
    let close = -1;
    while (j < src.length) {
      const c = src[j];
      if (quote) {
        if (c === '\\') { j += 2; continue; }
        if (c === quote) quote = null;
      } else if (c === '"' || c === "'") quote = c;
      else if (c === '}' && src[j + 1] === '}') { close = j; break; }
      j++;
    }
    if (close < 0) throw new ExpressionError('missing "}}"', src.slice(open + 2));
    if (text) parts.push(text);
    text = '';
    const inner = src.slice(open + 2, close);
    if (!inner.trim()) throw new ExpressionError('empty expression', inner);
    parts.push(compileExpression(inner.trim()));
    i = close + 2;
  }
  if (text) parts.push(text);
  const tpl: Template = parts.length === 1 && typeof parts[0] !== 'string'
    ? { k: 'single', e: parts[0] }
    : { k: 'parts', parts };
  return remember(templateCache, src, tpl);
}

function stringify(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'object') {
    try { return JSON.stringify(v); } catch { return ''; }
  }
  return String(v);
}

/** Evaluates one expression (the text between `{{` and `}}`). */
export function evaluate(expr: string, scope: ExpressionScope): unknown {
  return interpret(compileExpression(expr.trim()), scope);
}

/** Renders a string: exactly one `{{ expr }}` keeps the value's type; otherwise a string. */
export function renderTemplate(src: string, scope: ExpressionScope): unknown {
  const tpl = compileTemplate(src);
  if (tpl.k === 'text') return tpl.v;
  if (tpl.k === 'single') return interpret(tpl.e, scope);
  let out = '';
  for (const part of tpl.parts) out += typeof part === 'string' ? part : stringify(interpret(part, scope));
  return out;
}

function resolveValue(value: unknown, scope: ExpressionScope, depth: number): unknown {
  if (depth > 64) throw new ValidationError('Parameters nest too deeply');
  if (typeof value === 'string') return value.includes('{{') ? renderTemplate(value, scope) : value;
  if (Array.isArray(value)) return value.map((v) => resolveValue(v, scope, depth + 1));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = resolveValue(v, scope, depth + 1);
    return out;
  }
  return value;
}

export interface ResolveOptions {
  /** Top-level parameter names left as saved (e.g. the code node's `code`). */
  skip?: readonly string[];
}

/** Resolves every `{{ }}` in the parameters, deeply (arrays and objects); returns a new object. */
export function resolveParameters(parameters: Record<string, unknown>, scope: ExpressionScope, options: ResolveOptions = {}): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(parameters ?? {})) {
    out[k] = options.skip?.includes(k) ? v : resolveValue(v, scope, 0);
  }
  return out;
}

/**
 * Parses every template in a parameters value (save-time check). Returns the first bad one as
 * `{ field, message }` (field relative to `parameters`), or null.
 */
export function findExpressionError(value: unknown, path: string, skip: readonly string[] = [], depth = 0): { field: string; message: string } | null {
  if (depth > 64) return { field: path, message: 'nests too deeply' };
  if (typeof value === 'string') {
    if (!value.includes('{{')) return null;
    try {
      compileTemplate(value);
      return null;
    } catch (err) {
      return { field: path, message: (err as Error).message };
    }
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const e = findExpressionError(value[i], `${path}[${i}]`, [], depth + 1);
      if (e) return e;
    }
    return null;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (depth === 0 && skip.includes(k)) continue;
      const e = findExpressionError(v, `${path}.${k}`, [], depth + 1);
      if (e) return e;
    }
  }
  return null;
}

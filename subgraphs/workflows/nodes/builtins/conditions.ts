import { isPlainObject } from './util';

export const OPERATORS = ['equals', 'notEquals', 'contains', 'gt', 'gte', 'lt', 'lte', 'exists', 'isEmpty', 'isTrue'] as const;
export type Operator = (typeof OPERATORS)[number];

export interface Condition {
  left?: unknown;
  operator: Operator;
  right?: unknown;
}

/** JSON Schema of one condition (if, switch rules). */
export const CONDITION_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['operator'],
  properties: {
    left: { description: 'Value to test, usually an expression such as {{ $json.status }}.' },
    operator: { type: 'string', enum: [...OPERATORS], description: 'Comparison.' },
    right: { description: 'Value to compare with (unused by exists, isEmpty, isTrue).' },
  },
} as const;

function toNumber(v: unknown): number | null {
  if (typeof v === 'number') return Number.isNaN(v) ? null : v;
  if (typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v))) return Number(v);
  return null;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const na = toNumber(a);
  const nb = toNumber(b);
  if (na !== null && nb !== null && (typeof a === 'number' || typeof b === 'number')) return na === nb;
  if (typeof a === 'boolean' && typeof b === 'string') return String(a) === b;
  if (typeof b === 'boolean' && typeof a === 'string') return String(b) === a;
  if ((a === null || a === undefined) && (b === null || b === undefined)) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

function compare(a: unknown, b: unknown): number | null {
  const na = toNumber(a);
  const nb = toNumber(b);
  if (na !== null && nb !== null) return na - nb;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return null;
}

export function testCondition(c: Condition): boolean {
  const { left, right } = c;
  switch (c.operator) {
    case 'equals': return deepEqual(left, right);
    case 'notEquals': return !deepEqual(left, right);
    case 'contains':
      if (Array.isArray(left)) return left.some((x) => deepEqual(x, right));
      if (typeof left === 'string') return left.includes(right === undefined || right === null ? '' : String(right));
      if (isPlainObject(left) && typeof right === 'string') return Object.prototype.hasOwnProperty.call(left, right);
      return false;
    case 'gt': { const r = compare(left, right); return r !== null && r > 0; }
    case 'gte': { const r = compare(left, right); return r !== null && r >= 0; }
    case 'lt': { const r = compare(left, right); return r !== null && r < 0; }
    case 'lte': { const r = compare(left, right); return r !== null && r <= 0; }
    case 'exists': return left !== undefined && left !== null;
    case 'isEmpty':
      return left === undefined || left === null || left === ''
        || (Array.isArray(left) && left.length === 0) || (isPlainObject(left) && Object.keys(left).length === 0);
    case 'isTrue': return left === true || left === 'true' || left === 1;
    default: throw new Error(`Unknown operator ${String(c.operator)}`);
  }
}

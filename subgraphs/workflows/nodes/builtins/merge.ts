import type { Item, NodeType } from '../types';
import { isPlainObject } from './util';

function keyOf(item: Item, key: string): string | undefined {
  let v: unknown = item.json;
  for (const k of key.split('.')) {
    if (!isPlainObject(v) || !Object.prototype.hasOwnProperty.call(v, k)) return undefined;
    v = v[k];
  }
  return v === undefined || v === null ? undefined : JSON.stringify(v);
}

export const merge: NodeType = {
  replayable: true,
  definition: {
    type: 'merge',
    displayName: 'Merge',
    group: 'flow',
    version: 1,
    description: 'Combines the items of its two inputs: append them, pair them by position, or join them on a key.',
    inputs: 2,
    outputs: 1,
    parametersSchema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        mode: { type: 'string', enum: ['append', 'combineByPosition', 'combineByKey'], default: 'append', description: 'How to combine.' },
        key: { type: 'string', minLength: 1, maxLength: 256, description: 'combineByKey: field (dotted path) to match items on.' },
        includeUnpaired: { type: 'boolean', default: false, description: 'Keep input-1 items with no partner (combineByPosition / combineByKey).' },
      },
      if: { properties: { mode: { const: 'combineByKey' } }, required: ['mode'] },
      then: { required: ['key'] },
    },
  },
  executor: {
    async execute(ctx) {
      const p = ctx.parametersFor(0);
      const a = ctx.inputs[0] ?? [];
      const b = ctx.inputs[1] ?? [];
      const mode = (p.mode as string | undefined) ?? 'append';
      let out: Item[];
      if (mode === 'append') {
        out = [...a, ...b];
      } else if (mode === 'combineByPosition') {
        const n = p.includeUnpaired === true ? Math.max(a.length, b.length) : Math.min(a.length, b.length);
        out = Array.from({ length: n }, (_, i) => ({ json: { ...(a[i]?.json ?? {}), ...(b[i]?.json ?? {}) } }));
      } else {
        const key = String(p.key ?? '');
        const index = new Map<string, Item>();
        for (const item of b) {
          const k = keyOf(item, key);
          if (k !== undefined && !index.has(k)) index.set(k, item);
        }
        out = [];
        for (const item of a) {
          const k = keyOf(item, key);
          const match = k === undefined ? undefined : index.get(k);
          if (match) out.push({ json: { ...item.json, ...match.json } });
          else if (p.includeUnpaired === true) out.push({ json: { ...item.json } });
        }
      }
      return { kind: 'output', outputs: [out] };
    },
  },
};

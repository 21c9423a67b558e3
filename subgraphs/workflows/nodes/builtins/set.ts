import type { Item, NodeType } from '../types';
import { FORBIDDEN_KEYS, isPlainObject, itemsOrOne } from './util';

function setPath(target: Record<string, unknown>, dotted: string, value: unknown): void {
  const keys = dotted.split('.');
  let cur = target;
  for (let i = 0; i < keys.length - 1; i++) {
    const k = keys[i];
    if (FORBIDDEN_KEYS.has(k)) throw new Error(`Key "${dotted}" is not allowed`);
    if (!isPlainObject(cur[k])) cur[k] = {};
    cur = cur[k] as Record<string, unknown>;
  }
  const last = keys[keys.length - 1];
  if (FORBIDDEN_KEYS.has(last)) throw new Error(`Key "${dotted}" is not allowed`);
  cur[last] = value;
}

export const setNode: NodeType = {
  replayable: true,
  definition: {
    type: 'set',
    displayName: 'Set',
    group: 'data',
    version: 1,
    description: 'Sets fields on each item; keys may be dotted paths (a.b.c) and values expressions.',
    inputs: 1,
    outputs: 1,
    parametersSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['values'],
      properties: {
        values: {
          type: 'object',
          maxProperties: 200,
          propertyNames: { pattern: '^(?!.*(?:^|\\.)(?:__proto__|constructor|prototype)(?:\\.|$))[^.]+(\\.[^.]+)*$', maxLength: 256 },
          additionalProperties: { description: 'A literal or an expression.' },
          description: 'Field (dotted path) → value.',
        },
        keepOnlySet: { type: 'boolean', default: false, description: 'Output only the set fields instead of adding them to the item.' },
      },
    },
  },
  executor: {
    async execute(ctx) {
      const out: Item[] = itemsOrOne(ctx).map((item, i) => {
        const p = ctx.parametersFor(i);
        const json: Record<string, unknown> = p.keepOnlySet === true ? {} : structuredClone(item.json);
        for (const [k, v] of Object.entries(isPlainObject(p.values) ? p.values : {})) setPath(json, k, v);
        return { json };
      });
      return { kind: 'output', outputs: [out] };
    },
  },
};

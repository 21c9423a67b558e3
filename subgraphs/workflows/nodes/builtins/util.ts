import type { Item, NodeExecutionContext } from '../types';

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The input items, or one empty item when there are none (so a node can start a branch). */
export function itemsOrOne(ctx: NodeExecutionContext): Item[] {
  return ctx.items.length ? ctx.items : [{ json: {} }];
}

/** Throws when the execution was cancelled. */
export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new Error('Execution was cancelled');
}

export const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Schema of a value that may be anything JSON (or an expression string). */
export const ANY_VALUE = { description: 'A literal or an expression such as {{ $json.field }}.' };

import { ValidationError } from '../../core/errors';

/** Checks shared by the compute services; each failure is a 400 naming the field. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const VOLUME_NAME = /^[a-z0-9][a-z0-9_.-]{0,62}$/;
/** An engine image reference: [registry/]name[:tag][@digest], conservatively. */
export const IMAGE_REF = /^[a-z0-9][a-z0-9._\-/:@]{0,254}$/i;

/** A JSON object of string values (env, labels), bounded in count and size. */
export function stringMap(value: unknown, field: string, options: { keyPattern?: RegExp; maxEntries?: number; maxValueLength?: number } = {}): Record<string, string> {
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new ValidationError(`${field} must be an object of strings`, { field });
  const entries = Object.entries(value as Record<string, unknown>);
  const maxEntries = options.maxEntries ?? 256;
  if (entries.length > maxEntries) throw new ValidationError(`${field} may have at most ${maxEntries} entries`, { field });
  const out: Record<string, string> = {};
  for (const [key, v] of entries) {
    if (options.keyPattern && !options.keyPattern.test(key)) throw new ValidationError(`${field}: "${key.slice(0, 64)}" is not a valid name`, { field: `${field}.${key.slice(0, 64)}` });
    if (key.length > 256) throw new ValidationError(`${field}: a key is longer than 256 characters`, { field });
    if (typeof v !== 'string') throw new ValidationError(`${field}.${key} must be a string`, { field: `${field}.${key}` });
    if (v.length > (options.maxValueLength ?? 32_768)) throw new ValidationError(`${field}.${key} is too long`, { field: `${field}.${key}` });
    if (v.includes('\0')) throw new ValidationError(`${field}.${key} must not contain NUL`, { field: `${field}.${key}` });
    out[key] = v;
  }
  return out;
}

export function absolutePath(value: unknown, field: string): string {
  if (typeof value !== 'string' || !value.startsWith('/')) throw new ValidationError(`${field} must be an absolute path`, { field });
  if (value.length > 4096 || value.includes('\0')) throw new ValidationError(`${field} is not a valid path`, { field });
  return value;
}

/** `0755`, `755` or `0o755` → 0o755. */
export function parseMode(value: string | null | undefined, field: string, fallback: number): number {
  if (value === null || value === undefined || value === '') return fallback;
  const digits = value.replace(/^0o/i, '');
  if (!/^[0-7]{1,4}$/.test(digits)) throw new ValidationError(`${field} must be octal permission bits such as 0644`, { field });
  return parseInt(digits, 8);
}

export { intInRange, parseIsoDate, requireName } from '../../core/validation';

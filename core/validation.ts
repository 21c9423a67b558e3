import { ValidationError } from './errors';

/** Small input checks shared by the domains; each failure is a 400 VALIDATION_FAILED naming the field. */

/** A trimmed, non-empty name of at most `max` characters. */
export function requireName(value: unknown, field = 'name', max = 128): string {
  if (typeof value !== 'string' || !value.trim()) throw new ValidationError(`${field} must be a non-empty string`, { field });
  if (value.trim().length > max) throw new ValidationError(`${field} must be at most ${max} characters`, { field });
  return value.trim();
}

/** An integer in [min, max]; null/undefined stay null (a default applies, or nothing changes). */
export function intInRange(value: number | null | undefined, field: string, min: number, max: number): number | null {
  if (value === null || value === undefined) return null;
  if (!Number.isInteger(value) || value < min || value > max) throw new ValidationError(`${field} must be an integer from ${min} to ${max}`, { field });
  return value;
}

/** An ISO 8601 time, or undefined when absent. */
export function parseIsoDate(value: string | null | undefined, field: string): Date | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw new ValidationError(`${field} must be an ISO 8601 time`, { field });
  return date;
}

import { ValidationError } from '../../../core/errors';

/**
 * A secret's key: a letter or underscore, then up to 127 letters, digits, `_`, `.` or `-`.
 * Keys without `.` or `-` are valid environment variable names, which is how sandboxes use
 * them (secretRefs); `.` and `-` are allowed for names such as `db.password` or `api-token`.
 */
export const SECRET_KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/;
/** Longest key, in characters. */
export const SECRET_KEY_MAX_LENGTH = 128;
/** Smallest value, in bytes of UTF-8. */
export const SECRET_VALUE_MIN_BYTES = 1;
/** Largest value, in bytes of UTF-8 (64 KiB). */
export const SECRET_VALUE_MAX_BYTES = 65_536;
/** Most secrets one workspace may hold. */
export const MAX_SECRETS_PER_WORKSPACE = 1_000;

// In unicode mode a well-formed surrogate pair is one code point, so this matches only lone halves.
const LONE_SURROGATE = /\p{Surrogate}/u;

export function validateSecretKey(key: unknown): string {
  if (typeof key !== 'string' || !SECRET_KEY_PATTERN.test(key)) {
    throw new ValidationError(
      `key must start with a letter or underscore and contain only letters, digits, "_", "." or "-", at most ${SECRET_KEY_MAX_LENGTH} characters`,
      { field: 'key' },
    );
  }
  return key;
}

/** Checks a value's size and encoding. Neither the message nor the details ever carry the value. */
export function validateSecretValue(value: unknown): string {
  if (typeof value !== 'string') throw new ValidationError('value must be a string', { field: 'value' });
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes < SECRET_VALUE_MIN_BYTES) throw new ValidationError('value must not be empty', { field: 'value' });
  if (bytes > SECRET_VALUE_MAX_BYTES) {
    throw new ValidationError(`value must be at most ${SECRET_VALUE_MAX_BYTES} bytes of UTF-8`, { field: 'value', maxBytes: SECRET_VALUE_MAX_BYTES });
  }
  if (LONE_SURROGATE.test(value)) throw new ValidationError('value must be valid Unicode text', { field: 'value' });
  return value;
}

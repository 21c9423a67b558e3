import { ValidationError } from '../../../core/errors';
import { SECRET_KEY_MAX_LENGTH, SECRET_VALUE_MAX_BYTES, validateSecretKey, validateSecretValue } from './secret.limits';

describe('validateSecretKey', () => {
  it.each(['A', '_', 'DATABASE_URL', 'db.password', 'api-token', '_x9', `K${'x'.repeat(SECRET_KEY_MAX_LENGTH - 1)}`])('accepts %s', (key) => {
    expect(validateSecretKey(key)).toBe(key);
  });

  it.each(['', '9LIVES', '-dash', '.dot', 'has space', 'a/b', 'ünïcode', 'a=b', `K${'x'.repeat(SECRET_KEY_MAX_LENGTH)}`, 42, null])('rejects %p with details.field = key', (key) => {
    expect(() => validateSecretKey(key)).toThrow(ValidationError);
    try {
      validateSecretKey(key);
    } catch (err) {
      expect((err as ValidationError).details).toEqual({ field: 'key' });
    }
  });
});

describe('validateSecretValue', () => {
  it('counts UTF-8 bytes, not characters', () => {
    expect(validateSecretValue('x'.repeat(SECRET_VALUE_MAX_BYTES))).toHaveLength(SECRET_VALUE_MAX_BYTES);
    expect(() => validateSecretValue('x'.repeat(SECRET_VALUE_MAX_BYTES + 1))).toThrow(ValidationError);
    expect(() => validateSecretValue('€'.repeat(SECRET_VALUE_MAX_BYTES / 3 + 1))).toThrow(ValidationError); // 3 bytes each
    expect(validateSecretValue('🔑')).toBe('🔑');
  });

  it('rejects empty, non-string and lone-surrogate values without repeating them', () => {
    for (const value of ['', 5, undefined, 'abc\uD800def']) {
      try {
        validateSecretValue(value);
        throw new Error('accepted');
      } catch (err) {
        expect(err).toBeInstanceOf(ValidationError);
        expect((err as ValidationError).details).toMatchObject({ field: 'value' });
        expect((err as ValidationError).message).not.toContain('abc');
      }
    }
  });
});

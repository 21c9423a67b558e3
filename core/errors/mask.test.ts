import { GraphQLError } from 'graphql';
import { ConflictError } from './conflict-error';
import { maskError, withoutValues } from './mask';

describe('maskError', () => {
  it('keeps domain errors with code and details', () => {
    const error = new GraphQLError('x', { originalError: new ConflictError('Taken', { field: 'key' }) });
    expect(maskError({ message: 'x' }, error)).toEqual({ message: 'Taken', path: undefined, extensions: { code: 'CONFLICT', details: { field: 'key' } } });
  });

  it('turns anything else into INTERNAL without internals', () => {
    const onInternal = jest.fn();
    const masked = maskError({ message: 'ECONNREFUSED 10.0.0.5:5432', extensions: { code: 'INTERNAL_SERVER_ERROR', stacktrace: ['at x'] } }, new Error('ECONNREFUSED'), { onInternal });
    expect(masked).toEqual({ message: 'Internal server error', path: undefined, extensions: { code: 'INTERNAL' } });
    expect(onInternal).toHaveBeenCalled();
  });

  it('turns a value PostgreSQL refuses (a NUL byte) into VALIDATION_FAILED, not INTERNAL, and still reports it', () => {
    const onInternal = jest.fn();
    const refused = Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { name: 'QueryFailedError', code: '22021' });
    const masked = maskError({ message: refused.message }, new GraphQLError('x', { originalError: refused }), { onInternal });
    expect(masked.extensions).toEqual({ code: 'VALIDATION_FAILED' });
    expect(masked.message).not.toContain('0x00');
    expect(onInternal).toHaveBeenCalledWith(refused);
    // Other database failures stay INTERNAL.
    const down = Object.assign(new Error('relation does not exist'), { name: 'QueryFailedError', code: '42P01' });
    expect(maskError({ message: 'x' }, new GraphQLError('x', { originalError: down })).extensions).toEqual({ code: 'INTERNAL' });
  });

  it('maps framework codes and never echoes a coerced value', () => {
    const masked = maskError(
      { message: 'Variable "$value" got invalid value 987654321; String cannot represent a non string value: 987654321', extensions: { code: 'BAD_USER_INPUT' } },
      new GraphQLError('x'),
    );
    expect(masked.extensions?.code).toBe('VALIDATION_FAILED');
    expect(masked.message).not.toContain('987654321');
    expect(masked.message).toContain('$value');
  });
});

describe('withoutValues', () => {
  it.each([
    ['Variable "$p" got invalid value "hunter2"; String cannot represent a non string value: "hunter2"', 'hunter2'],
    ['Int cannot represent non-integer value: "s3cret"', 's3cret'],
    ['Expected value of type "Int", found "s3cret".', 's3cret'],
    ['Variable "$input" got invalid value { a: "s3cret" } at "input.a"; Int cannot represent non-integer value: "s3cret"', 's3cret'],
  ])('drops the value from %s', (message, secret) => {
    expect(withoutValues(message)).not.toContain(secret);
  });

  it('keeps messages that quote no value', () => {
    expect(withoutValues('Cannot query field "nope" on type "Query".')).toBe('Cannot query field "nope" on type "Query".');
  });
});

import { buildSchema } from 'graphql';
import { BadRequestError, ValidationError } from '../core/errors';
import { parseJsonObject, routeArguments, validateRouteInput } from './request-input';

const schema = buildSchema(`
  enum Kind { PLAIN FILE }
  input Range { from: Int!, to: Int }
  type Query { search(id: ID!, kind: Kind, exact: Boolean, score: Float, page: Int = 1, tags: [String!], range: Range, name: String!): Boolean }
`);
const args = routeArguments(schema.getQueryType()!.getFields().search.args, new Set(['id']));

function check(query: string, body?: Record<string, unknown>) {
  return () => validateRouteInput(args, { id: 'x_1' }, new URLSearchParams(query), body);
}

function failure(fn: () => void): ValidationError {
  try {
    fn();
  } catch (err) {
    return err as ValidationError;
  }
  throw new Error('expected a validation error');
}

describe('parseJsonObject', () => {
  it('reads an empty body as {} and a JSON object as itself', () => {
    expect(parseJsonObject(Buffer.alloc(0))).toEqual({});
    expect(parseJsonObject(Buffer.from('{"a":1}'))).toEqual({ a: 1 });
  });

  it('refuses malformed JSON and non-objects with BAD_REQUEST', () => {
    for (const raw of ['{"a":', '[1,2]', 'null', '"text"', '12']) {
      expect(() => parseJsonObject(Buffer.from(raw))).toThrow(BadRequestError);
    }
  });
});

describe('validateRouteInput', () => {
  it('accepts query strings read by the argument type', () => {
    expect(check('name=n&kind=FILE&exact=false&score=-1.5e2&page=3&tags=a&tags=b&range={"from":1}')).not.toThrow();
  });

  it('accepts flat JSON body values of the right type, query first', () => {
    expect(check('', { name: 'n', kind: 'PLAIN', exact: true, score: 2, tags: 'single', range: { from: 1, to: 2 } })).not.toThrow();
    expect(check('name=fromQuery', { name: 5 })).not.toThrow();
  });

  it.each([
    ['page=x', 'page', /not a valid Int/],
    ['page=1.5', 'page', /not a valid Int/],
    ['exact=yes', 'exact', /not a valid Boolean/],
    ['score=abc', 'score', /not a valid Float/],
    ['kind=NOPE', 'kind', /does not exist in "Kind" enum/],
    ['range=nojson', 'range', /not a valid Range/],
    ['range={"to":1}', 'range', /"from"/],
    ['page=1&page=2', 'page', /given once/],
    ['page=99999999999', 'page', /Invalid value for type Int/],
  ])('refuses the query %s naming %s', (query, field, message) => {
    const error = failure(check(`name=n&${query}`));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.details).toMatchObject({ field: expect.stringContaining(field) });
    expect(error.message).toMatch(message);
  });

  it('refuses body values of the wrong JSON type, naming nested fields', () => {
    expect(failure(check('', { name: 5 })).details).toMatchObject({ field: 'name' });
    expect(failure(check('', { name: 'n', exact: 'true' })).details).toMatchObject({ field: 'exact' });
    expect(failure(check('', { name: 'n', range: { from: 'x' } })).details).toMatchObject({ field: 'range.from' });
  });

  it('never quotes the refused value back (it may be a secret sent with the wrong type)', () => {
    const typed = failure(check('', { name: 987654321 }));
    expect(typed.details).toMatchObject({ field: 'name' });
    expect(JSON.stringify({ message: typed.message, details: typed.details })).not.toContain('987654321');
    const query = failure(check('name=n&page=hunter2secret'));
    expect(JSON.stringify({ message: query.message, details: query.details })).not.toContain('hunter2secret');
    let parseError: unknown;
    try {
      parseJsonObject(Buffer.from('{"password": s3cr3t-value}'));
    } catch (err) {
      parseError = err;
    }
    expect((parseError as Error).message).not.toContain('s3cr3t');
  });

  it('names a missing required field, and a null one', () => {
    const missing = failure(check(''));
    expect(missing.message).toBe('"name" is required');
    expect(missing.details).toEqual({ field: 'name' });
    expect(failure(check('', { name: null })).details).toMatchObject({ field: 'name' });
  });

  it('lists every problem in details when there are several, the first (in argument order) deciding', () => {
    const error = failure(check('page=x&exact=maybe'));
    expect(error.details).toMatchObject({ field: 'exact', problems: expect.arrayContaining([expect.objectContaining({ field: 'page' }), expect.objectContaining({ field: 'name' })]) });
  });
});

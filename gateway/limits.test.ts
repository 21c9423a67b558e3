import { buildSchema, parse, validate } from 'graphql';
import { costLimitRule, depthLimitRule } from './limits';

const schema = buildSchema(`
  type Query { node: Node, list(limit: Int): [Node!]! }
  type Node { id: ID!, child: Node, children(first: Int): [Node!]! }
`);

const errorsOf = (query: string, rules = [depthLimitRule(3), costLimitRule(100)]) => validate(schema, parse(query), rules).map((e) => e.message);

describe('depth limit', () => {
  it('counts nesting through fragments and stops at cycles', () => {
    expect(errorsOf('{ node { child { id } } }')).toEqual([]);
    expect(errorsOf('{ node { child { child { id } } } }')[0]).toMatch(/depth 4 exceeds the limit of 3/);
    expect(errorsOf('{ node { ...F } } fragment F on Node { child { child { id } } }')[0]).toMatch(/depth 4/);
    // A self-referencing fragment is invalid GraphQL; the rule must still terminate.
    expect(() => errorsOf('{ node { ...F } } fragment F on Node { child { ...F } }')).not.toThrow();
  });
});

describe('cost limit', () => {
  it('multiplies by list sizes from arguments, 20 when unknown', () => {
    expect(errorsOf('{ list(limit: 5) { id } }')).toEqual([]); // 5 * 2 = 10
    expect(errorsOf('{ list(limit: 50) { id child { id } } }')[0]).toMatch(/cost 200 exceeds/); // 50 * (1 + 1 + 2)
    expect(errorsOf('{ list { children { id } } }')[0]).toMatch(/cost/); // 20 * (1 + 20 * 2)
    expect(errorsOf('{ node { id } }')).toEqual([]);
  });
});

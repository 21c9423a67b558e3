import { ValidationError } from '../../../core/errors';
import { compileTemplate, evaluate, findExpressionError, renderTemplate, resolveParameters } from './expressions';
import type { ExpressionScope } from './types';

const scope: ExpressionScope = {
  $json: { name: 'Ada', age: 36, tags: ['a', 'b'], nested: { 'with space': 1, deep: { x: true } }, empty: '', zero: 0 },
  $node: { Fetch: { json: { status: 200, body: { id: 'u1' } }, items: [{ json: { status: 200, body: { id: 'u1' } } }] } },
  $trigger: { body: { event: 'push' }, headers: { 'x-a': '1' } },
  $execution: { id: 'exe_1', workflowId: 'wf_1', mode: 'webhook' },
  $now: '2025-01-01T00:00:00.000Z',
};

describe('expressions', () => {
  it('evaluates every path form', () => {
    expect(evaluate('$json.name', scope)).toBe('Ada');
    expect(evaluate('$json["name"]', scope)).toBe('Ada');
    expect(evaluate("$json['nested']['with space']", scope)).toBe(1);
    expect(evaluate('$json.tags[1]', scope)).toBe('b');
    expect(evaluate('$json.tags.length', scope)).toBe(2);
    expect(evaluate('$json.nested.deep.x', scope)).toBe(true);
    expect(evaluate('$node["Fetch"].json.body.id', scope)).toBe('u1');
    expect(evaluate('$node.Fetch.json.status', scope)).toBe(200);
    expect(evaluate('$node.Fetch.items[0].json.status', scope)).toBe(200);
    expect(evaluate('$trigger.body.event', scope)).toBe('push');
    expect(evaluate('$execution.id', scope)).toBe('exe_1');
    expect(evaluate('$now', scope)).toBe('2025-01-01T00:00:00.000Z');
    expect(evaluate('$json', scope)).toBe(scope.$json);
  });

  it('evaluates literals, fallback and comparisons', () => {
    expect(evaluate('"x"', scope)).toBe('x');
    expect(evaluate("'it\\'s'", scope)).toBe("it's");
    expect(evaluate('42', scope)).toBe(42);
    expect(evaluate('-1.5', scope)).toBe(-1.5);
    expect(evaluate('true', scope)).toBe(true);
    expect(evaluate('null', scope)).toBeNull();
    expect(evaluate('$json.missing || "default"', scope)).toBe('default');
    expect(evaluate('$json.empty || $json.name', scope)).toBe('Ada');
    expect(evaluate('$json.age == 36', scope)).toBe(true);
    expect(evaluate('$json.age == "36"', scope)).toBe(true);
    expect(evaluate('$json.name != "Ada"', scope)).toBe(false);
    expect(evaluate('$json.age === 36 && $json.name == "Ada"', scope)).toBe(true);
    expect(evaluate('($json.missing || $json.zero) == 0', scope)).toBe(true);
  });

  it('returns undefined for unknown paths and renders them as empty strings', () => {
    expect(evaluate('$json.nope.deeper[3]', scope)).toBeUndefined();
    expect(evaluate('$node["Nope"].json.x', scope)).toBeUndefined();
    expect(evaluate('$json.name.nope', scope)).toBeUndefined();
    expect(renderTemplate('[{{ $json.nope }}]', scope)).toBe('[]');
  });

  it('keeps the type of a single expression; otherwise renders a string', () => {
    expect(renderTemplate('{{ $json.age }}', scope)).toBe(36);
    expect(renderTemplate('  {{ $json.tags }}', scope)).toBe('  ["a","b"]');
    expect(renderTemplate('{{$json.tags}}', scope)).toEqual(['a', 'b']);
    expect(renderTemplate('Hi {{ $json.name }}, {{ $json.age }}!', scope)).toBe('Hi Ada, 36!');
    expect(renderTemplate('a "}}" {{ "}}" }}', scope)).toBe('a "}}" }}');
    expect(renderTemplate('no expressions', scope)).toBe('no expressions');
  });

  it('resolves parameters deeply and caches parsing', () => {
    const params = { url: 'https://x/{{ $json.name }}', n: 3, list: ['{{ $json.age }}', { k: '{{ $trigger.body }}' }], code: '{{ not parsed }}' };
    const out = resolveParameters(params, scope, { skip: ['code'] });
    expect(out).toEqual({ url: 'https://x/Ada', n: 3, list: [36, { k: { event: 'push' } }], code: '{{ not parsed }}' });
    expect(params.url).toBe('https://x/{{ $json.name }}');
    expect(compileTemplate('{{ $json.a }}')).toBe(compileTemplate('{{ $json.a }}'));
  });

  it('refuses injection attempts: they never parse, so no code runs', () => {
    const attempts = [
      'constructor.constructor("return process")()',
      '$json.constructor.constructor("return process")()',
      '$json["constructor"]',
      '$json.__proto__',
      'this',
      'process.exit(1)',
      'require("fs")',
      '$json.name.toString()',
      '`${1}`',
      '$json; process',
      'globalThis',
    ];
    for (const a of attempts) {
      expect(() => evaluate(a, scope)).toThrow(ValidationError);
      expect(findExpressionError({ x: `{{ ${a} }}` }, 'parameters')?.field).toBe('parameters.x');
    }
    // Prototype keys reached through data are undefined, not functions.
    expect(evaluate('$json.tags["map"]', scope)).toBeUndefined();
    expect(evaluate('$json.nested["hasOwnProperty"]', scope)).toBeUndefined();
    expect(evaluate('$json.name[0]', scope)).toBe('A');
  });

  it('reports malformed templates', () => {
    expect(() => renderTemplate('{{ $json.a ', scope)).toThrow(/missing "}}"/);
    expect(() => renderTemplate('{{ }}', scope)).toThrow(/empty expression/);
    expect(() => evaluate('$json.', scope)).toThrow(ValidationError);
    expect(() => evaluate('$json[$json.a]', scope)).toThrow(ValidationError);
  });

  it('resolves fast', () => {
    const params = { url: 'https://api/{{ $json.name }}/{{ $json.age }}', body: { a: '{{ $node["Fetch"].json.body.id }}', b: 'plain' } };
    resolveParameters(params, scope);
    const n = 20_000;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) resolveParameters(params, scope);
    const us = Number(process.hrtime.bigint() - t0) / 1000 / n;
    // eslint-disable-next-line no-console
    console.log(`expression resolve: ${us.toFixed(2)} µs per parameters object (3 expressions)`);
    expect(us).toBeLessThan(100);
  });
});

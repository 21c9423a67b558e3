import { MalformedPathError, RouteMatcher } from './route-matcher';

function matcher(): RouteMatcher<string> {
  const m = new RouteMatcher<string>();
  m.add('GET', '/workflows/{id}', 'get workflow');
  m.add('PUT', '/workflows/{id}', 'put workflow');
  m.add('GET', '/workflows/node-definitions', 'node definitions');
  m.add('POST', '/workflows/execute-in-memory', 'execute in memory');
  m.add('GET', '/workflows/{id}/executions/{executionId}', 'execution');
  m.add('GET', '/ai-gateway/vendor-a/v1/models', 'models');
  m.add('*', '/ai-gateway/vendor-a/v1/*', 'vendor proxy');
  m.add('*', '/auth/totp/setup', 'totp');
  return m;
}

describe('RouteMatcher', () => {
  it('prefers a literal segment to a parameter', () => {
    expect(matcher().match('GET', '/workflows/node-definitions')?.entry).toBe('node definitions');
    expect(matcher().match('GET', '/workflows/wf_1')).toMatchObject({ entry: 'get workflow', params: { id: 'wf_1' } });
  });

  it('falls back to a parameter when the literal path lacks the method', () => {
    expect(matcher().match('GET', '/workflows/execute-in-memory')).toMatchObject({ entry: 'get workflow', params: { id: 'execute-in-memory' } });
  });

  it('reports the methods of a known path without the request method', () => {
    const match = matcher().match('DELETE', '/workflows/wf_1');
    expect(match).toMatchObject({ entry: undefined, params: { id: 'wf_1' } });
    expect([...match!.methods.keys()]).toEqual(['GET', 'PUT']);
  });

  it('extracts and decodes several parameters', () => {
    expect(matcher().match('GET', '/workflows/wf%201/executions/ex_2')?.params).toEqual({ id: 'wf 1', executionId: 'ex_2' });
  });

  it('matches wildcards and any-method routes, literal routes first', () => {
    expect(matcher().match('GET', '/ai-gateway/vendor-a/v1/models')?.entry).toBe('models');
    expect(matcher().match('POST', '/ai-gateway/vendor-a/v1/models')?.entry).toBe('vendor proxy');
    expect(matcher().match('POST', '/ai-gateway/vendor-a/v1/chat/completions')?.entry).toBe('vendor proxy');
    expect(matcher().match('GET', '/ai-gateway/vendor-a/v1')).toBeUndefined();
    expect(matcher().match('PATCH', '/auth/totp/setup')?.entry).toBe('totp');
  });

  it('matches no unknown, trailing-slash or empty-segment path', () => {
    for (const path of ['/nope', '/workflows', '/workflows/', '/workflows//executions/x', '/workflows/wf_1/']) {
      expect(matcher().match('GET', path)).toBeUndefined();
    }
  });

  it('rejects bad percent-encoding in a parameter', () => {
    expect(() => matcher().match('GET', '/workflows/%E0%A4%A')).toThrow(MalformedPathError);
  });

  it('refuses a route defined twice and conflicting parameter names', () => {
    const m = matcher();
    expect(() => m.add('GET', '/workflows/{id}', 'again')).toThrow(/defined twice/);
    expect(() => m.add('GET', '/workflows/{workflowId}/metrics', 'x')).toThrow(/conflicts/);
    expect(() => m.add('GET', '/a/*/b', 'x')).toThrow(/last segment/);
  });
});

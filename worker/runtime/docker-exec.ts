import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import {
  ContainerNotFoundError,
  ContainerNotRunningError,
  ExecAbortedError,
  ImageNotFoundError,
  RuntimeUnavailableError,
} from './errors';
import type { ExecOptions, ExecResult, ExecStreamEvent } from './types';

/*
 * Exec plumbing shared by the Docker driver: error mapping, stream framing, running commands
 * to completion or as a stream, and killing them.
 *
 * How a timed-out (or abandoned) exec is killed: every exec gets a random marker in its
 * environment (`PLATFORM_EXEC_ID=<hex>`). Killing runs a second exec that greps
 * /proc/<pid>/environ for that exact record and SIGKILLs every match. Compared with the "write
 * $$ to a pid file" wrapper this
 *   - runs argv unchanged (no /bin/sh wrapper, exit codes and stderr untouched; images without a
 *     shell can still run commands, they just cannot be killed),
 *   - kills the whole tree the command started, also children re-parented to init,
 *   - needs no writable /tmp and works on a remote engine (no host pid access).
 * It needs /bin/sh and a grep with -z (busybox and GNU both have it). The one visible trace is
 * the extra environment variable. Processes that clear their environment escape the kill.
 */

export const EXEC_MARKER_VAR = 'PLATFORM_EXEC_ID';

/* Finds the marked processes and SIGKILLs them; repeats so that children forked between the
   scan and the kill are caught too. $1 is the exact environ record. */
const KILL_SCRIPT = [
  'n=0',
  'while [ $n -lt 5 ]; do',
  '  p=',
  '  for f in $(grep -lsxzF "$1" /proc/[0-9]*/environ); do f=${f#/proc/}; p="$p ${f%/environ}"; done',
  '  [ -z "$p" ] && exit 0',
  '  kill -KILL $p 2>/dev/null',
  '  n=$((n+1))',
  'done',
].join('\n');

/** How long to wait for the output to end after a kill before giving up on the connection. */
const KILL_GRACE_MS = 1500;

// ---------------------------------------------------------------------------------------------
// Errors

interface EngineError {
  statusCode?: number;
  code?: string;
  message?: string;
  json?: { message?: string } | null;
}

const CONNECTION_ERROR_CODES = new Set(['ECONNREFUSED', 'ENOENT', 'EACCES', 'ECONNRESET', 'EHOSTUNREACH', 'ETIMEDOUT', 'EPIPE']);

export function statusOf(err: unknown): number | undefined {
  return (err as EngineError | null)?.statusCode;
}

export function engineMessage(err: unknown): string {
  const e = err as EngineError | null;
  return e?.json?.message ?? e?.message ?? String(err);
}

export function isConnectionError(err: unknown): boolean {
  const e = err as EngineError | null;
  return !!e && e.statusCode === undefined && typeof e.code === 'string' && CONNECTION_ERROR_CODES.has(e.code);
}

/**
 * Maps dockerode errors to the runtime's errors. `containerId`: the call addresses a container,
 * so a 404 "No such container" means it is missing and a 409 "is not running" that it is stopped.
 */
export function mapEngineError(err: unknown, target: { containerId?: string; image?: string } = {}): Error {
  if (isConnectionError(err)) {
    return new RuntimeUnavailableError((err as Error).message, { cause: err });
  }
  const status = statusOf(err);
  const message = engineMessage(err);
  if (status === 404 && target.containerId !== undefined && /no such container/i.test(message)) {
    return new ContainerNotFoundError(target.containerId);
  }
  if (status === 404 && target.image !== undefined && /no such image|not found/i.test(message)) {
    return new ImageNotFoundError(target.image);
  }
  if (status === 409 && target.containerId !== undefined && /not running|is paused|restarting/i.test(message)) {
    return new ContainerNotRunningError(target.containerId);
  }
  return err instanceof Error ? err : new Error(message);
}

// ---------------------------------------------------------------------------------------------
// Multiplexed stream framing (Tty false): 8-byte header [type, 0, 0, 0, length u32 BE] + payload.

export interface Frame {
  /** 0 stdin, 1 stdout, 2 stderr */
  stream: number;
  data: Buffer;
}

/** Incremental decoder for the engine's multiplexed streams; feed chunks, get whole frames. */
export class FrameDecoder {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  push(chunk: Buffer): Frame[] {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    const frames: Frame[] = [];
    while (this.pendingBytes >= 8) {
      const head = this.peek(8);
      const length = head.readUInt32BE(4);
      if (this.pendingBytes < 8 + length) break;
      const all = this.take(8 + length);
      frames.push({ stream: head[0]!, data: all.subarray(8) });
    }
    return frames;
  }

  private peek(n: number): Buffer {
    if (this.pending[0]!.length < n) this.pending = [Buffer.concat(this.pending)];
    return this.pending[0]!.subarray(0, n);
  }

  private take(n: number): Buffer {
    if (this.pending[0]!.length < n) this.pending = [Buffer.concat(this.pending)];
    const first = this.pending[0]!;
    const out = first.subarray(0, n);
    if (first.length === n) this.pending.shift();
    else this.pending[0] = first.subarray(n);
    this.pendingBytes -= n;
    return out;
  }
}

export function decodeFrames(buffer: Buffer): Frame[] {
  return new FrameDecoder().push(buffer);
}

// ---------------------------------------------------------------------------------------------
// Exec

/** Keeps the first `max` bytes written, counts and drops the rest (never blocks the source). */
class CappedSink extends Writable {
  private chunks: Buffer[] = [];
  private kept = 0;
  truncated = false;

  constructor(private readonly max: number) {
    super();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    const room = this.max - this.kept;
    if (chunk.length > room) this.truncated = true;
    if (room > 0) {
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      this.chunks.push(part);
      this.kept += part.length;
    }
    cb();
  }

  get content(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

export interface StartedExec {
  exec: Docker.Exec;
  socket: Duplex;
  marker: string;
}

/** Creates and starts an exec (hijacked connection); writes stdin and half-closes it when given. */
export async function startExec(
  docker: Docker,
  containerId: string,
  options: Pick<ExecOptions, 'argv' | 'cwd' | 'env' | 'stdin'>,
  openStdin = options.stdin !== undefined,
): Promise<StartedExec> {
  const marker = `${EXEC_MARKER_VAR}=${randomBytes(12).toString('hex')}`;
  const env = Object.entries(options.env ?? {}).map(([k, v]) => `${k}=${v}`);
  env.push(marker);
  let exec: Docker.Exec;
  let socket: Duplex;
  try {
    exec = await docker.getContainer(containerId).exec({
      Cmd: options.argv,
      AttachStdin: openStdin,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
      WorkingDir: options.cwd,
      Env: env,
    });
    socket = await exec.start({ hijack: true, stdin: openStdin });
  } catch (err) {
    throw mapEngineError(err, { containerId });
  }
  if (options.stdin !== undefined) {
    // end() after the write half-closes the hijacked connection: the engine closes the process's
    // stdin (EOF) and keeps streaming its output until it exits.
    socket.write(options.stdin);
    socket.end();
  }
  return { exec, socket, marker };
}

/**
 * SIGKILLs every process carrying the exec's marker (see the header comment). Best effort:
 * false when the killer could not run (no /bin/sh or grep in the image, container gone, ...).
 */
export async function killMarked(docker: Docker, containerId: string, marker: string): Promise<boolean> {
  try {
    const exec = await docker.getContainer(containerId).exec({
      Cmd: ['/bin/sh', '-c', KILL_SCRIPT, 'sh', marker],
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
    });
    const socket = await exec.start({ hijack: true, stdin: false });
    socket.resume();
    const ended = await withTimeout(whenEnded(socket), 5000, false);
    socket.destroy();
    return ended && (await exitCodeOf(exec)) === 0;
  } catch {
    return false;
  }
}

/** Resolves (true) when the stream ended, closed or failed. */
export function whenEnded(stream: Duplex): Promise<boolean> {
  if (stream.destroyed || stream.readableEnded) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onEnd = () => {
      stream.off('end', onEnd).off('close', onEnd).off('error', onEnd);
      resolve(true);
    };
    stream.on('end', onEnd).on('close', onEnd).on('error', onEnd);
  });
}

/** Exit code after the output ended; the engine can report Running for a moment longer. */
export async function exitCodeOf(exec: Docker.Exec): Promise<number> {
  const deadline = Date.now() + 2000;
  for (;;) {
    const info = await exec.inspect();
    if (!info.Running || Date.now() > deadline) return info.ExitCode ?? -1;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Kills the marked processes and waits (bounded) for the output to end; then drops the
 * connection. When the killer cannot run, the caller returns at once (the process lives on).
 */
async function killAndDrain(docker: Docker, containerId: string, started: StartedExec, ended: Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 2; attempt++) {
    if (!(await killMarked(docker, containerId, started.marker))) break;
    // A kill racing the exec's own start can miss it: try once more.
    if (await withTimeout(ended, KILL_GRACE_MS, false)) return;
  }
  started.socket.destroy();
}

export async function runExec(docker: Docker, containerId: string, options: ExecOptions): Promise<ExecResult> {
  const { signal } = options;
  if (signal?.aborted) throw new ExecAbortedError();
  const t0 = performance.now();
  const started = await startExec(docker, containerId, options);
  const { socket } = started;
  const stdout = new CappedSink(options.maxOutputBytes);
  const stderr = new CappedSink(options.maxOutputBytes);
  docker.modem.demuxStream(socket, stdout, stderr);
  const ended = whenEnded(socket);
  // The caller going away ends the wait like the timeout does, and kills the process the same way.
  let onAbort = (): void => undefined;
  const abandoned = signal
    ? new Promise<boolean>((resolve) => {
        onAbort = () => resolve(false);
        signal.addEventListener('abort', onAbort, { once: true });
        if (signal.aborted) onAbort();
      })
    : null;

  let timedOut = false;
  try {
    if (!(await withTimeout(abandoned ? Promise.race([ended, abandoned]) : ended, options.timeoutMs, false))) {
      timedOut = !signal?.aborted;
      await killAndDrain(docker, containerId, started, ended);
      if (signal?.aborted) throw new ExecAbortedError();
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    socket.destroy();
  }
  const exitCode = timedOut ? 124 : await exitCodeOf(started.exec).catch((err) => Promise.reject(mapEngineError(err, { containerId })));
  return {
    exitCode,
    stdout: stdout.content,
    stderr: stderr.content,
    stdoutTruncated: stdout.truncated,
    stderrTruncated: stderr.truncated,
    timedOut,
    durationMs: Math.round(performance.now() - t0),
  };
}

/**
 * Streams an exec's output. Reading pauses the connection while more than HIGH_WATER bytes wait
 * for the consumer. Output past maxOutputBytes per stream is dropped.
 */
export async function* streamExec(
  docker: Docker,
  containerId: string,
  options: ExecOptions,
  signal?: AbortSignal,
): AsyncGenerator<ExecStreamEvent> {
  if (signal?.aborted) return;
  const HIGH_WATER = 1 << 20;
  const t0 = performance.now();
  const started = await startExec(docker, containerId, options);
  const { socket } = started;
  const queue: ExecStreamEvent[] = [];
  let queuedBytes = 0;
  let finished = false;
  let wake: (() => void) | null = null;
  const notify = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  const sent = { 1: 0, 2: 0 } as Record<number, number>;
  const decoder = new FrameDecoder();
  socket.on('data', (chunk: Buffer) => {
    for (const frame of decoder.push(chunk)) {
      if (frame.stream !== 1 && frame.stream !== 2) continue;
      const room = options.maxOutputBytes - sent[frame.stream]!;
      if (room <= 0) continue;
      const data = frame.data.length > room ? frame.data.subarray(0, room) : frame.data;
      sent[frame.stream]! += data.length;
      queue.push({ type: frame.stream === 1 ? 'stdout' : 'stderr', data });
      queuedBytes += data.length;
    }
    if (queuedBytes > HIGH_WATER) socket.pause();
    notify();
  });
  const ended = whenEnded(socket).then((v) => {
    finished = true;
    notify();
    return v;
  });

  let timedOut = false;
  let stopped = false; // aborted or timed out
  let killed = false;
  const stop = () => {
    stopped = true;
    notify();
  };
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, options.timeoutMs);
  signal?.addEventListener('abort', stop, { once: true });

  try {
    for (;;) {
      if (stopped) break;
      const event = queue.shift();
      if (event) {
        if (event.type !== 'exit') queuedBytes -= event.data.length;
        if (queuedBytes <= HIGH_WATER / 2 && socket.isPaused()) socket.resume();
        yield event;
        continue;
      }
      if (finished) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
    if (finished && !stopped) {
      const exitCode = await exitCodeOf(started.exec).catch((err) => Promise.reject(mapEngineError(err, { containerId })));
      yield { type: 'exit', exitCode, timedOut: false, durationMs: Math.round(performance.now() - t0) };
    } else if (timedOut) {
      killed = true;
      await killAndDrain(docker, containerId, started, ended);
      yield { type: 'exit', exitCode: 124, timedOut: true, durationMs: Math.round(performance.now() - t0) };
    }
    // Aborted: the iteration ends without an exit event (the finally block kills the process).
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', stop);
    if (!finished && !killed) {
      // Consumer returned early, aborted, or an error: kill what is still running.
      socket.resume();
      await killAndDrain(docker, containerId, started, ended);
    }
    socket.destroy();
  }
}

/** `promise`'s value, or `fallback` when `ms` passes first (the timer does not outlive the race). */
export function withTimeout<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
  });
  return Promise.race([promise, expiry]).finally(() => clearTimeout(timer));
}

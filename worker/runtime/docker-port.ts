import { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import { FrameDecoder, killMarked, startExec } from './docker-exec';

/*
 * A byte stream to a port inside a container: an exec of a forwarder (`nc 127.0.0.1 <port>`)
 * whose stdin/stdout are the two directions. No container address or published port is used,
 * so it works the same on a remote engine.
 */

/** Forwarder stderr kept for the error message when it fails (e.g. "connection refused"). */
const MAX_STDERR = 4096;
/** The engine reports a forwarder that cannot be started on stdout, as text. */
const START_FAILURE = 'OCI runtime exec failed';

/**
 * The Duplex returned by openPortStream. It also carries no-op/simple versions of the net.Socket
 * methods Node's http client calls on a connection (`http.request({ createConnection })`).
 */
export class PortStream extends Duplex {
  private readonly decoder = new FrameDecoder();
  private stderr = '';
  private received = 0;
  private remoteEnded = false;
  private idleMs = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly socket: Duplex,
    /** Called when the stream is destroyed while the forwarder may still run. */
    private readonly onAbandon: () => void,
  ) {
    // Half-open: ending our writes (EOF to the forwarder's stdin) still lets the answer come back.
    super({ allowHalfOpen: true });
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('end', () => this.onRemoteEnd());
    socket.on('close', () => this.onRemoteEnd());
    socket.on('error', (err) => this.destroy(err));
  }

  private onData(chunk: Buffer): void {
    this.touch();
    for (const frame of this.decoder.push(chunk)) {
      if (frame.stream === 2) {
        if (this.stderr.length < MAX_STDERR) this.stderr += frame.data.toString('utf8');
        continue;
      }
      if (frame.stream !== 1) continue;
      if (this.received === 0 && frame.data.subarray(0, START_FAILURE.length).toString() === START_FAILURE) {
        this.stderr += frame.data.toString('utf8');
        continue;
      }
      this.received += frame.data.length;
      if (!this.push(frame.data)) this.socket.pause();
    }
  }

  private onRemoteEnd(): void {
    if (this.remoteEnded) return;
    this.remoteEnded = true;
    if (this.received === 0 && this.stderr.trim()) {
      // Nothing came through and the forwarder complained: connection refused, no nc, ...
      this.destroy(Object.assign(new Error(`port stream failed: ${this.stderr.trim()}`), { code: 'ECONNREFUSED' }));
      return;
    }
    this.push(null);
    // The connection is gone (the forwarder exited): nothing written now could arrive.
    this.end();
  }

  override _read(): void {
    this.socket.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.touch();
    this.socket.write(chunk, callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.socket.end();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    clearTimeout(this.idleTimer);
    if (!this.remoteEnded) this.onAbandon();
    this.socket.destroy();
    callback(error);
  }

  // --- net.Socket look-alikes ---------------------------------------------------------------

  /** Emits 'timeout' after `ms` without traffic (like net.Socket; 0 turns it off). */
  setTimeout(ms: number, callback?: () => void): this {
    this.idleMs = ms;
    if (callback) {
      if (ms > 0) this.once('timeout', callback);
      else this.off('timeout', callback);
    }
    this.touch();
    return this;
  }

  setNoDelay(_noDelay?: boolean): this {
    return this;
  }

  setKeepAlive(_enable?: boolean, _initialDelay?: number): this {
    return this;
  }

  ref(): this {
    return this;
  }

  unref(): this {
    return this;
  }

  /** Node's http client ends a non-keep-alive connection with destroySoon() when present. */
  destroySoon(): void {
    if (this.writableFinished) this.destroy();
    else {
      this.once('finish', () => this.destroy());
      this.end();
    }
  }

  private touch(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    if (this.idleMs > 0 && !this.destroyed) {
      this.idleTimer = setTimeout(() => this.emit('timeout'), this.idleMs);
    }
  }
}

export async function openPortStream(docker: Docker, containerId: string, argv: string[]): Promise<Duplex> {
  const started = await startExec(docker, containerId, { argv }, true);
  // Destroyed before the remote side ended: the forwarder may sit on an open connection (the
  // engine does not end an exec when its client goes away), so kill it.
  return new PortStream(started.socket, () => void killMarked(docker, containerId, started.marker));
}

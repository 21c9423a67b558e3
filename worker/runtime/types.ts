import type { Duplex } from 'node:stream';

/**
 * The container engine as the platform uses it: what the worker tier (lifecycle) and the
 * compute subgraph (interactive calls: exec, files, logs, port forwarding) need. The Docker
 * driver (`docker.ts`) implements it with dockerode; a Kubernetes one would implement the same.
 *
 * Errors: a container that does not exist throws `ContainerNotFoundError`; a path that does not
 * exist `FileNotFoundError`; a file over a size bound `FileTooLargeError` (all in `errors.ts`).
 */
export interface ContainerRuntime {
  /** Resolves when the engine answers. */
  ping(): Promise<void>;

  /** Creates and starts a container; a container that fails to start is removed again. */
  createAndStart(spec: ContainerSpec): Promise<{ containerId: string }>;
  /** Starts an existing (stopped) container. Starting a running one is a no-op. */
  start(containerId: string): Promise<void>;
  /** Stops with SIGTERM, then SIGKILL after `timeoutSeconds`. Stopping a stopped one is a no-op. */
  stop(containerId: string, timeoutSeconds?: number): Promise<void>;
  /** Removes the container (force: also a running one) and its anonymous volumes; a missing one is a no-op. */
  remove(containerId: string): Promise<void>;
  /** State of a container, or null when it does not exist. */
  inspect(containerId: string): Promise<ContainerState | null>;
  /** Containers (running or not) whose labels include every given label. */
  listByLabels(labels: Record<string, string>): Promise<ContainerSummary[]>;

  /** `docker commit`: the container's filesystem (not its volumes) as image `<repository>:<tag>`. */
  commit(containerId: string, repository: string, tag: string, labels?: Record<string, string>): Promise<ImageInfo>;
  /** Tags an existing image as `<repository>:<tag>` (a snapshot of a plain image). */
  tagImage(sourceRef: string, repository: string, tag: string): Promise<ImageInfo>;
  /** Information about an image, or null when it does not exist. */
  imageInfo(ref: string): Promise<ImageInfo | null>;
  /** Removes an image tag; a missing one is a no-op. */
  removeImage(ref: string): Promise<void>;
  /** Creates a named volume when missing (idempotent). */
  ensureVolume(name: string, labels: Record<string, string>): Promise<void>;

  /** Runs a command to completion (bounded by timeoutMs; on expiry the process is killed). */
  exec(containerId: string, options: ExecOptions): Promise<ExecResult>;
  /**
   * Runs a command and yields its output as it comes, ending with one `exit` event. Breaking
   * out of the iteration (or aborting `signal`) kills the process.
   */
  execStream(containerId: string, options: ExecOptions, signal?: AbortSignal): AsyncIterable<ExecStreamEvent>;

  /** The container's output so far (stdout and stderr), oldest first. */
  logs(containerId: string, options: LogOptions): Promise<LogLine[]>;
  /** Follows the container's output from `since` (default: now) until `signal` aborts or the container stops. */
  followLogs(containerId: string, options: { since?: Date; tail?: number }, signal: AbortSignal): AsyncIterable<LogLine>;

  /** One sample of resource use (cumulative counters, for deltas between samples). */
  stats(containerId: string): Promise<StatsSample>;

  /** Entries under `path` (the entry itself when it is a file). Needs a running container. */
  listFiles(containerId: string, path: string, options: { recursive: boolean; limit: number }): Promise<FileEntry[]>;
  /** Writes files (parents created), through the engine's archive API; works stopped or running. */
  writeFiles(containerId: string, files: FileWrite[]): Promise<void>;
  /** Reads one regular file; throws FileTooLargeError past maxBytes, FileNotFoundError, or IsDirectoryError. */
  readFile(containerId: string, path: string, maxBytes: number): Promise<{ content: Buffer; mode: number; size: number }>;

  /**
   * A byte stream to `127.0.0.1:<port>` inside the container, through an exec of the image's
   * `nc` (no container address is ever used). Ends when either side closes.
   */
  openPortStream(containerId: string, port: number): Promise<Duplex>;
}

export interface ContainerSpec {
  /** Engine-side name, unique per engine (`plat-<sandboxId>`). */
  name: string;
  image: string;
  /** Environment of the main process. */
  env: Record<string, string>;
  /** Replaces the image's CMD when given. */
  args?: string[];
  /** Every container carries platform labels (`platform.id`, `platform.workspace`, `platform.kind`, ...). */
  labels: Record<string, string>;
  /** CPU limit in millicores (NanoCpus = cpuMillis × 10⁶). */
  cpuMillis?: number;
  /** Memory limit in MiB. */
  memoryMb?: number;
  /** Whole GPUs by device id; passed as an nvidia device request unless the runtime was built with gpuDeviceRequests: false. */
  gpuDeviceIds?: string[];
  /** Named volumes mounted at absolute paths. */
  volumes?: Array<{ volumeName: string; mountPath: string; readOnly?: boolean }>;
  /** Hostname inside the container. */
  hostname?: string;
}

export interface ContainerState {
  id: string;
  name: string;
  running: boolean;
  /** created, running, paused, restarting, removing, exited, dead */
  status: string;
  exitCode: number | null;
  oomKilled: boolean;
  startedAt: Date | null;
  finishedAt: Date | null;
  labels: Record<string, string>;
  image: string;
}

export interface ContainerSummary {
  id: string;
  name: string;
  labels: Record<string, string>;
  /** running, exited, created, ... */
  state: string;
}

export interface ImageInfo {
  id: string;
  sizeBytes: number;
}

export interface ExecOptions {
  /** argv; a plain command string is run by the caller as ['/bin/sh', '-c', command]. */
  argv: string[];
  cwd?: string;
  env?: Record<string, string>;
  /** Written to the process's stdin, which is then closed. Without it stdin is empty. */
  stdin?: Buffer;
  /** Kills the process after this long. */
  timeoutMs: number;
  /**
   * Kills the process when it aborts (its caller is gone: a cancelled workflow step); the exec
   * then rejects with ExecAbortedError. Streams take their own signal.
   */
  signal?: AbortSignal;
  /** Output kept per stream; the rest is counted and dropped (`stdoutTruncated`). */
  maxOutputBytes: number;
}

export interface ExecResult {
  /** The process's exit code; 124 when it was killed for exceeding timeoutMs. */
  exitCode: number;
  stdout: Buffer;
  stderr: Buffer;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  timedOut: boolean;
  durationMs: number;
}

export type ExecStreamEvent =
  | { type: 'stdout' | 'stderr'; data: Buffer }
  | { type: 'exit'; exitCode: number; timedOut: boolean; durationMs: number };

export interface LogOptions {
  /** Last N lines (of both streams together). */
  tail?: number;
  since?: Date;
  /** Bytes of output returned at most; older lines are dropped first. */
  maxBytes: number;
}

export interface LogLine {
  stream: 'stdout' | 'stderr';
  /** The engine's timestamp of the line. */
  at: Date;
  /** One line without its newline. */
  line: string;
}

export interface StatsSample {
  at: Date;
  /** Cumulative CPU time used by the container, nanoseconds. */
  cpuNanos: number;
  /** Memory in use now, bytes (cache excluded where the engine reports it). */
  memoryBytes: number;
  /** Memory limit, bytes (the host's memory when unlimited). */
  memoryLimitBytes: number;
  /** Cumulative network bytes over every interface. */
  networkRxBytes: number;
  networkTxBytes: number;
}

export interface FileEntry {
  /** Absolute path. */
  path: string;
  name: string;
  type: 'file' | 'directory' | 'symlink' | 'other';
  size: number;
  /** Permission bits, e.g. 0o644. */
  mode: number;
  modifiedAt: Date;
}

export interface FileWrite {
  /** Absolute path. */
  path: string;
  content: Buffer;
  /** Permission bits. @defaultValue 0o644 */
  mode?: number;
}

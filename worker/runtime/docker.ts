import type { Duplex, Readable } from 'node:stream';
import Docker from 'dockerode';
import { ContainerNotFoundError } from './errors';
import { FrameDecoder, decodeFrames, mapEngineError, runExec, statusOf, streamExec } from './docker-exec';
import { listFiles, readFile, writeFiles } from './docker-files';
import { openPortStream } from './docker-port';
import type {
  ContainerRuntime,
  ContainerSpec,
  ContainerState,
  ContainerSummary,
  ExecOptions,
  ExecResult,
  ExecStreamEvent,
  FileEntry,
  FileWrite,
  ImageInfo,
  LogLine,
  LogOptions,
  StatsSample,
} from './types';

export interface DockerRuntimeOptions {
  /** A ready client; otherwise one is built from socketPath/host, or dockerode's default (DOCKER_HOST or /var/run/docker.sock). */
  docker?: Docker;
  socketPath?: string;
  /** Engine over TCP, e.g. `tcp://10.0.0.5:2375` or `http://host:2375`. */
  host?: string;
  /** GPUs as nvidia device requests (default); false: only NVIDIA_VISIBLE_DEVICES is set. */
  gpuDeviceRequests?: boolean;
  /** The port forwarder run inside the container; the port is appended. @defaultValue ['nc', '127.0.0.1'] */
  forwarderCommand?: string[];
}

/** The Docker Engine implementation of {@link ContainerRuntime}, over dockerode. */
export class DockerRuntime implements ContainerRuntime {
  readonly docker: Docker;
  private readonly gpuDeviceRequests: boolean;
  private readonly forwarderCommand: string[];

  constructor(options: DockerRuntimeOptions = {}) {
    this.docker = options.docker ?? new Docker(clientOptions(options));
    this.gpuDeviceRequests = options.gpuDeviceRequests ?? true;
    this.forwarderCommand = options.forwarderCommand ?? ['nc', '127.0.0.1'];
  }

  async ping(): Promise<void> {
    await this.docker.ping().catch((err) => Promise.reject(mapEngineError(err)));
  }

  // --- lifecycle -------------------------------------------------------------------------------

  async createAndStart(spec: ContainerSpec): Promise<{ containerId: string }> {
    const env = Object.entries(spec.env).map(([k, v]) => `${k}=${v}`);
    const gpus = spec.gpuDeviceIds ?? [];
    if (gpus.length > 0 && !this.gpuDeviceRequests) env.push(`NVIDIA_VISIBLE_DEVICES=${gpus.join(',')}`);
    const memory = spec.memoryMb !== undefined ? spec.memoryMb * 1024 * 1024 : undefined;
    const hostConfig: Docker.HostConfig = {
      // tini as pid 1: reaps the zombies exec'd commands leave behind, forwards signals.
      Init: true,
      RestartPolicy: { Name: 'no' },
      NanoCpus: spec.cpuMillis !== undefined ? Math.round(spec.cpuMillis * 1e6) : undefined,
      Memory: memory,
      // Equal to Memory: no swap on top of the limit.
      MemorySwap: memory,
      Mounts: (spec.volumes ?? []).map((v) => ({
        Type: 'volume' as const,
        Source: v.volumeName,
        Target: v.mountPath,
        ReadOnly: v.readOnly ?? false,
      })),
      DeviceRequests:
        gpus.length > 0 && this.gpuDeviceRequests ? [{ Driver: 'nvidia', DeviceIDs: gpus, Capabilities: [['gpu']] }] : undefined,
    };
    let container: Docker.Container;
    try {
      container = await this.docker.createContainer({
        name: spec.name,
        Image: spec.image,
        Cmd: spec.args,
        Env: env,
        Labels: spec.labels,
        Hostname: spec.hostname,
        Tty: false,
        HostConfig: hostConfig,
      });
    } catch (err) {
      throw mapEngineError(err, { image: spec.image });
    }
    try {
      await container.start();
    } catch (err) {
      await container.remove({ force: true, v: true }).catch(() => undefined);
      throw mapEngineError(err, { containerId: container.id });
    }
    return { containerId: container.id };
  }

  async start(containerId: string): Promise<void> {
    try {
      await this.docker.getContainer(containerId).start();
    } catch (err) {
      if (statusOf(err) === 304) return; // already running
      throw mapEngineError(err, { containerId });
    }
  }

  async stop(containerId: string, timeoutSeconds = 10): Promise<void> {
    try {
      await this.docker.getContainer(containerId).stop({ t: timeoutSeconds });
    } catch (err) {
      if (statusOf(err) === 304) return; // already stopped
      throw mapEngineError(err, { containerId });
    }
  }

  async remove(containerId: string): Promise<void> {
    try {
      await this.docker.getContainer(containerId).remove({ force: true, v: true });
    } catch (err) {
      if (statusOf(err) === 404) return;
      // 409 "removal already in progress": someone else is removing it.
      if (statusOf(err) === 409 && /already in progress/i.test(String((err as Error).message))) return;
      throw mapEngineError(err, { containerId });
    }
  }

  async inspect(containerId: string): Promise<ContainerState | null> {
    let info: Docker.ContainerInspectInfo;
    try {
      info = await this.docker.getContainer(containerId).inspect();
    } catch (err) {
      if (statusOf(err) === 404) return null;
      throw mapEngineError(err, { containerId });
    }
    const state = info.State;
    return {
      id: info.Id,
      name: info.Name.replace(/^\//, ''),
      running: state.Running,
      status: state.Status,
      // The engine reports 0 for a container that never ran; only a finished one has an exit code.
      exitCode: state.Running || !engineDate(state.FinishedAt) ? null : state.ExitCode,
      oomKilled: state.OOMKilled,
      startedAt: engineDate(state.StartedAt),
      finishedAt: engineDate(state.FinishedAt),
      labels: info.Config.Labels ?? {},
      image: info.Config.Image,
    };
  }

  async listByLabels(labels: Record<string, string>): Promise<ContainerSummary[]> {
    const label = Object.entries(labels).map(([k, v]) => `${k}=${v}`);
    try {
      const list = await this.docker.listContainers({ all: true, filters: { label } });
      return list.map((c) => ({
        id: c.Id,
        name: (c.Names[0] ?? '').replace(/^\//, ''),
        labels: c.Labels ?? {},
        state: c.State,
      }));
    } catch (err) {
      throw mapEngineError(err);
    }
  }

  // --- images and volumes ------------------------------------------------------------------

  async commit(containerId: string, repository: string, tag: string, labels?: Record<string, string>): Promise<ImageInfo> {
    try {
      // Query and body are separate: the body is the config to merge into the image (the
      // engine keeps the container's own labels and adds these).
      await this.docker.getContainer(containerId).commit({
        _query: { container: containerId, repo: repository, tag, pause: true },
        _body: labels ? { Labels: labels } : {},
      });
    } catch (err) {
      throw mapEngineError(err, { containerId });
    }
    return this.requireImage(`${repository}:${tag}`);
  }

  async tagImage(sourceRef: string, repository: string, tag: string): Promise<ImageInfo> {
    try {
      await this.docker.getImage(sourceRef).tag({ repo: repository, tag });
    } catch (err) {
      throw mapEngineError(err, { image: sourceRef });
    }
    return this.requireImage(`${repository}:${tag}`);
  }

  async imageInfo(ref: string): Promise<ImageInfo | null> {
    try {
      const info = await this.docker.getImage(ref).inspect();
      return { id: info.Id, sizeBytes: info.Size };
    } catch (err) {
      if (statusOf(err) === 404) return null;
      throw mapEngineError(err, { image: ref });
    }
  }

  private async requireImage(ref: string): Promise<ImageInfo> {
    const info = await this.imageInfo(ref);
    if (!info) throw new Error(`image ${ref} vanished right after it was written`);
    return info;
  }

  async removeImage(ref: string): Promise<void> {
    try {
      await this.docker.getImage(ref).remove({ force: true });
    } catch (err) {
      if (statusOf(err) === 404) return;
      throw mapEngineError(err, { image: ref });
    }
  }

  async ensureVolume(name: string, labels: Record<string, string>): Promise<void> {
    try {
      // Creating an existing local volume returns it unchanged (labels included).
      await this.docker.createVolume({ Name: name, Labels: labels });
    } catch (err) {
      if (statusOf(err) === 409) return;
      throw mapEngineError(err);
    }
  }

  // --- exec ----------------------------------------------------------------------------------

  exec(containerId: string, options: ExecOptions): Promise<ExecResult> {
    return runExec(this.docker, containerId, options);
  }

  execStream(containerId: string, options: ExecOptions, signal?: AbortSignal): AsyncIterable<ExecStreamEvent> {
    return streamExec(this.docker, containerId, options, signal);
  }

  openPortStream(containerId: string, port: number): Promise<Duplex> {
    return openPortStream(this.docker, containerId, [...this.forwarderCommand, String(port)]);
  }

  // --- logs and stats ------------------------------------------------------------------------

  async logs(containerId: string, options: LogOptions): Promise<LogLine[]> {
    let raw: Buffer | string;
    try {
      raw = (await this.docker.getContainer(containerId).logs({
        follow: false,
        stdout: true,
        stderr: true,
        timestamps: true,
        tail: options.tail ?? 'all',
        since: options.since ? unixSeconds(options.since) : undefined,
      } as Docker.ContainerLogsOptions & { follow: false })) as Buffer | string;
    } catch (err) {
      throw mapEngineError(err, { containerId });
    }
    const parser = new LogParser();
    const lines = [...parser.push(decodeFrames(Buffer.isBuffer(raw) ? raw : Buffer.from(String(raw)))), ...parser.flush()];
    // Oldest lines go first past maxBytes.
    let bytes = 0;
    let first = lines.length;
    while (first > 0) {
      const size = Buffer.byteLength(lines[first - 1]!.line) + 1;
      if (bytes + size > options.maxBytes) break;
      bytes += size;
      first--;
    }
    return lines.slice(first);
  }

  async *followLogs(containerId: string, options: { since?: Date; tail?: number }, signal: AbortSignal): AsyncIterable<LogLine> {
    if (signal.aborted) return;
    // From `since`; else the last `tail` lines; else only what comes from now on.
    const since = options.since ?? (options.tail === undefined ? new Date() : undefined);
    let stream: Readable;
    try {
      stream = (await this.docker.getContainer(containerId).logs({
        follow: true,
        stdout: true,
        stderr: true,
        timestamps: true,
        tail: options.tail ?? 'all',
        since: since ? unixSeconds(since) : undefined,
      } as Docker.ContainerLogsOptions & { follow: true })) as unknown as Readable;
    } catch (err) {
      throw mapEngineError(err, { containerId });
    }
    const onAbort = () => stream.destroy();
    signal.addEventListener('abort', onAbort, { once: true });
    const decoder = new FrameDecoder();
    const parser = new LogParser();
    try {
      for await (const chunk of stream) {
        yield* parser.push(decoder.push(chunk as Buffer));
      }
      yield* parser.flush();
    } catch (err) {
      if (!signal.aborted) throw mapEngineError(err, { containerId });
    } finally {
      signal.removeEventListener('abort', onAbort);
      stream.destroy();
    }
  }

  async stats(containerId: string): Promise<StatsSample> {
    let s: Docker.ContainerStats;
    try {
      // one-shot: a single sample without the engine's 1 s wait for a "previous" sample.
      s = await this.docker.getContainer(containerId).stats({ stream: false, 'one-shot': true });
    } catch (err) {
      throw mapEngineError(err, { containerId });
    }
    const mem = s.memory_stats ?? ({} as Docker.MemoryStats);
    const memStats = (mem.stats ?? {}) as Partial<Record<string, number>>;
    // As the docker CLI: cgroup v1 reports total_inactive_file, v2 inactive_file; page cache
    // the kernel can drop is not "in use".
    const inactive = memStats.total_inactive_file ?? memStats.inactive_file ?? memStats.cache ?? 0;
    const usage = mem.usage ?? 0;
    let rx = 0;
    let tx = 0;
    for (const net of Object.values(s.networks ?? {})) {
      rx += net.rx_bytes ?? 0;
      tx += net.tx_bytes ?? 0;
    }
    return {
      at: s.read && !s.read.startsWith('0001-') ? new Date(s.read) : new Date(),
      cpuNanos: s.cpu_stats?.cpu_usage?.total_usage ?? 0,
      memoryBytes: Math.max(0, usage - (inactive < usage ? inactive : 0)),
      memoryLimitBytes: mem.limit ?? 0,
      networkRxBytes: rx,
      networkTxBytes: tx,
    };
  }

  // --- files -----------------------------------------------------------------------------------

  listFiles(containerId: string, path: string, options: { recursive: boolean; limit: number }): Promise<FileEntry[]> {
    return listFiles(this.docker, containerId, path, options);
  }

  writeFiles(containerId: string, files: FileWrite[]): Promise<void> {
    return writeFiles(this.docker, containerId, files);
  }

  readFile(containerId: string, path: string, maxBytes: number): Promise<{ content: Buffer; mode: number; size: number }> {
    return readFile(this.docker, containerId, path, maxBytes);
  }
}

export function createDockerRuntime(options: DockerRuntimeOptions = {}): DockerRuntime {
  return new DockerRuntime(options);
}

function clientOptions(options: DockerRuntimeOptions): Docker.DockerOptions | undefined {
  if (options.socketPath) return { socketPath: options.socketPath };
  if (options.host) {
    const url = new URL(/^[a-z]+:\/\//.test(options.host) ? options.host : `tcp://${options.host}`);
    return {
      protocol: url.protocol === 'https:' ? 'https' : 'http',
      host: url.hostname,
      port: url.port || (url.protocol === 'https:' ? 2376 : 2375),
    };
  }
  return undefined; // dockerode: DOCKER_HOST, else /var/run/docker.sock
}

/** Engine timestamps: "0001-01-01T00:00:00Z" means never. */
function engineDate(value: string | undefined): Date | null {
  if (!value || value.startsWith('0001-')) return null;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** The engine takes `since` as "<seconds>.<fraction>" (inclusive). */
function unixSeconds(date: Date): string {
  return (date.getTime() / 1000).toFixed(3);
}

const TIMESTAMP = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d) /;

/** RFC3339Nano → Date (millisecond precision; the fraction is cut, not rounded). */
export function parseEngineTimestamp(value: string): Date | null {
  const m = TIMESTAMP.exec(`${value} `);
  if (!m) return null;
  const fraction = m[2] ? m[2].slice(0, 4) : '';
  return new Date(`${m[1]}${fraction}${m[3]}`);
}

/**
 * Turns log frames (one timestamped message each; long lines come as several frames whose
 * last one ends with a newline) into lines.
 */
class LogParser {
  private open: Partial<Record<'stdout' | 'stderr', LogLine>> = {};

  push(frames: Array<{ stream: number; data: Buffer }>): LogLine[] {
    const out: LogLine[] = [];
    for (const frame of frames) {
      if (frame.stream !== 1 && frame.stream !== 2) continue;
      const stream = frame.stream === 1 ? 'stdout' : 'stderr';
      const text = frame.data.toString('utf8');
      const endsWithNewline = text.endsWith('\n');
      const pieces = (endsWithNewline ? text.slice(0, -1) : text).split('\n');
      for (let i = 0; i < pieces.length; i++) {
        // Every message carries its timestamp; a frame normally holds one message.
        const m = TIMESTAMP.exec(pieces[i]!);
        const at = (m && parseEngineTimestamp(m[0].trimEnd())) || new Date();
        const body = m ? pieces[i]!.slice(m[0].length) : pieces[i]!;
        // A message without a newline (a long line split by the engine) continues in the next one.
        const prev = this.open[stream];
        delete this.open[stream];
        const line: LogLine = prev ? { ...prev, line: prev.line + body } : { stream, at, line: body };
        if (i === pieces.length - 1 && !endsWithNewline) this.open[stream] = line;
        else out.push(line);
      }
    }
    return out;
  }

  flush(): LogLine[] {
    const out = Object.values(this.open).filter((l): l is LogLine => !!l);
    this.open = {};
    return out.sort((a, b) => a.at.getTime() - b.at.getTime());
  }
}

import { requireWorkspaceRole } from '../../../core/access';
import type { RequestContext } from '../../../core/context';
import type { ComputeConfig } from '../../../core/config';
import { NotFoundError, UnauthenticatedError, ValidationError } from '../../../core/errors';
import { ID_PREFIX, hasPrefix } from '../../../core/ids';
import type { ContainerRuntime, ExecOptions, ExecStreamEvent as RuntimeExecEvent } from '../../../worker/runtime/types';
import { octalMode, toSandboxPort, toStatsSample } from '../compute.mapper';
import { ENV_NAME, absolutePath, intInRange, parseIsoDate, parseMode, stringMap } from '../compute.validation';
import { mapRuntimeErrors, toDomainError } from '../runtime-errors';
import type { SandboxEntity } from './sandbox.entity';
import type { SandboxRepository } from './sandbox.repository';
import type { SandboxService } from './sandbox.service';
import type {
  AddPortArgs,
  ExecArgs,
  ExecResult,
  ExecStreamEvent,
  FileContent,
  FileContentArgs,
  FileList,
  ListFilesArgs,
  LogLine,
  LogsArgs,
  SandboxLogs,
  SandboxPort,
  SandboxStatsHistory,
  StatsArgs,
  WriteFilesArgs,
  WriteFilesResult,
} from './sandbox.types';
import { parseWorkflowExecInput, type WorkflowExecResult } from './workflow-exec';

export interface SandboxIoServiceOptions {
  sandboxes: SandboxRepository;
  lifecycle: SandboxService;
  runtime: ContainerRuntime;
  config: ComputeConfig;
  /** Bytes one request body may hold (MAX_BODY_BYTES); file writes are bounded by it. */
  maxBodyBytes: number;
  publicUrl?: string;
}

const DEFAULT_EXEC_TIMEOUT_SECONDS = 60;
const MAX_FILES_PER_WRITE = 100;

/**
 * What reaches into a running sandbox: exec, files, logs, stats and ports. These calls go from
 * the subgraph straight to the engine instead of through the queue: the caller waits for the
 * answer, and a queue hop would only add latency (see the compute README).
 */
export class SandboxIoService {
  constructor(private readonly o: SandboxIoServiceOptions) {}

  async exec(ctx: RequestContext, args: ExecArgs): Promise<ExecResult> {
    return this.execIn(await this.running(ctx, args.id, 'exec'), args);
  }

  /**
   * A workflow step's command (internal route `workflows/sandbox-exec`), run like `exec`. The
   * caller is the platform acting for an execution of `workspaceId`, not a user: the sandbox must
   * belong to that workspace (404 otherwise) and be running (409). A signed user principal, if
   * one ever comes, must also be a member there.
   */
  async execForWorkflow(ctx: RequestContext, body: unknown, signal?: AbortSignal): Promise<WorkflowExecResult> {
    const input = parseWorkflowExecInput(body, this.o.config.execMaxTimeoutSeconds);
    if (ctx.principal) requireWorkspaceRole(ctx, input.workspaceId, 'member');
    const sandbox = await this.o.lifecycle.loadInWorkspace(input.workspaceId, input.sandboxId);
    this.o.lifecycle.requireState(sandbox, 'exec');
    // A cancelled step hangs up: the command is killed rather than left to run out its timeout.
    const result = await this.execIn(sandbox, { id: sandbox.id, command: input.command, timeout: input.timeoutSeconds }, signal);
    return { exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr, timedOut: result.timedOut };
  }

  private async execIn(sandbox: SandboxEntity, args: ExecArgs, signal?: AbortSignal): Promise<ExecResult> {
    const options = { ...this.execOptions(args), ...(signal ? { signal } : {}) };
    const result = await mapRuntimeErrors(sandbox.id, () => this.o.runtime.exec(sandbox.containerId!, options));
    return {
      exitCode: result.exitCode,
      stdout: result.stdout.toString('utf8'),
      stderr: result.stderr.toString('utf8'),
      stdoutTruncated: result.stdoutTruncated,
      stderrTruncated: result.stderrTruncated,
      timedOut: result.timedOut,
      durationMs: result.durationMs,
    };
  }

  /** Checks access and input now (so a bad request fails at subscribe time), then streams. */
  async execStream(ctx: RequestContext, args: ExecArgs): Promise<AsyncIterable<ExecStreamEvent>> {
    const sandbox = await this.running(ctx, args.id, 'exec');
    const options = this.execOptions(args);
    const runtime = this.o.runtime;
    return (async function* () {
      const controller = new AbortController();
      try {
        for await (const event of runtime.execStream(sandbox.containerId!, options, controller.signal)) yield toStreamEvent(event);
      } catch (err) {
        throw toDomainError(err, sandbox.id);
      } finally {
        controller.abort();
      }
    })();
  }

  async listFiles(ctx: RequestContext, args: ListFilesArgs): Promise<FileList> {
    const sandbox = await this.running(ctx, args.id, 'files');
    const path = absolutePath(args.path ?? '/', 'path');
    const limit = intInRange(args.limit, 'limit', 1, 10_000) ?? 1000;
    const entries = await mapRuntimeErrors(sandbox.id, () => this.o.runtime.listFiles(sandbox.containerId!, path, { recursive: Boolean(args.recursive), limit: limit + 1 }));
    return {
      path,
      truncated: entries.length > limit,
      entries: entries.slice(0, limit).map((e) => ({ ...e, mode: octalMode(e.mode), modifiedAt: e.modifiedAt.toISOString() })),
    };
  }

  async writeFiles(ctx: RequestContext, args: WriteFilesArgs): Promise<WriteFilesResult> {
    const sandbox = await this.running(ctx, args.id, 'files');
    if (!Array.isArray(args.files) || args.files.length === 0 || args.files.length > MAX_FILES_PER_WRITE) {
      throw new ValidationError(`files must hold 1 to ${MAX_FILES_PER_WRITE} files`, { field: 'files' });
    }
    const seen = new Set<string>();
    let total = 0;
    const files = args.files.map((file, i) => {
      const path = absolutePath(file.path, `files.${i}.path`);
      if (path.endsWith('/')) throw new ValidationError(`files[${i}].path names a directory`, { field: `files.${i}.path` });
      if (seen.has(path)) throw new ValidationError(`files: ${path} is given twice`, { field: `files.${i}.path` });
      seen.add(path);
      const encoding = file.encoding ?? 'utf8';
      if (encoding !== 'utf8' && encoding !== 'base64') throw new ValidationError(`files[${i}].encoding must be utf8 or base64`, { field: `files.${i}.encoding` });
      if (encoding === 'base64' && !/^[A-Za-z0-9+/]*={0,2}$/.test(file.content)) throw new ValidationError(`files[${i}].content is not base64`, { field: `files.${i}.content` });
      const content = Buffer.from(file.content, encoding);
      total += content.length;
      return { path, content, mode: parseMode(file.mode, `files.${i}.mode`, 0o644) };
    });
    if (total > this.o.maxBodyBytes) throw new ValidationError(`files hold ${total} bytes; at most ${this.o.maxBodyBytes} per request`, { field: 'files' });
    await mapRuntimeErrors(sandbox.id, () => this.o.runtime.writeFiles(sandbox.containerId!, files));
    return { files: files.map((f) => ({ path: f.path, size: f.content.length, mode: octalMode(f.mode) })) };
  }

  async fileContent(ctx: RequestContext, args: FileContentArgs): Promise<FileContent> {
    const sandbox = await this.running(ctx, args.id, 'files');
    const path = absolutePath(args.path, 'path');
    const file = await mapRuntimeErrors(sandbox.id, () => this.o.runtime.readFile(sandbox.containerId!, path, this.o.config.fileReadMaxBytes));
    return { path, size: file.size, mode: octalMode(file.mode), contentBase64: file.content.toString('base64') };
  }

  async logs(ctx: RequestContext, args: LogsArgs): Promise<SandboxLogs> {
    const sandbox = await this.withContainer(ctx, args.id);
    const tail = intInRange(args.tail, 'tail', 1, 10_000) ?? 1000;
    const since = parseIsoDate(args.since, 'since');
    if (!sandbox.containerId) return { sandboxId: sandbox.id, lines: [] };
    const lines = await mapRuntimeErrors(sandbox.id, () => this.o.runtime.logs(sandbox.containerId!, { tail, since, maxBytes: 4 * 1024 * 1024 })).catch((err) => {
      // A sandbox whose container is gone (deleted, or failed before it existed) has no logs.
      if (err instanceof NotFoundError || (err as { code?: string }).code === 'INVALID_STATE') return [];
      throw err;
    });
    return { sandboxId: sandbox.id, lines: lines.map(toLogLine) };
  }

  async logStream(ctx: RequestContext, args: LogsArgs): Promise<AsyncIterable<LogLine>> {
    const sandbox = await this.withContainer(ctx, args.id);
    this.o.lifecycle.requireState(sandbox, 'logs');
    const tail = intInRange(args.tail, 'tail', 0, 10_000) ?? 0;
    const runtime = this.o.runtime;
    return (async function* () {
      const controller = new AbortController();
      try {
        for await (const line of runtime.followLogs(sandbox.containerId!, { tail }, controller.signal)) yield toLogLine(line);
      } catch (err) {
        throw toDomainError(err, sandbox.id);
      } finally {
        controller.abort();
      }
    })();
  }

  async statsHistory(ctx: RequestContext, args: StatsArgs): Promise<SandboxStatsHistory> {
    const sandbox = await this.o.lifecycle.load(ctx, args.id, 'viewer');
    const to = parseIsoDate(args.to, 'to') ?? new Date();
    const from = parseIsoDate(args.from, 'from') ?? new Date(to.getTime() - 3600_000);
    if (from > to) throw new ValidationError('from must not be after to', { field: 'from' });
    const limit = intInRange(args.limit, 'limit', 1, 10_000) ?? 360;
    const rows = await this.o.sandboxes.stats(sandbox.id, from, to, limit);
    return { sandboxId: sandbox.id, intervalSeconds: this.o.config.statsIntervalSeconds, retentionHours: this.o.config.statsRetentionHours, samples: rows.map(toStatsSample) };
  }

  async ports(ctx: RequestContext, id: string): Promise<SandboxPort[]> {
    const sandbox = await this.o.lifecycle.load(ctx, id, 'viewer');
    return (await this.o.sandboxes.ports(sandbox.id)).map((p) => toSandboxPort(p, this.o.publicUrl));
  }

  async addPort(ctx: RequestContext, args: AddPortArgs): Promise<SandboxPort> {
    const sandbox = await this.running(ctx, args.id, 'ports', 'member');
    const port = intInRange(args.port, 'port', 1, 65_535)!;
    const protocol = args.protocol ?? 'http';
    if (protocol !== 'http') throw new ValidationError('protocol must be http (WebSocket upgrades included)', { field: 'protocol' });
    const row = await this.o.sandboxes.upsertPort({ sandboxId: sandbox.id, port, workspaceId: sandbox.workspaceId, protocol, public: Boolean(args.public), createdAt: new Date() });
    return toSandboxPort(row, this.o.publicUrl);
  }

  /**
   * The container behind a proxied port: the port must have been added and the sandbox must run.
   * A private port needs a principal with any role in the workspace; a public one needs none.
   */
  async portTarget(ctx: RequestContext, sandboxId: string, port: number): Promise<{ containerId: string }> {
    const sandbox = hasPrefix(sandboxId, ID_PREFIX.sandbox) ? await this.o.sandboxes.findById(sandboxId) : null;
    const added = sandbox ? await this.o.sandboxes.findPort(sandbox.id, port) : null;
    const member = Boolean(sandbox && ctx.principal?.memberships[sandbox.workspaceId]);
    if (!sandbox || !added || (!added.public && !member)) {
      if (!ctx.principal && sandbox && added) throw new UnauthenticatedError();
      throw new NotFoundError('Sandbox port', `${sandboxId}:${port}`);
    }
    this.o.lifecycle.requireState(sandbox, 'ports');
    return { containerId: sandbox.containerId! };
  }

  private async running(ctx: RequestContext, id: string, operation: 'exec' | 'files' | 'ports', role: 'viewer' | 'member' = 'member'): Promise<SandboxEntity> {
    const sandbox = await this.o.lifecycle.load(ctx, id, role);
    this.o.lifecycle.requireState(sandbox, operation);
    return sandbox;
  }

  private async withContainer(ctx: RequestContext, id: string): Promise<SandboxEntity> {
    return this.o.lifecycle.load(ctx, id, 'viewer');
  }

  private execOptions(args: ExecArgs): ExecOptions {
    const argv = parseCommand(args.command);
    const cwd = args.cwd ? absolutePath(args.cwd, 'cwd') : undefined;
    const env = stringMap(args.env, 'env', { keyPattern: ENV_NAME });
    const timeout = args.timeout ?? DEFAULT_EXEC_TIMEOUT_SECONDS;
    const max = this.o.config.execMaxTimeoutSeconds;
    if (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout <= 0 || timeout > max) {
      throw new ValidationError(`timeout must be more than 0 and at most ${max} seconds`, { field: 'timeout' });
    }
    let stdin: Buffer | undefined;
    if (args.stdin !== null && args.stdin !== undefined) {
      const encoding = args.stdinEncoding ?? 'utf8';
      if (encoding !== 'utf8' && encoding !== 'base64') throw new ValidationError('stdinEncoding must be utf8 or base64', { field: 'stdinEncoding' });
      stdin = Buffer.from(args.stdin, encoding);
    }
    return { argv, cwd, env, stdin, timeoutMs: Math.round(timeout * 1000), maxOutputBytes: this.o.config.execMaxOutputBytes };
  }
}

/** A string runs through /bin/sh -c; an array is the argv itself. */
function parseCommand(command: unknown): string[] {
  if (typeof command === 'string') {
    if (!command.trim()) throw new ValidationError('command must not be empty', { field: 'command' });
    if (command.length > 131_072 || command.includes('\0')) throw new ValidationError('command is too long or holds NUL', { field: 'command' });
    return ['/bin/sh', '-c', command];
  }
  if (Array.isArray(command) && command.length > 0 && command.length <= 4096 && command.every((a) => typeof a === 'string' && !a.includes('\0'))) {
    if (!(command[0] as string)) throw new ValidationError('command[0] must not be empty', { field: 'command' });
    return command as string[];
  }
  throw new ValidationError('command must be a string or a non-empty array of strings', { field: 'command' });
}

function toStreamEvent(event: RuntimeExecEvent): ExecStreamEvent {
  if (event.type === 'exit') return { type: 'exit', data: null, exitCode: event.exitCode, timedOut: event.timedOut, durationMs: event.durationMs };
  return { type: event.type, data: event.data.toString('utf8'), exitCode: null, timedOut: null, durationMs: null };
}

function toLogLine(line: { stream: string; at: Date; line: string }): LogLine {
  return { stream: line.stream, at: line.at.toISOString(), line: line.line };
}

import { ArgsType, Field, Float, ID, InputType, Int, ObjectType } from 'type-graphql';
import { PageArgs, PaginatedList } from '../../../core/pagination';
import { JSONObjectScalar, JSONScalar } from '../../../core/scalars';

@ObjectType({ description: 'A workspace secret given to the container as an environment variable (decrypted only by the worker, at container start).' })
export class SecretRef {
  @Field(() => String, { description: 'Key of the workspace secret.' })
  secretKey: string;

  @Field(() => String, { description: 'Environment variable that receives the value.' })
  envVar: string;
}

@InputType('SecretRefInput')
export class SecretRefInput {
  @Field(() => String)
  secretKey: string;

  @Field(() => String)
  envVar: string;
}

@ObjectType({ description: 'A named workspace volume mounted into the container; shared by every sandbox of the workspace that mounts it. Volumes are not part of snapshots.' })
export class VolumeMount {
  @Field(() => String)
  volume: string;

  @Field(() => String)
  mountPath: string;

  @Field(() => Boolean)
  readOnly: boolean;
}

@InputType('VolumeMountInput')
export class VolumeMountInput {
  @Field(() => String, { description: 'Volume name: lowercase letters, digits, ".", "_" and "-", up to 63 characters. Created on first use.' })
  volume: string;

  @Field(() => String, { description: 'Absolute path in the container (not /).' })
  mountPath: string;

  @Field(() => Boolean, { nullable: true, defaultValue: false })
  readOnly?: boolean;
}

@ObjectType({ description: 'What happens when maxLifetimeSeconds ends.' })
export class TtlPolicy {
  @Field(() => String, { description: 'delete (default) | stop | snapshot-then-stop' })
  action: string;
}

@InputType('TtlPolicyInput')
export class TtlPolicyInput {
  @Field(() => String, { description: 'delete (default) | stop | snapshot-then-stop' })
  action: string;
}

@ObjectType({ description: 'A sandbox: one container with a lifecycle (see the compute README for the state machine).' })
export class Sandbox {
  @Field(() => ID)
  id: string;

  @Field(() => ID)
  workspaceId: string;

  @Field(() => String)
  name: string;

  @Field(() => String, { description: 'pending | starting | running | stopping | stopped | snapshotting | failed | deleting | deleted' })
  status: string;

  @Field(() => String, { nullable: true, description: 'Why the sandbox is in its status (the last transition).' })
  statusReason: string | null;

  @Field(() => String, { description: 'Image the container runs (a snapshot image after booting from one).' })
  image: string;

  @Field(() => ID, { nullable: true })
  snapshotId: string | null;

  @Field(() => Int, { nullable: true })
  cpuMillis: number | null;

  @Field(() => Int, { nullable: true })
  memoryMb: number | null;

  @Field(() => Int)
  gpuCount: number;

  @Field(() => String, { nullable: true })
  gpuType: string | null;

  @Field(() => JSONObjectScalar)
  env: Record<string, string>;

  @Field(() => [String], { nullable: true })
  args: string[] | null;

  @Field(() => [SecretRef])
  secretRefs: SecretRef[];

  @Field(() => [VolumeMount])
  volumeMounts: VolumeMount[];

  @Field(() => JSONObjectScalar, { description: 'User metadata (string values), set with PUT.' })
  labels: Record<string, string>;

  @Field(() => Int, { nullable: true })
  maxLifetimeSeconds: number | null;

  @Field(() => TtlPolicy, { nullable: true })
  onTtlExpire: TtlPolicy | null;

  @Field(() => String, { nullable: true, description: 'ISO 8601: when the lifetime ends (extend-ttl moves it).' })
  expiresAt: string | null;

  @Field(() => ID, { nullable: true })
  createdByUserId: string | null;

  @Field(() => String)
  createdAt: string;

  @Field(() => String)
  updatedAt: string;

  @Field(() => String, { nullable: true })
  startedAt: string | null;

  @Field(() => String, { nullable: true })
  stoppedAt: string | null;

  @Field(() => String, { nullable: true })
  deletedAt: string | null;
}

@ObjectType({ description: 'A page of sandboxes.' })
export class SandboxList extends PaginatedList(Sandbox) {}

@ArgsType()
export class ListSandboxesArgs extends PageArgs {
  @Field(() => ID, { nullable: true, description: 'Default: X-Workspace-ID, else the caller\'s personal workspace.' })
  workspaceId?: string | null;

  @Field(() => String, { nullable: true, description: 'Only this status (deleted sandboxes are listed only this way).' })
  status?: string | null;

  @Field(() => String, { nullable: true })
  name?: string | null;
}

@ArgsType()
export class SandboxIdArgs {
  @Field(() => ID)
  id: string;
}

@ArgsType()
export class CreateSandboxArgs {
  @Field(() => String)
  name: string;

  @Field(() => ID)
  workspaceId: string;

  @Field(() => String, { nullable: true, description: 'Image to boot; exactly one of image and snapshotId.' })
  image?: string | null;

  @Field(() => ID, { nullable: true, description: 'Snapshot to boot from; exactly one of image and snapshotId.' })
  snapshotId?: string | null;

  @Field(() => Int, { nullable: true, description: 'CPU limit, millicores (100 to 64000).' })
  cpuMillis?: number | null;

  @Field(() => Int, { nullable: true, description: 'Memory limit, MiB (16 to 262144).' })
  memoryMb?: number | null;

  @Field(() => Int, { nullable: true, description: 'Whole GPUs (0 to 16) of gpuType from the inventory.' })
  gpuCount?: number | null;

  @Field(() => String, { nullable: true })
  gpuType?: string | null;

  @Field(() => JSONObjectScalar, { nullable: true, description: 'Environment variables: names [A-Za-z_][A-Za-z0-9_]*, string values.' })
  env?: Record<string, unknown> | null;

  @Field(() => [String], { nullable: true, description: 'Command and arguments replacing the image\'s default command.' })
  args?: string[] | null;

  @Field(() => [SecretRefInput], { nullable: true })
  secretRefs?: SecretRefInput[] | null;

  @Field(() => [VolumeMountInput], { nullable: true })
  volumeMounts?: VolumeMountInput[] | null;

  @Field(() => Int, { nullable: true, description: 'Lifetime in seconds from creation (1 to COMPUTE_MAX_LIFETIME_SECONDS).' })
  maxLifetimeSeconds?: number | null;

  @Field(() => TtlPolicyInput, { nullable: true, description: 'Needs maxLifetimeSeconds. Default action: delete.' })
  onTtlExpire?: TtlPolicyInput | null;

  @Field(() => JSONObjectScalar, { nullable: true })
  labels?: Record<string, unknown> | null;
}

@ArgsType()
export class UpdateSandboxArgs {
  @Field(() => ID)
  id: string;

  @Field(() => String, { nullable: true })
  name?: string | null;

  @Field(() => JSONObjectScalar, { nullable: true, description: 'Replaces the labels.' })
  labels?: Record<string, unknown> | null;
}

@ArgsType()
export class ExtendTtlArgs {
  @Field(() => ID)
  id: string;

  @Field(() => Int, { description: 'Seconds added to the current deadline (or to now, when none is set).' })
  seconds: number;
}

@ArgsType()
export class StartFromSnapshotArgs {
  @Field(() => ID)
  id: string;

  @Field(() => ID)
  snapshotId: string;
}

@ArgsType()
export class SnapshotSandboxArgs {
  @Field(() => ID)
  id: string;

  @Field(() => String, { nullable: true, description: 'Default: "<sandbox name> <ISO time>".' })
  name?: string | null;

  @Field(() => String, { nullable: true })
  description?: string | null;

  @Field(() => JSONObjectScalar, { nullable: true })
  labels?: Record<string, unknown> | null;
}

@ArgsType()
export class ExecArgs {
  @Field(() => ID)
  id: string;

  @Field(() => JSONScalar, { description: 'A string (run by /bin/sh -c) or an argv array of strings.' })
  command: unknown;

  @Field(() => String, { nullable: true })
  cwd?: string | null;

  @Field(() => JSONObjectScalar, { nullable: true })
  env?: Record<string, unknown> | null;

  @Field(() => Float, { nullable: true, description: 'Seconds; default 60, at most COMPUTE_EXEC_MAX_TIMEOUT_SECONDS. On expiry the process is killed and exitCode is 124.' })
  timeout?: number | null;

  @Field(() => String, { nullable: true, description: 'Written to stdin, which is then closed.' })
  stdin?: string | null;

  @Field(() => String, { nullable: true, description: 'utf8 (default) or base64: how stdin is encoded.' })
  stdinEncoding?: string | null;
}

@ObjectType({ description: 'What a command did. Output past COMPUTE_EXEC_MAX_OUTPUT_BYTES per stream is dropped (…Truncated).' })
export class ExecResult {
  @Field(() => Int)
  exitCode: number;

  @Field(() => String, { description: 'UTF-8 (invalid sequences replaced).' })
  stdout: string;

  @Field(() => String)
  stderr: string;

  @Field(() => Boolean)
  stdoutTruncated: boolean;

  @Field(() => Boolean)
  stderrTruncated: boolean;

  @Field(() => Boolean)
  timedOut: boolean;

  @Field(() => Int)
  durationMs: number;
}

@ObjectType({ description: 'One event of a streamed command: output chunks, then one exit.' })
export class ExecStreamEvent {
  @Field(() => String, { description: 'stdout | stderr | exit' })
  type: string;

  @Field(() => String, { nullable: true, description: 'Output chunk (UTF-8) of stdout/stderr events.' })
  data: string | null;

  @Field(() => Int, { nullable: true })
  exitCode: number | null;

  @Field(() => Boolean, { nullable: true })
  timedOut: boolean | null;

  @Field(() => Int, { nullable: true })
  durationMs: number | null;
}

@ObjectType()
export class FileEntry {
  @Field(() => String)
  path: string;

  @Field(() => String)
  name: string;

  @Field(() => String, { description: 'file | directory | symlink | other' })
  type: string;

  @Field(() => Float)
  size: number;

  @Field(() => String, { description: 'Permission bits in octal, e.g. 0644.' })
  mode: string;

  @Field(() => String)
  modifiedAt: string;
}

@ObjectType()
export class FileList {
  @Field(() => String)
  path: string;

  @Field(() => [FileEntry])
  entries: FileEntry[];

  @Field(() => Boolean, { description: 'More entries exist than `limit`.' })
  truncated: boolean;
}

@ArgsType()
export class ListFilesArgs {
  @Field(() => ID)
  id: string;

  @Field(() => String, { nullable: true, defaultValue: '/' })
  path?: string;

  @Field(() => Boolean, { nullable: true, defaultValue: false })
  recursive?: boolean;

  @Field(() => Int, { nullable: true, description: 'Default 1000, at most 10000.' })
  limit?: number | null;
}

@InputType('FileWriteInput')
export class FileWriteInput {
  @Field(() => String, { description: 'Absolute path; parent directories are created.' })
  path: string;

  @Field(() => String)
  content: string;

  @Field(() => String, { nullable: true, description: 'utf8 (default) or base64.' })
  encoding?: string | null;

  @Field(() => String, { nullable: true, description: 'Permission bits in octal (default 0644).' })
  mode?: string | null;
}

@ArgsType()
export class WriteFilesArgs {
  @Field(() => ID)
  id: string;

  @Field(() => [FileWriteInput], { description: 'Up to 100 files; the request body is bounded by MAX_BODY_BYTES.' })
  files: FileWriteInput[];
}

@ObjectType()
export class WrittenFile {
  @Field(() => String)
  path: string;

  @Field(() => Float)
  size: number;

  @Field(() => String)
  mode: string;
}

@ObjectType()
export class WriteFilesResult {
  @Field(() => [WrittenFile])
  files: WrittenFile[];
}

@ArgsType()
export class FileContentArgs {
  @Field(() => ID)
  id: string;

  @Field(() => String)
  path: string;
}

@ObjectType({ description: 'A file\'s bytes (base64); REST answers GET /sandboxes/{id}/file-content with the raw bytes.' })
export class FileContent {
  @Field(() => String)
  path: string;

  @Field(() => Float)
  size: number;

  @Field(() => String)
  mode: string;

  @Field(() => String)
  contentBase64: string;
}

@ObjectType()
export class LogLine {
  @Field(() => String, { description: 'stdout | stderr' })
  stream: string;

  @Field(() => String)
  at: string;

  @Field(() => String)
  line: string;
}

@ObjectType()
export class SandboxLogs {
  @Field(() => ID)
  sandboxId: string;

  @Field(() => [LogLine])
  lines: LogLine[];
}

@ArgsType()
export class LogsArgs {
  @Field(() => ID)
  id: string;

  @Field(() => Int, { nullable: true, description: 'Last N lines (default 1000, at most 10000).' })
  tail?: number | null;

  @Field(() => String, { nullable: true, description: 'ISO 8601: only lines from then on.' })
  since?: string | null;
}

@ObjectType({ description: 'A lifecycle transition.' })
export class SandboxLifecycleEvent {
  @Field(() => String, { nullable: true })
  fromStatus: string | null;

  @Field(() => String)
  toStatus: string;

  @Field(() => String)
  reason: string;

  @Field(() => String, { description: 'User id, or platform.' })
  actor: string;

  @Field(() => String)
  at: string;
}

@ObjectType()
export class SandboxLifecycleList extends PaginatedList(SandboxLifecycleEvent) {}

@ArgsType()
export class LifecycleArgs extends PageArgs {
  @Field(() => ID)
  id: string;
}

@ObjectType()
export class StatsSample {
  @Field(() => String)
  at: string;

  @Field(() => Float, { description: 'Cores busy on average since the previous sample.' })
  cpuCores: number;

  @Field(() => Float)
  memoryBytes: number;

  @Field(() => Float)
  memoryLimitBytes: number;

  @Field(() => Float, { description: 'Cumulative.' })
  networkRxBytes: number;

  @Field(() => Float, { description: 'Cumulative.' })
  networkTxBytes: number;
}

@ObjectType()
export class SandboxStatsHistory {
  @Field(() => ID)
  sandboxId: string;

  @Field(() => Int)
  intervalSeconds: number;

  @Field(() => Int)
  retentionHours: number;

  @Field(() => [StatsSample])
  samples: StatsSample[];
}

@ArgsType()
export class StatsArgs {
  @Field(() => ID)
  id: string;

  @Field(() => String, { nullable: true, description: 'ISO 8601; default one hour ago.' })
  from?: string | null;

  @Field(() => String, { nullable: true, description: 'ISO 8601; default now.' })
  to?: string | null;

  @Field(() => Int, { nullable: true, description: 'Newest samples kept (default 360, at most 10000).' })
  limit?: number | null;
}

@ObjectType()
export class SandboxPort {
  @Field(() => ID)
  sandboxId: string;

  @Field(() => Int)
  port: number;

  @Field(() => String)
  protocol: string;

  @Field(() => Boolean)
  public: boolean;

  @Field(() => String, { description: 'Path on the platform\'s edge that reaches the port (HTTP and WebSocket).' })
  path: string;

  @Field(() => String, { nullable: true, description: 'Absolute URL, when PUBLIC_URL is set.' })
  url: string | null;

  @Field(() => String)
  createdAt: string;
}

@ArgsType()
export class AddPortArgs {
  @Field(() => ID)
  id: string;

  @Field(() => Int)
  port: number;

  @Field(() => String, { nullable: true, defaultValue: 'http', description: 'http (WebSocket upgrades included).' })
  protocol?: string;

  @Field(() => Boolean, { nullable: true, defaultValue: false, description: 'Reachable without credentials.' })
  public?: boolean;
}

@ObjectType({ description: 'A sandbox status change (subscription sandboxStatus).' })
export class SandboxStatusChange {
  @Field(() => ID)
  sandboxId: string;

  @Field(() => String, { nullable: true })
  fromStatus: string | null;

  @Field(() => String)
  toStatus: string;

  @Field(() => String)
  reason: string;

  @Field(() => String)
  at: string;
}

import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import {
  ContainerNotFoundError,
  ContainerNotRunningError,
  DockerRuntime,
  ExecAbortedError,
  FileNotFoundError,
  FileTooLargeError,
  IsDirectoryError,
  RuntimeUnavailableError,
  type ContainerSpec,
  type ExecOptions,
  type ExecStreamEvent,
  type LogLine,
} from './index';

/*
 * Against the local Docker engine, with the prebuilt images (never pulled). Containers carry
 * platform.test=docker-runtime plus a per-run label; afterAll removes this run's containers and
 * images (and leftovers of crashed runs older than 10 minutes).
 */

jest.setTimeout(30_000);

const BUSYBOX = 'platform/busybox:latest';
const DEBIAN = 'platform/debian-base:bookworm';
const RUN = randomBytes(4).toString('hex');
const LABELS = { 'platform.test': 'docker-runtime', 'platform.test-run': RUN };
const IMAGE_REPO = `platform/runtime-test-${RUN}`;

const runtime = new DockerRuntime();

function spec(name: string, over: Partial<ContainerSpec> = {}): ContainerSpec {
  return { name: `plat-test-${RUN}-${name}`, image: BUSYBOX, env: {}, args: ['sleep', '3600'], labels: { ...LABELS }, ...over };
}

function run(containerId: string, argv: string[], over: Partial<ExecOptions> = {}) {
  return runtime.exec(containerId, { argv, timeoutMs: 10_000, maxOutputBytes: 1 << 20, ...over });
}

async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Command lines of the container's processes, from /proc (busybox ps truncates nothing, but this works everywhere). */
async function processes(containerId: string): Promise<string[]> {
  const r = await run(containerId, ['/bin/sh', '-c', 'for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < $f 2>/dev/null; echo; done']);
  return r.stdout.toString().split('\n').map((l) => l.trim()).filter(Boolean);
}

let box: string; // busybox, running for the whole file

beforeAll(async () => {
  ({ containerId: box } = await runtime.createAndStart(spec('box', { cpuMillis: 500, memoryMb: 64, env: { GREETING: 'hello world' }, hostname: 'sandbox' })));
});

afterAll(async () => {
  const mine = await runtime.listByLabels({ 'platform.test-run': RUN });
  const stale = (await runtime.docker.listContainers({ all: true, filters: { label: ['platform.test=docker-runtime'] } })).filter(
    (c) => c.Created * 1000 < Date.now() - 10 * 60_000,
  );
  await Promise.all([...mine.map((c) => c.id), ...stale.map((c) => c.Id)].map((id) => runtime.remove(id)));
  const images = await runtime.docker.listImages({ filters: { reference: [`${IMAGE_REPO}`] } });
  await Promise.all(images.map((i) => runtime.removeImage(i.Id)));
  const { Volumes: volumes } = await runtime.docker.listVolumes({ filters: { label: [`platform.test-run=${RUN}`] } });
  await Promise.all((volumes ?? []).map((v) => runtime.docker.getVolume(v.Name).remove().catch(() => undefined)));
});

describe('lifecycle', () => {
  it('creates and starts with limits, labels, env and hostname (no published ports, tini, no restart)', async () => {
    const info = await runtime.docker.getContainer(box).inspect();
    expect(info.HostConfig.NanoCpus).toBe(500_000_000);
    expect(info.HostConfig.Memory).toBe(64 * 1024 * 1024);
    expect(info.HostConfig.MemorySwap).toBe(64 * 1024 * 1024);
    expect(info.HostConfig.Init).toBe(true);
    expect(info.HostConfig.RestartPolicy?.Name).toBe('no');
    expect(info.HostConfig.PortBindings ?? {}).toEqual({});

    const state = await runtime.inspect(box);
    expect(state).toMatchObject({ id: box, name: `plat-test-${RUN}-box`, running: true, status: 'running', exitCode: null, image: BUSYBOX });
    expect(state?.labels).toMatchObject(LABELS);
    expect(state?.startedAt).toBeInstanceOf(Date);

    const listed = await runtime.listByLabels({ 'platform.test-run': RUN, 'platform.test': 'docker-runtime' });
    expect(listed).toContainEqual(expect.objectContaining({ id: box, state: 'running', name: `plat-test-${RUN}-box` }));
    expect(await runtime.listByLabels({ 'platform.test-run': RUN, 'platform.test': 'other' })).toEqual([]);

    const r = await run(box, ['/bin/sh', '-c', 'echo "$GREETING"; hostname; cat /proc/1/cmdline | tr "\\0" " "']);
    expect(r.stdout.toString()).toMatch(/^hello world\nsandbox\n\/sbin\/docker-init -- sleep 3600/);
  });

  it('removes a container whose start fails', async () => {
    // A GPU device request fails at start (not at create) on an engine without the nvidia runtime.
    const s = spec('gpu-fail', { gpuDeviceIds: ['0'] });
    const info = await runtime.docker.info();
    if (info.Runtimes?.nvidia) return; // the engine has GPUs: nothing fails here
    await expect(runtime.createAndStart(s)).rejects.toThrow(/device driver/);
    expect((await runtime.listByLabels({ 'platform.test-run': RUN })).map((c) => c.name)).not.toContain(s.name);
  });

  it('passes GPUs as NVIDIA_VISIBLE_DEVICES only when device requests are off', async () => {
    const plain = new DockerRuntime({ gpuDeviceRequests: false });
    const { containerId } = await plain.createAndStart(spec('gpu-env', { gpuDeviceIds: ['0', '1'] }));
    const info = await runtime.docker.getContainer(containerId).inspect();
    expect(info.Config.Env).toContain('NVIDIA_VISIBLE_DEVICES=0,1');
    expect(info.HostConfig.DeviceRequests ?? []).toEqual([]);
    await plain.remove(containerId);
  });

  it('starts a container whose command does not exist; tini reports 127 (no start failure with Init)', async () => {
    const { containerId } = await runtime.createAndStart(spec('nonexistent', { args: ['/nonexistent'] }));
    const state = await eventually(() => runtime.inspect(containerId), (s) => s?.running === false);
    expect(state).toMatchObject({ running: false, status: 'exited', exitCode: 127 });
    await runtime.remove(containerId);
    expect(await runtime.inspect(containerId)).toBeNull();
  });

  it('keeps files over stop and start; stop and start are idempotent; files can be written while stopped', async () => {
    const { containerId } = await runtime.createAndStart(spec('stopstart'));
    await runtime.writeFiles(containerId, [{ path: '/data/before.txt', content: Buffer.from('before') }]);
    await runtime.stop(containerId, 1);
    await runtime.stop(containerId, 1);
    expect(await runtime.inspect(containerId)).toMatchObject({ running: false, status: 'exited' });
    await expect(run(containerId, ['true'])).rejects.toBeInstanceOf(ContainerNotRunningError);

    await runtime.writeFiles(containerId, [{ path: '/data/new/dir/while-stopped.txt', content: Buffer.from('stopped'), mode: 0o600 }]);
    expect((await runtime.readFile(containerId, '/data/new/dir/while-stopped.txt', 100)).content.toString()).toBe('stopped');

    await runtime.start(containerId);
    await runtime.start(containerId);
    const r = await run(containerId, ['cat', '/data/before.txt', '/data/new/dir/while-stopped.txt']);
    expect(r.stdout.toString()).toBe('beforestopped');
    const dir = await runtime.listFiles(containerId, '/data/new', { recursive: false, limit: 10 });
    expect(dir).toEqual([expect.objectContaining({ name: 'dir', type: 'directory', mode: 0o755 })]);
  });

  it('handles missing containers: remove is a no-op, inspect null, exec ContainerNotFoundError', async () => {
    await runtime.remove('plat-test-does-not-exist');
    expect(await runtime.inspect('plat-test-does-not-exist')).toBeNull();
    await expect(run('plat-test-does-not-exist', ['true'])).rejects.toBeInstanceOf(ContainerNotFoundError);
    await expect(runtime.readFile('plat-test-does-not-exist', '/etc/passwd', 10)).rejects.toBeInstanceOf(ContainerNotFoundError);
    await expect(runtime.stop('plat-test-does-not-exist')).rejects.toBeInstanceOf(ContainerNotFoundError);
  });

  it('reports an unreachable engine as RuntimeUnavailableError', async () => {
    const down = new DockerRuntime({ socketPath: `/tmp/no-docker-${RUN}.sock` });
    await expect(down.ping()).rejects.toBeInstanceOf(RuntimeUnavailableError);
    await expect(down.inspect('x')).rejects.toBeInstanceOf(RuntimeUnavailableError);
    await runtime.ping();
  });
});

describe('images', () => {
  it('commits a container; a container from the image sees the file byte for byte', async () => {
    const content = randomBytes(64 * 1024);
    await runtime.writeFiles(box, [{ path: '/opt/snap/blob.bin', content, mode: 0o755 }]);
    const image = await runtime.commit(box, IMAGE_REPO, 'snap1', { 'platform.snapshot': 'yes' });
    expect(image.id).toMatch(/^sha256:/);
    expect(image.sizeBytes).toBeGreaterThan(content.length);

    const info = await runtime.docker.getImage(`${IMAGE_REPO}:snap1`).inspect();
    expect(info.Config.Labels).toMatchObject({ 'platform.snapshot': 'yes' });

    const { containerId } = await runtime.createAndStart(spec('from-snapshot', { image: `${IMAGE_REPO}:snap1` }));
    const read = await runtime.readFile(containerId, '/opt/snap/blob.bin', 1 << 20);
    expect(read.size).toBe(content.length);
    expect(read.mode).toBe(0o755);
    expect(read.content.equals(content)).toBe(true);

    const tagged = await runtime.tagImage(`${IMAGE_REPO}:snap1`, IMAGE_REPO, 'snap2');
    expect(tagged.id).toBe(image.id);
    await runtime.removeImage(`${IMAGE_REPO}:snap2`);
    await runtime.removeImage(`${IMAGE_REPO}:snap2`);
    expect(await runtime.imageInfo(`${IMAGE_REPO}:snap2`)).toBeNull();
    expect(await runtime.imageInfo(`${IMAGE_REPO}:snap1`)).toEqual(image);
  });

  it('ensures volumes idempotently and mounts them', async () => {
    const volume = `plat-test-${RUN}-vol`;
    await runtime.ensureVolume(volume, LABELS);
    await runtime.ensureVolume(volume, LABELS);
    const { containerId } = await runtime.createAndStart(spec('vol', { volumes: [{ volumeName: volume, mountPath: '/mnt/v' }] }));
    await run(containerId, ['/bin/sh', '-c', 'echo kept > /mnt/v/f']);
    await runtime.remove(containerId);
    const { containerId: second } = await runtime.createAndStart(
      spec('vol2', { volumes: [{ volumeName: volume, mountPath: '/mnt/v', readOnly: true }] }),
    );
    expect((await run(second, ['cat', '/mnt/v/f'])).stdout.toString()).toBe('kept\n');
    expect((await run(second, ['/bin/sh', '-c', 'echo x > /mnt/v/g'])).exitCode).not.toBe(0);
    await runtime.remove(second);
    await runtime.docker.getVolume(volume).remove();
  });
});

describe('exec', () => {
  it('returns exit code, stdout, stderr; honours cwd and env', async () => {
    const r = await run(box, ['/bin/sh', '-c', 'pwd; echo "$A-$B"; echo oops >&2; exit 3'], { cwd: '/etc', env: { A: 'x', B: 'y z' } });
    expect(r).toMatchObject({ exitCode: 3, timedOut: false, stdoutTruncated: false, stderrTruncated: false });
    expect(r.stdout.toString()).toBe('/etc\nx-y z\n');
    expect(r.stderr.toString()).toBe('oops\n');
    expect(r.durationMs).toBeGreaterThanOrEqual(0);
    expect((await run(box, ['true'])).exitCode).toBe(0);
  });

  it('delivers stdin and then EOF (cat exits), and still gets all the output', async () => {
    const input = randomBytes(300 * 1024);
    const r = await run(box, ['cat'], { stdin: input });
    expect(r.exitCode).toBe(0);
    expect(r.stdout.equals(input)).toBe(true);
    const counted = await run(box, ['/bin/sh', '-c', 'wc -c; echo done >&2'], { stdin: Buffer.from('abc') });
    expect(counted.stdout.toString().trim()).toBe('3');
    expect(counted.stderr.toString()).toBe('done\n');
    // Without stdin the process reads EOF at once.
    expect((await run(box, ['cat'], { timeoutMs: 3000 })).timedOut).toBe(false);
  });

  it('keeps the first maxOutputBytes of each stream and flags truncation', async () => {
    const r = await run(box, ['/bin/sh', '-c', 'head -c 200000 /dev/zero; echo short >&2'], { maxOutputBytes: 1000 });
    expect(r.exitCode).toBe(0);
    expect(r.stdout.length).toBe(1000);
    expect(r.stdoutTruncated).toBe(true);
    expect(r.stderr.toString()).toBe('short\n');
    expect(r.stderrTruncated).toBe(false);
  });

  it('kills a command past its timeout, with its children', async () => {
    const t0 = Date.now();
    const r = await run(box, ['sleep', '30'], { timeoutMs: 500 });
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(r).toMatchObject({ timedOut: true, exitCode: 124 });

    const tree = await run(box, ['/bin/sh', '-c', 'sleep 31 & sleep 32 & wait'], { timeoutMs: 500 });
    expect(tree.timedOut).toBe(true);
    const left = await eventually(() => processes(box), (ps) => !ps.some((p) => /^sleep 3[012]\b/.test(p)), 2000);
    expect(left.filter((p) => /^sleep 3[012]\b/.test(p))).toEqual([]);
  });

  it('kills a command, with its children, when its signal aborts, and rejects with ExecAbortedError', async () => {
    const caller = new AbortController();
    setTimeout(() => caller.abort(), 300);
    const t0 = Date.now();
    await expect(run(box, ['/bin/sh', '-c', 'sleep 33 & sleep 34 & wait'], { timeoutMs: 60_000, signal: caller.signal })).rejects.toBeInstanceOf(ExecAbortedError);
    expect(Date.now() - t0).toBeLessThan(5000);
    const left = await eventually(() => processes(box), (ps) => !ps.some((p) => /^sleep 3[34]\b/.test(p)), 2000);
    expect(left.filter((p) => /^sleep 3[34]\b/.test(p))).toEqual([]);
    // Aborted before it starts: nothing runs.
    await expect(run(box, ['touch', '/tmp/never'], { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(ExecAbortedError);
    expect((await run(box, ['/bin/sh', '-c', 'test -e /tmp/never; echo $?'])).stdout.toString()).toBe('1\n');
  });

  it('streams output in order and ends with the exit event', async () => {
    const events: ExecStreamEvent[] = [];
    const argv = ['/bin/sh', '-c', 'echo one; sleep 0.2; echo two >&2; sleep 0.2; echo three; exit 5'];
    for await (const e of runtime.execStream(box, { argv, timeoutMs: 10_000, maxOutputBytes: 1 << 20 })) events.push(e);
    expect(events.map((e) => (e.type === 'exit' ? `exit:${e.exitCode}` : `${e.type}:${e.data.toString().trim()}`))).toEqual([
      'stdout:one',
      'stderr:two',
      'stdout:three',
      'exit:5',
    ]);
  });

  it('kills a streamed command when the consumer stops or the signal aborts; times out with 124', async () => {
    const argv = ['/bin/sh', '-c', 'while true; do echo tick-loop; sleep 0.1; done'];
    for await (const e of runtime.execStream(box, { argv, timeoutMs: 20_000, maxOutputBytes: 1 << 20 })) {
      expect(e).toMatchObject({ type: 'stdout' });
      break;
    }
    expect((await processes(box)).filter((p) => p.includes('tick-loop'))).toEqual([]);

    const controller = new AbortController();
    const seen: string[] = [];
    const argv2 = ['/bin/sh', '-c', 'while true; do echo abort-loop; sleep 0.1; done'];
    for await (const e of runtime.execStream(box, { argv: argv2, timeoutMs: 20_000, maxOutputBytes: 1 << 20 }, controller.signal)) {
      seen.push(e.type);
      controller.abort();
    }
    expect(seen[0]).toBe('stdout');
    expect(seen).not.toContain('exit');
    expect((await processes(box)).filter((p) => p.includes('abort-loop'))).toEqual([]);

    const last: ExecStreamEvent[] = [];
    for await (const e of runtime.execStream(box, { argv: ['sleep', '33'], timeoutMs: 300, maxOutputBytes: 100 })) last.push(e);
    expect(last).toEqual([expect.objectContaining({ type: 'exit', exitCode: 124, timedOut: true })]);
    expect((await processes(box)).filter((p) => p.startsWith('sleep 33'))).toEqual([]);
  });
});

describe('logs and stats', () => {
  let logger: string;
  // stdout and stderr are copied by separate engine goroutines: lines written to both within
  // microseconds may be logged in either order, hence the sleeps.
  beforeAll(async () => {
    ({ containerId: logger } = await runtime.createAndStart(
      spec('logger', { args: ['/bin/sh', '-c', 'echo out1; sleep 0.1; echo err1 >&2; sleep 0.1; echo out2; echo out3; exec sleep 3600'] }),
    ));
    await eventually(() => runtime.logs(logger, { maxBytes: 10_000 }), (l) => l.length === 4);
  });

  /** A line in the container's output, written by an exec through tini's stdout. */
  const say = (text: string) => run(logger, ['/bin/sh', '-c', 'echo "$1" > /proc/1/fd/1', 'sh', text]);

  it('returns lines with stream and timestamp; tail, since and maxBytes bound them', async () => {
    const all = await runtime.logs(logger, { maxBytes: 10_000 });
    expect(all.map((l) => `${l.stream}:${l.line}`)).toEqual(['stdout:out1', 'stderr:err1', 'stdout:out2', 'stdout:out3']);
    for (const l of all) {
      expect(l.at).toBeInstanceOf(Date);
      expect(Math.abs(l.at.getTime() - Date.now())).toBeLessThan(60_000);
    }
    expect((await runtime.logs(logger, { tail: 2, maxBytes: 10_000 })).map((l) => l.line)).toEqual(['out2', 'out3']);
    expect((await runtime.logs(logger, { maxBytes: 10 })).map((l) => l.line)).toEqual(['out2', 'out3']);

    const since = new Date();
    await new Promise((r) => setTimeout(r, 20));
    await say('late line');
    expect((await runtime.logs(logger, { since, maxBytes: 10_000 })).map((l) => l.line)).toEqual(['late line']);
  });

  it('follows new lines until aborted', async () => {
    const controller = new AbortController();
    const seen: LogLine[] = [];
    const done = (async () => {
      for await (const l of runtime.followLogs(logger, {}, controller.signal)) {
        seen.push(l);
        if (seen.length === 2) controller.abort();
      }
    })();
    await new Promise((r) => setTimeout(r, 200));
    await say('follow-1');
    await say('follow-2');
    await done;
    expect(seen.map((l) => l.line)).toEqual(['follow-1', 'follow-2']);

    // With tail: the last lines first, then it ends when the container stops.
    const tailed: string[] = [];
    const c2 = new AbortController();
    const { containerId } = await runtime.createAndStart(spec('short-logger', { args: ['/bin/sh', '-c', 'echo a; echo b; sleep 0.5; echo c'] }));
    for await (const l of runtime.followLogs(containerId, { tail: 1 }, c2.signal)) tailed.push(l.line);
    expect(tailed.slice(-1)).toEqual(['c']);
  });

  it('samples cpu, memory and network', async () => {
    await run(box, ['/bin/sh', '-c', 'i=0; while [ $i -lt 5000 ]; do i=$((i+1)); done']);
    const s = await runtime.stats(box);
    expect(s.at).toBeInstanceOf(Date);
    expect(s.cpuNanos).toBeGreaterThan(1_000_000);
    expect(s.memoryBytes).toBeGreaterThan(0);
    expect(s.memoryBytes).toBeLessThan(64 * 1024 * 1024);
    expect(s.memoryLimitBytes).toBe(64 * 1024 * 1024);
    expect(s.networkRxBytes).toBeGreaterThanOrEqual(0);
    expect(s.networkTxBytes).toBeGreaterThanOrEqual(0);
    const later = await runtime.stats(box);
    expect(later.cpuNanos).toBeGreaterThanOrEqual(s.cpuNanos);
  });
});

describe('files', () => {
  beforeAll(async () => {
    await runtime.writeFiles(box, [
      { path: '/srv/tree/a.txt', content: Buffer.from('alpha') },
      { path: '/srv/tree/sub/b.bin', content: Buffer.alloc(300, 7), mode: 0o600 },
      { path: '/srv/tree/sub/deeper/c', content: Buffer.alloc(0) },
      { path: '/srv/tree/odd | name', content: Buffer.from('x') },
    ]);
    await run(box, ['ln', '-s', 'a.txt', '/srv/tree/link']);
  });

  it('lists one level, recursively, with a limit, a file by itself', async () => {
    const level = await runtime.listFiles(box, '/srv/tree', { recursive: false, limit: 100 });
    expect(level.map((e) => [e.path, e.type])).toEqual([
      ['/srv/tree/a.txt', 'file'],
      ['/srv/tree/link', 'symlink'],
      ['/srv/tree/odd | name', 'file'],
      ['/srv/tree/sub', 'directory'],
    ]);
    const a = level[0]!;
    expect(a).toMatchObject({ name: 'a.txt', size: 5, mode: 0o644 });
    expect(Math.abs(a.modifiedAt.getTime() - Date.now())).toBeLessThan(120_000);

    const deep = await runtime.listFiles(box, '/srv/tree/', { recursive: true, limit: 100 });
    expect(deep.map((e) => e.path)).toEqual([
      '/srv/tree/a.txt',
      '/srv/tree/link',
      '/srv/tree/odd | name',
      '/srv/tree/sub',
      '/srv/tree/sub/b.bin',
      '/srv/tree/sub/deeper',
      '/srv/tree/sub/deeper/c',
    ]);
    expect(deep.find((e) => e.name === 'b.bin')).toMatchObject({ size: 300, mode: 0o600, type: 'file' });
    expect(deep.find((e) => e.name === 'c')).toMatchObject({ size: 0, type: 'file' });

    expect(await runtime.listFiles(box, '/srv/tree', { recursive: true, limit: 3 })).toHaveLength(3);
    const top = await runtime.listFiles(box, '/', { recursive: false, limit: 500 });
    expect(top).toContainEqual(expect.objectContaining({ path: '/srv', name: 'srv', type: 'directory' }));
    expect(await runtime.listFiles(box, '/srv/tree/sub/b.bin', { recursive: false, limit: 10 })).toEqual([
      expect.objectContaining({ path: '/srv/tree/sub/b.bin', name: 'b.bin', type: 'file', size: 300 }),
    ]);
    await expect(runtime.listFiles(box, '/srv/missing', { recursive: false, limit: 10 })).rejects.toBeInstanceOf(FileNotFoundError);
    await expect(runtime.listFiles(box, 'relative/path', { recursive: false, limit: 10 })).rejects.toThrow(/absolute/);
  });

  it('reads files; refuses too large, missing and directories; follows symlinks', async () => {
    expect(await runtime.readFile(box, '/srv/tree/a.txt', 5)).toEqual({ content: Buffer.from('alpha'), mode: 0o644, size: 5 });
    expect((await runtime.readFile(box, '/srv/tree/link', 100)).content.toString()).toBe('alpha');
    const tooLarge = runtime.readFile(box, '/srv/tree/sub/b.bin', 299);
    await expect(tooLarge).rejects.toBeInstanceOf(FileTooLargeError);
    await expect(tooLarge).rejects.toMatchObject({ size: 300, maxBytes: 299 });
    await expect(runtime.readFile(box, '/srv/tree/nope', 10)).rejects.toBeInstanceOf(FileNotFoundError);
    await expect(runtime.readFile(box, '/srv/tree/sub', 10)).rejects.toBeInstanceOf(IsDirectoryError);
  });

  it('works with GNU find/stat on debian', async () => {
    const { containerId } = await runtime.createAndStart(spec('debian', { image: DEBIAN }));
    await runtime.writeFiles(containerId, [
      { path: '/work/x/empty', content: Buffer.alloc(0), mode: 0o640 },
      { path: '/work/x/data.bin', content: Buffer.from([0, 1, 2, 255]) },
    ]);
    const r = await run(containerId, ['bash', '-c', 'echo $BASH_VERSION | cut -c1; cat /work/x/data.bin | od -An -tx1'], { cwd: '/work' });
    expect(r.stdout.toString().replace(/\s+/g, ' ').trim()).toBe('5 00 01 02 ff');
    const entries = await runtime.listFiles(containerId, '/work', { recursive: true, limit: 10 });
    expect(entries.map((e) => [e.path, e.type, e.size, e.mode])).toEqual([
      ['/work/x', 'directory', expect.any(Number), 0o755],
      ['/work/x/data.bin', 'file', 4, 0o644],
      ['/work/x/empty', 'file', 0, 0o640],
    ]);
    const t0 = Date.now();
    expect(await run(containerId, ['sleep', '30'], { timeoutMs: 300 })).toMatchObject({ timedOut: true, exitCode: 124 });
    expect(Date.now() - t0).toBeLessThan(5000);
    expect((await processes(containerId)).filter((p) => p.startsWith('sleep 30'))).toEqual([]);
  });
});

describe('port streams', () => {
  let web: string;
  beforeAll(async () => {
    ({ containerId: web } = await runtime.createAndStart(
      spec('web', { args: ['/bin/sh', '-c', 'mkdir -p /www && echo hi from httpd > /www/index.html && exec httpd -f -p 8080 -h /www'] }),
    ));
    await eventually(() => run(web, ['/bin/sh', '-c', 'netstat -ltn | grep -c :8080']), (r) => r.stdout.toString().trim() === '1');
  });

  const readAll = (stream: Duplex) =>
    new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => resolve(Buffer.concat(chunks).toString()));
      stream.on('error', reject);
    });

  it('carries raw HTTP to a port inside the container', async () => {
    const stream = await runtime.openPortStream(web, 8080);
    const body = readAll(stream);
    stream.write('GET / HTTP/1.0\r\nHost: x\r\n\r\n');
    const text = await body;
    expect(text).toMatch(/^HTTP\/1\.[01] 200 /);
    expect(text).toMatch(/\r\n\r\nhi from httpd\n$/);
    stream.destroy();
  });

  it('serves as the connection of http.request', async () => {
    const get = () =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(
          { host: 'sandbox', path: '/index.html', createConnection: (() => conn) as never, timeout: 5000 },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
          },
        );
        req.on('error', reject);
        req.end();
      });
    // createConnection must return the socket synchronously: open it first.
    let conn = await runtime.openPortStream(web, 8080);
    expect(await get()).toEqual({ status: 200, body: 'hi from httpd\n' });
    conn = await runtime.openPortStream(web, 8080);
    expect(await get()).toEqual({ status: 200, body: 'hi from httpd\n' });
  });

  it('fails when nothing listens', async () => {
    const stream = await runtime.openPortStream(web, 8081);
    await expect(readAll(stream)).rejects.toThrow(/Connection refused|can't connect/);
  });

  it('kills the forwarder when the stream is destroyed early', async () => {
    const { containerId } = await runtime.createAndStart(spec('idle-server', { args: ['nc', '-ll', '-p', '9090', '-e', 'cat'] }));
    await eventually(() => run(containerId, ['/bin/sh', '-c', 'netstat -ltn | grep -c :9090']), (r) => r.stdout.toString().trim() === '1');
    const stream = await runtime.openPortStream(containerId, 9090);
    stream.write('echo me\n');
    const first = await new Promise<string>((resolve) => stream.once('data', (c: Buffer) => resolve(c.toString())));
    expect(first).toBe('echo me\n');
    stream.destroy();
    const ps = await eventually(() => processes(containerId), (p) => !p.some((l) => l.startsWith('nc 127.0.0.1 9090')), 3000);
    expect(ps.filter((l) => l.startsWith('nc 127.0.0.1 9090'))).toEqual([]);
  });
});

import { randomBytes } from 'node:crypto';
import { startTestPlatform, type TestPlatform } from '../harness';
import { createUserAndLogin, loginAdmin, rest } from '../helpers';
import { COMPUTE_TEST_ENV, createRunning, execIn, json, removeDeploymentContainers, type Caller } from './support';

jest.setTimeout(60_000);

let platform: TestPlatform;
let alice: Caller;
let sandbox: any;

beforeAll(async () => {
  platform = await startTestPlatform({ env: { ...COMPUTE_TEST_ENV, MAX_BODY_BYTES: String(256 * 1024), COMPUTE_FILE_READ_MAX_BYTES: '8192', COMPUTE_EXEC_MAX_OUTPUT_BYTES: '4096' } });
  const admin = await loginAdmin(platform);
  const a = await createUserAndLogin(platform, admin.auth, 'alice-io');
  alice = { auth: a.auth, workspaceId: a.defaultWorkspaceId };
  sandbox = await createRunning(platform, alice, { args: ['sh', '-c', 'echo booted; sleep 0.3; echo warning >&2; sleep 3600'] });
});

afterAll(async () => {
  await removeDeploymentContainers(platform);
  await platform?.stop();
});

describe('exec', () => {
  it('runs a shell string with cwd, env and stdin, and answers exit code, output and duration', async () => {
    const result = await execIn(platform, alice, sandbox.id, { command: 'pwd; echo "$A"; cat; echo oops >&2; exit 3', cwd: '/tmp', env: { A: 'from env' }, stdin: 'from stdin\n' });
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ exitCode: 3, stdout: '/tmp\nfrom env\nfrom stdin\n', stderr: 'oops\n', timedOut: false, stdoutTruncated: false });
    expect(result.body.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('runs an argv array without a shell', async () => {
    const result = await execIn(platform, alice, sandbox.id, { command: ['echo', '$HOME; not a shell'] });
    expect(result.body).toMatchObject({ exitCode: 0, stdout: '$HOME; not a shell\n' });
  });

  it('kills a command that outlives its timeout and says so', async () => {
    const started = Date.now();
    const result = await execIn(platform, alice, sandbox.id, { command: ['sleep', '30'], timeout: 0.5 });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.body).toMatchObject({ timedOut: true, exitCode: 124 });
    const ps = await execIn(platform, alice, sandbox.id, { command: 'ps -o args | grep -c "^sleep 30" || true' });
    expect(ps.body.stdout.trim()).toBe('0');
  });

  it('keeps the first bytes of an oversized output and flags it', async () => {
    const result = await execIn(platform, alice, sandbox.id, { command: 'head -c 20000 /dev/zero | tr "\\0" a' });
    expect(result.body.stdoutTruncated).toBe(true);
    expect(result.body.stdout).toHaveLength(4096);
  });

  it.each([
    ['an empty command', { command: '' }, 'command'],
    ['a command that is a number', { command: 42 }, 'command'],
    ['an argv with a number', { command: ['echo', 1] }, 'command'],
    ['a zero timeout', { command: 'true', timeout: 0 }, 'timeout'],
    ['a timeout past the maximum', { command: 'true', timeout: 100000 }, 'timeout'],
    ['a relative cwd', { command: 'true', cwd: 'tmp' }, 'cwd'],
    ['a bad stdin encoding', { command: 'true', stdin: 'x', stdinEncoding: 'utf16' }, 'stdinEncoding'],
  ])('refuses %s with 400', async (_what, body, field) => {
    const result = await execIn(platform, alice, sandbox.id, body);
    expect(result.status).toBe(400);
    expect(result.body.error.details.field).toBe(field);
  });
});

describe('files', () => {
  it('writes text and binary files with modes in one call, lists them and reads the bytes back', async () => {
    const binary = randomBytes(20_000);
    const write = await rest(platform, 'POST', `/sandboxes/${sandbox.id}/files`, {
      files: [
        { path: '/work/dir/hello.txt', content: 'hello, files\n' },
        { path: '/work/dir/run.sh', content: '#!/bin/sh\necho ran\n', mode: '0755' },
        { path: '/work/blob.bin', content: binary.toString('base64'), encoding: 'base64', mode: '600' },
      ],
    }, alice.auth);
    expect(write.status).toBe(200);
    expect((await json(write)).files).toEqual([
      { path: '/work/dir/hello.txt', size: 13, mode: '0644' },
      { path: '/work/dir/run.sh', size: 19, mode: '0755' },
      { path: '/work/blob.bin', size: 20_000, mode: '0600' },
    ]);
    expect((await execIn(platform, alice, sandbox.id, { command: ['/work/dir/run.sh'] })).body.stdout).toBe('ran\n');

    const flat = await json(await rest(platform, 'GET', `/sandboxes/${sandbox.id}/files?path=/work`, undefined, alice.auth));
    expect(flat.entries.map((e: any) => [e.path, e.type])).toEqual([
      ['/work/blob.bin', 'file'],
      ['/work/dir', 'directory'],
    ]);
    const deep = await json(await rest(platform, 'GET', `/sandboxes/${sandbox.id}/files?path=/work&recursive=true`, undefined, alice.auth));
    expect(deep.entries.map((e: any) => e.path)).toEqual(['/work/blob.bin', '/work/dir', '/work/dir/hello.txt', '/work/dir/run.sh']);
    expect(deep.entries.find((e: any) => e.path === '/work/blob.bin')).toMatchObject({ size: 20_000, mode: '0600', name: 'blob.bin' });
    const limited = await json(await rest(platform, 'GET', `/sandboxes/${sandbox.id}/files?path=/work&recursive=true&limit=2`, undefined, alice.auth));
    expect(limited).toMatchObject({ truncated: true });
    expect(limited.entries).toHaveLength(2);

    const text = await rest(platform, 'GET', `/sandboxes/${sandbox.id}/file-content?path=/work/dir/hello.txt`, undefined, alice.auth);
    expect(text.status).toBe(200);
    expect(text.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await text.text()).toBe('hello, files\n');
  });

  it('answers a file\'s raw bytes with a binary content type, and bounds what it reads', async () => {
    const bytes = randomBytes(6000);
    await rest(platform, 'POST', `/sandboxes/${sandbox.id}/files`, { files: [{ path: '/data/small.bin', content: bytes.toString('base64'), encoding: 'base64' }] }, alice.auth);
    const small = await rest(platform, 'GET', `/sandboxes/${sandbox.id}/file-content?path=/data/small.bin`, undefined, alice.auth);
    expect(small.headers.get('content-type')).toBe('application/octet-stream');
    expect(Buffer.from(await small.arrayBuffer()).equals(bytes)).toBe(true);

    await execIn(platform, alice, sandbox.id, { command: 'head -c 10000 /dev/urandom > /data/big.bin' });
    const big = await rest(platform, 'GET', `/sandboxes/${sandbox.id}/file-content?path=/data/big.bin`, undefined, alice.auth);
    expect(big.status).toBe(413);
    expect((await json(big)).error.code).toBe('PAYLOAD_TOO_LARGE');
    const missing = await rest(platform, 'GET', `/sandboxes/${sandbox.id}/file-content?path=/data/nope`, undefined, alice.auth);
    expect(missing.status).toBe(404);
    const directory = await rest(platform, 'GET', `/sandboxes/${sandbox.id}/file-content?path=/data`, undefined, alice.auth);
    expect(directory.status).toBe(400);
    const noPath = await rest(platform, 'GET', `/sandboxes/${sandbox.id}/file-content`, undefined, alice.auth);
    expect(noPath.status).toBe(400);
  });

  it('refuses an oversized write (413) and bad file entries (400), writing none of them', async () => {
    const huge = await rest(platform, 'POST', `/sandboxes/${sandbox.id}/files`, { files: [{ path: '/data/huge.bin', content: 'a'.repeat(300 * 1024) }] }, alice.auth);
    expect(huge.status).toBe(413);
    const bad = [
      [{ path: 'relative.txt', content: 'x' }, 'files.0.path'],
      [{ path: '/ok.txt', content: '%%%', encoding: 'base64' }, 'files.0.content'],
      [{ path: '/ok.txt', content: 'x', mode: '999' }, 'files.0.mode'],
      [{ path: '/ok.txt', content: 'x', encoding: 'latin1' }, 'files.0.encoding'],
    ] as const;
    for (const [file, field] of bad) {
      const response = await rest(platform, 'POST', `/sandboxes/${sandbox.id}/files`, { files: [{ path: '/data/first-ok.txt', content: 'x' }, file] }, alice.auth);
      expect(response.status).toBe(400);
      expect((await json(response)).error.details.field).toBe(field.replace('files.0', 'files.1'));
    }
    const listing = await json(await rest(platform, 'GET', `/sandboxes/${sandbox.id}/files?path=/data`, undefined, alice.auth));
    expect(listing.entries.map((e: any) => e.name)).not.toContain('first-ok.txt');
    expect(listing.entries.map((e: any) => e.name)).not.toContain('huge.bin');
    const missingDir = await rest(platform, 'GET', `/sandboxes/${sandbox.id}/files?path=/no/such/dir`, undefined, alice.auth);
    expect(missingDir.status).toBe(404);
  });
});

describe('logs', () => {
  it('answers the container output with streams, times, tail and since', async () => {
    const logs = await json(await rest(platform, 'GET', `/sandboxes/${sandbox.id}/logs`, undefined, alice.auth));
    expect(logs.lines.map((l: any) => [l.stream, l.line])).toEqual([
      ['stdout', 'booted'],
      ['stderr', 'warning'],
    ]);
    const tail = await json(await rest(platform, 'GET', `/sandboxes/${sandbox.id}/logs?tail=1`, undefined, alice.auth));
    expect(tail.lines.map((l: any) => l.line)).toEqual(['warning']);
    const future = new Date(Date.now() + 60_000).toISOString();
    const none = await json(await rest(platform, 'GET', `/sandboxes/${sandbox.id}/logs?since=${encodeURIComponent(future)}`, undefined, alice.auth));
    expect(none.lines).toEqual([]);
    expect((await rest(platform, 'GET', `/sandboxes/${sandbox.id}/logs?since=yesterday`, undefined, alice.auth)).status).toBe(400);
    expect((await rest(platform, 'GET', `/sandboxes/${sandbox.id}/logs?tail=0`, undefined, alice.auth)).status).toBe(400);
  });
});

import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import type Docker from 'dockerode';
import * as tar from 'tar-stream';
import { FileNotFoundError, FileTooLargeError, IsDirectoryError } from './errors';
import { engineMessage, mapEngineError, runExec, statusOf } from './docker-exec';
import type { FileEntry, FileWrite } from './types';

/*
 * Files inside a container. Listing runs find + stat in the container (a running container is
 * needed); reading and writing go through the engine's archive API (works stopped too).
 */

/* $1 path, $2 "1" for one level, $3 lines at most. The path is an argv element, never part of
   the script. Exit 44 = missing. find -H follows the path itself when it is a symlink (a link
   to a directory lists the directory). head stops find early on huge trees. */
const LIST_SCRIPT = [
  '[ -e "$1" ] || [ -L "$1" ] || exit 44',
  'if [ "$2" = 1 ]; then',
  '  find -H "$1" -maxdepth 1 -exec stat -c "%F|%s|%a|%Y|%n" {} + | head -n "$3"',
  'else',
  '  find -H "$1" -exec stat -c "%F|%s|%a|%Y|%n" {} + | head -n "$3"',
  'fi',
].join('\n');

/* A record starts with the file type and numbers; splitting only before such a prefix keeps
   names that contain a newline in one piece. */
const RECORD_START = /\n(?=[a-z ]+\|\d+\|[0-7]+\|\d+\|\/)/;
const RECORD = /^([a-z ]+)\|(\d+)\|([0-7]+)\|(\d+)\|(\/.*)$/s;

/** Bytes of find output read at most per entry asked for (long paths are rare). */
const LIST_BYTES_PER_ENTRY = 1024;

export function assertAbsolute(path: string): void {
  if (!path.startsWith('/') || path.includes('\0')) throw new Error(`path must be absolute: ${JSON.stringify(path)}`);
}

function fileType(statType: string): FileEntry['type'] {
  switch (statType) {
    case 'regular file':
    case 'regular empty file':
      return 'file';
    case 'directory':
      return 'directory';
    case 'symbolic link':
      return 'symlink';
    default:
      return 'other';
  }
}

export function parseStatOutput(output: string): FileEntry[] {
  const entries: FileEntry[] = [];
  for (const record of output.split(RECORD_START)) {
    const m = RECORD.exec(record.replace(/\n$/, ''));
    if (!m) continue; // a record cut by the output bound, or noise
    const path = m[5]!;
    entries.push({
      path,
      name: posix.basename(path),
      type: fileType(m[1]!),
      size: Number(m[2]),
      mode: parseInt(m[3]!, 8),
      modifiedAt: new Date(Number(m[4]) * 1000),
    });
  }
  return entries;
}

export async function listFiles(
  docker: Docker,
  containerId: string,
  path: string,
  options: { recursive: boolean; limit: number },
): Promise<FileEntry[]> {
  assertAbsolute(path);
  const limit = Math.max(0, Math.floor(options.limit));
  const root = path.replace(/\/+$/, '') || '/';
  const result = await runExec(docker, containerId, {
    argv: ['/bin/sh', '-c', LIST_SCRIPT, 'sh', root, options.recursive ? '0' : '1', String(limit + 1)],
    timeoutMs: 30_000,
    maxOutputBytes: (limit + 1) * LIST_BYTES_PER_ENTRY,
  });
  if (result.exitCode === 44) throw new FileNotFoundError(path);
  if (result.timedOut) throw new Error(`listing ${path} timed out`);
  const all = parseStatOutput(result.stdout.toString('utf8'));
  // A record cut by the byte bound would parse as a shorter path: drop it.
  if (result.stdoutTruncated) all.pop();
  // find prints the path itself first: a directory is not part of its own listing; anything
  // else (a file) is the answer.
  const self = all.find((e) => e.path === root);
  const children = all.filter((e) => e.path !== root);
  if (self && self.type !== 'directory' && children.length === 0) return [self];
  if (!self && children.length === 0 && result.exitCode !== 0) {
    throw new Error(`listing ${path} failed (exit ${result.exitCode}): ${result.stderr.toString('utf8').trim()}`);
  }
  return children.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)).slice(0, limit);
}

export function buildTar(files: FileWrite[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    pack.on('data', (c) => chunks.push(c as Buffer));
    pack.on('end', () => resolve(Buffer.concat(chunks)));
    pack.on('error', reject);
  });
  const mtime = new Date();
  for (const file of files) {
    assertAbsolute(file.path);
    const name = posix.normalize(file.path).replace(/^\/+/, '');
    if (!name || name.endsWith('/')) throw new Error(`not a file path: ${file.path}`);
    // Docker's archive extraction creates missing parent directories (0755, root), so no
    // directory entries are needed.
    pack.entry({ name, size: file.content.length, mode: file.mode ?? 0o644, mtime, type: 'file' }, file.content);
  }
  pack.finalize();
  return done;
}

export async function writeFiles(docker: Docker, containerId: string, files: FileWrite[]): Promise<void> {
  if (files.length === 0) return;
  const archive = await buildTar(files);
  try {
    await docker.getContainer(containerId).putArchive(archive, { path: '/' });
  } catch (err) {
    throw mapEngineError(err, { containerId });
  }
}

const MAX_SYMLINK_HOPS = 8;

/**
 * Reads one regular file through the archive API. A symlink is followed (up to 8 hops, resolved
 * inside the container). The size comes from the tar header, so a file past maxBytes is refused
 * before any of its content is read, and never more than maxBytes are buffered.
 */
export async function readFile(
  docker: Docker,
  containerId: string,
  path: string,
  maxBytes: number,
): Promise<{ content: Buffer; mode: number; size: number }> {
  assertAbsolute(path);
  let current = path;
  for (let hop = 0; hop <= MAX_SYMLINK_HOPS; hop++) {
    const result = await readArchiveEntry(docker, containerId, current, path, maxBytes);
    if ('content' in result) return result;
    current = posix.resolve(posix.dirname(current), result.linkTarget);
  }
  throw new Error(`too many levels of symbolic links: ${path}`);
}

async function readArchiveEntry(
  docker: Docker,
  containerId: string,
  path: string,
  requested: string,
  maxBytes: number,
): Promise<{ content: Buffer; mode: number; size: number } | { linkTarget: string }> {
  let archive: Readable;
  try {
    archive = (await docker.getContainer(containerId).getArchive({ path })) as unknown as Readable;
  } catch (err) {
    if (statusOf(err) === 404 && /could not find the file/i.test(engineMessage(err))) throw new FileNotFoundError(requested);
    throw mapEngineError(err, { containerId });
  }
  const extract = tar.extract();
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      archive.unpipe(extract);
      archive.destroy();
      extract.destroy();
      fn();
    };
    extract.on('entry', (header, stream, next) => {
      if (settled) return stream.resume();
      if (header.type === 'directory') return finish(() => reject(new IsDirectoryError(requested)));
      if (header.type === 'symlink') return finish(() => resolve({ linkTarget: header.linkname ?? '' }));
      if (header.type !== 'file' && header.type !== 'contiguous-file') {
        return finish(() => reject(new Error(`not a regular file: ${requested} (${header.type})`)));
      }
      const size = header.size ?? 0;
      if (size > maxBytes) return finish(() => reject(new FileTooLargeError(requested, size, maxBytes)));
      const chunks: Buffer[] = [];
      stream.on('data', (c) => chunks.push(c as Buffer));
      stream.on('end', () => {
        const mode = (header.mode ?? 0o644) & 0o7777;
        finish(() => resolve({ content: Buffer.concat(chunks), mode, size }));
        next();
      });
    });
    extract.on('finish', () => finish(() => reject(new FileNotFoundError(requested))));
    extract.on('error', (err) => finish(() => reject(err)));
    archive.on('error', (err) => finish(() => reject(err)));
    archive.pipe(extract);
  });
}

import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../core/paths';

/**
 * Runs a built script (`dist/<script>`) in its own process, as docker-compose would run a
 * service; its stderr is passed on prefixed with `name` (only lines matching `only`, when given).
 */
export function startService(name: string, script: string, env: Record<string, string>, only?: RegExp): ChildProcess {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'dist', script)], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr!.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    if (!only || only.test(text)) process.stderr.write(`[${name}] ${text}`);
  });
  return child;
}

/** Polls `url` until it answers 2xx (or anything at all, with `anyAnswer`), bounded by `timeoutMs`. */
export async function waitForService(url: string, options: { timeoutMs?: number; anyAnswer?: boolean } = {}): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (response.ok || options.anyAnswer) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not come up`);
}

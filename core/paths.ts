import { existsSync } from 'node:fs';
import path from 'node:path';

/** The repository root (the folder with package.json), from source or from dist/ alike. */
export const REPO_ROOT: string = (() => {
  let dir = __dirname;
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) return process.cwd();
    dir = parent;
  }
  return dir;
})();

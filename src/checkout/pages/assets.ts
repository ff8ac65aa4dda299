import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** A bundled file the pages load, with its ETag. */
export interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

const TYPES: Record<string, string> = {
  'checkout.js': 'text/javascript; charset=utf-8',
  'checkout.css': 'text/css; charset=utf-8',
};

/** The project root: the nearest folder above this file with a package.json (src/ or dist/src/). */
function projectRoot(): string {
  let dir = __dirname;
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('package.json not found above ' + __dirname);
    dir = up;
  }
  return dir;
}

/**
 * The pages' script and stylesheet, bundled into public/ by scripts/build-client.js (run by the
 * build), read once at start-up.
 * @throws Error naming the missing file and the command that makes it.
 */
export function loadAssets(): Map<string, Asset> {
  const dir = join(projectRoot(), 'public');
  const assets = new Map<string, Asset>();
  for (const [name, type] of Object.entries(TYPES)) {
    const path = join(dir, name);
    if (!existsSync(path)) {
      throw new Error(`${path} is missing: run \`npm run build\` (or \`npm run build:client\`)`);
    }
    const body = readFileSync(path);
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"`;
    assets.set(name, { body, type, etag });
  }
  return assets;
}

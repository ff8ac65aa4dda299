import { MetadataStorage } from '@mikro-orm/core';
import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';

/** Where the modules live: `src/` under ts-jest, `dist/src/` when compiled. */
const SOURCE_ROOT = join(__dirname, '..');
const ENTITY_FILE = /\.entity\.(js|ts)$/;

type EntityClass = abstract new (...args: never[]) => object;

let discovered: EntityClass[] | undefined;

/**
 * Every entity of the service, found where each module keeps its own: `<module>/entities/
 * *.entity.ts`. A new module adds its entity files and nothing here; the server, the migration
 * step, the MikroORM CLI and the tests all see the same set. Discovery loads the files with
 * `require` (no MikroORM folder globbing at run time) and keeps the classes MikroORM's `@Entity`
 * decorator registered; sorted by name, so the order never depends on the file system.
 */
export function discoverEntities(root = SOURCE_ROOT): EntityClass[] {
  if (discovered && root === SOURCE_ROOT) return discovered;
  const files = entityFiles(root);
  const decorated = () => Object.values(MetadataStorage.getMetadata()).map((m) => m.class);
  const entities = new Set<EntityClass>();
  for (const file of files) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const exported = require(file) as Record<string, unknown>;
    const known = decorated();
    for (const value of Object.values(exported)) {
      if (typeof value === 'function' && known.includes(value)) entities.add(value as EntityClass);
    }
  }
  const result = [...entities].sort((a, b) => a.name.localeCompare(b.name));
  if (root === SOURCE_ROOT) discovered = result;
  return result;
}

function entityFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== 'node_modules') found.push(...entityFiles(path));
    else if (basename(dir) === 'entities' && ENTITY_FILE.test(entry.name)) found.push(path);
  }
  return found.sort();
}

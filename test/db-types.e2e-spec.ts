import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { generateStatementTypes } from '../src/database/statement-types';
import { createTestDatabase } from './setup/test-database';

/**
 * The repositories' row and parameter types are pgtyped's, generated from the migrated schema
 * (`npm run db:types`). Generated again here, from the statements as they are and the
 * migrations as they are, into a copy of the tree: they must be the committed ones. A migration
 * that changes a column a statement reads, or a statement changed without `npm run db:types`,
 * fails here.
 */
const ROOT = join(__dirname, '..');
const SRC = join(ROOT, 'src');

function files(dir: string, suffix: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith(suffix))
    .sort();
}

describe('generated statement types (pgtyped) against the migrations', () => {
  let database: { url: string; drop: () => Promise<void> };
  let copy: string;
  beforeAll(async () => {
    database = await createTestDatabase();
    copy = mkdtempSync(join(tmpdir(), 'db-types-'));
  });
  afterAll(async () => {
    await database.drop();
    rmSync(copy, { recursive: true, force: true });
  });

  it('are what the committed *.repository.types.ts files say, file for file', () => {
    for (const file of files(SRC, '.repository.ts')) {
      cpSync(join(SRC, file), join(copy, 'src', file));
    }
    const config = JSON.parse(readFileSync(join(ROOT, 'pgtyped.config.json'), 'utf8')) as object;
    writeFileSync(join(copy, 'pgtyped.config.json'), JSON.stringify(config));
    generateStatementTypes(database.url, join(copy, 'pgtyped.config.json'), copy);

    const generated = files(join(copy, 'src'), '.repository.types.ts');
    expect(generated).toEqual(files(SRC, '.repository.types.ts'));
    expect(generated.length).toBeGreaterThan(0);
    for (const file of generated) {
      expect([relative(ROOT, join(SRC, file)), readFileSync(join(SRC, file), 'utf8')]).toEqual([
        relative(ROOT, join(SRC, file)),
        readFileSync(join(copy, 'src', file), 'utf8'),
      ]);
    }
  });
});

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * pgtyped's CLI script, found up from this file (its package exports only an ESM entry, which
 * `require.resolve` does not see).
 */
function pgtypedCli(): string {
  for (let dir = __dirname; dir !== dirname(dir); dir = dirname(dir)) {
    const script = join(dir, 'node_modules', '@pgtyped', 'cli', 'lib', 'index.js');
    if (existsSync(script)) return script;
  }
  throw new Error('@pgtyped/cli is not installed (a development dependency: npm install)');
}

/**
 * Runs pgtyped's CLI (a development dependency) with `config` against the migrated database at
 * `url`: it writes each repository's `*.repository.types.ts` (`npm run db:types`, and the drift
 * test `test/db-types.e2e-spec.ts` into a copy of the tree).
 * @throws Error with pgtyped's output when it fails (a statement the schema refuses, say).
 */
export function generateStatementTypes(url: string, config: string, cwd = process.cwd()): void {
  const result = spawnSync(process.execPath, [pgtypedCli(), '-c', config, '--uri', url], {
    cwd,
    encoding: 'utf8',
  });
  // pgtyped reports a statement the schema refuses and goes on, exiting 0 with that file's
  // types left as they were: its own report is what tells.
  const output = `${result.stdout}${result.stderr}`;
  if (result.status !== 0 || /^Error processing /m.test(output)) {
    throw new Error(`pgtyped failed (exit ${result.status}):\n${output}`);
  }
}

import { rm } from 'node:fs/promises';
import type { EmbeddedPostgresHandle } from '../../src/database/embedded-postgres';

/** Stops the embedded PostgreSQL of the run and removes its files, whatever the results. */
export default async function globalTeardown(): Promise<void> {
  const state = (globalThis as { __testPg?: { pg: EmbeddedPostgresHandle; dir: string } }).__testPg;
  if (!state) return;
  await state.pg.stop();
  await rm(state.dir, { recursive: true, force: true });
}

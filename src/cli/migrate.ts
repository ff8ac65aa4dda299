/** `npm run db:migrate`: applies pending migrations to the configured database and exits. */
import { loadConfig } from '../config/load-config';
import { openDatabase } from '../database/database-connection';
import { runMigrations } from '../database/migrate';
import { runCli } from './run-cli';

runCli(async (out) => {
  const config = loadConfig();
  const db = await openDatabase(config);
  try {
    const applied = await runMigrations(db.url);
    out(applied.length ? `Applied ${applied.join(', ')}` : 'Database is up to date.');
  } finally {
    await db.release();
  }
});

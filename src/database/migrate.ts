import { MikroORM } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import { mikroOrmOptions } from './mikro-orm.options';

/** Arbitrary constant: the advisory lock that serialises migrations across starting instances. */
const MIGRATION_LOCK = 7_351_202_611;

/**
 * Applies pending migrations. Runs as its own step before the app starts (never in a module
 * hook); concurrent starters wait on an advisory lock, so each migration runs once.
 * Returns the names of the migrations it applied.
 */
export async function runMigrations(url: string): Promise<string[]> {
  const lock = new Client({ connectionString: url });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const orm = await MikroORM.init(mikroOrmOptions(url, { pool: { min: 0, max: 2 } }));
    try {
      const applied = await orm.getMigrator().up();
      return applied.map((m) => m.name);
    } finally {
      await orm.close(true);
    }
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await lock.end();
  }
}

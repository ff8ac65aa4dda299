import { MikroORM } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import { MIGRATIONS } from './migrations';
import { MIGRATIONS_TABLE, mikroOrmOptions } from './mikro-orm.options';

/** Arbitrary constant: the advisory lock that serialises migrations across starting instances. */
export const MIGRATION_LOCK = 7_351_202_611;

/**
 * The database was migrated by newer code than this process's: it names migrations this build
 * does not have. Running on it could write rows in a shape the newer code no longer expects (or
 * read columns that changed meaning), so the process refuses to start; the operator deploys the
 * newer build (docs/deployment.md, "Upgrading").
 */
export class SchemaAheadError extends Error {
  constructor(readonly unknown: readonly string[]) {
    super(
      `The database schema is newer than this build: it has ${unknown.length} migration(s) this ` +
        `build does not know (${unknown.slice(0, 3).join(', ')}${unknown.length > 3 ? ', …' : ''}). ` +
        'Start the build that applied them (or a newer one); this one refuses to run on it.',
    );
    this.name = 'SchemaAheadError';
  }
}

/**
 * Applies pending migrations. Runs as its own step before the app starts (never in a module
 * hook); concurrent starters wait on an advisory lock, so each migration runs once (ten instances
 * started at once: one migrates, nine wait, then find nothing to do).
 * Returns the names of the migrations it applied.
 * @throws SchemaAheadError when the database has migrations this build does not know
 */
export async function runMigrations(url: string): Promise<string[]> {
  const lock = new Client({ connectionString: url });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const unknown = await unknownMigrations(lock);
    if (unknown.length) throw new SchemaAheadError(unknown);
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

/** Where this build stands against the database's migrations. */
export interface SchemaState {
  /** Migrations of this build not applied yet. */
  readonly pending: readonly string[];
  /** Migrations applied by a newer build, unknown to this one. */
  readonly unknown: readonly string[];
}

/** Reads the applied migrations (readiness: a build whose migrations are not all applied is not ready). */
export async function schemaState(
  query: (text: string) => Promise<readonly { name: string }[]>,
): Promise<SchemaState> {
  const applied = new Set((await query(appliedSql())).map((r) => r.name));
  const known = new Set(MIGRATIONS.map((m) => m.name));
  return {
    pending: [...known].filter((name) => !applied.has(name)),
    unknown: [...applied].filter((name) => !known.has(name)),
  };
}

function appliedSql(): string {
  return `SELECT name FROM ${MIGRATIONS_TABLE}`;
}

async function unknownMigrations(client: Client): Promise<string[]> {
  const exists = await client.query<{ table: string | null }>('SELECT to_regclass($1) AS table', [
    MIGRATIONS_TABLE,
  ]);
  if (!exists.rows[0]?.table) return []; // a fresh database
  const state = await schemaState(
    async (text) => (await client.query<{ name: string }>(text)).rows,
  );
  return [...state.unknown];
}

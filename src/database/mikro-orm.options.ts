import type { Options } from '@mikro-orm/core';
import { defineConfig, PostgreSqlDriver } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { discoverEntities } from './entities';
import { MIGRATIONS } from './migrations';

export const MIGRATIONS_TABLE = 'mikro_orm_migrations';

/** How long a session may sit idle inside a transaction before PostgreSQL ends it. */
export const IDLE_TRANSACTION_TIMEOUT_MS = 60_000;

/** MikroORM options shared by the server, the CLIs and the tests. */
export function mikroOrmOptions(
  clientUrl: string,
  overrides: Partial<Options<PostgreSqlDriver>> = {},
): Options<PostgreSqlDriver> {
  return defineConfig({
    clientUrl,
    entities: discoverEntities(),
    extensions: [Migrator],
    forceUtcTimezone: true,
    allowGlobalContext: false,
    ignoreUndefinedInQuery: true,
    debug: false,
    pool: { min: 0, max: 10 },
    driverOptions: {
      // A transaction here never waits on anything but its own statements (no RPC call is made
      // inside one), so one idle for a minute belongs to a process that stalled (a VM pause, a
      // SIGSTOP) while holding row locks: PostgreSQL ends its session, the locks go, and the
      // other instances take its work over instead of skipping the locked rows indefinitely.
      connection: {
        options: `-c idle_in_transaction_session_timeout=${IDLE_TRANSACTION_TIMEOUT_MS}`,
        // pg's pipelining: a statement is sent as soon as it is queued, not after the answer to
        // the one before. Code that awaits each statement sends the same messages as without it;
        // `Db.pipelined` starts independent reads together and waits for them once.
        pipeline: true,
      },
    },
    migrations: {
      tableName: MIGRATIONS_TABLE,
      migrationsList: MIGRATIONS,
      snapshot: true,
      snapshotName: '.snapshot',
      transactional: true,
      allOrNothing: true,
      emit: 'ts',
      silent: true,
    },
    ...overrides,
  });
}

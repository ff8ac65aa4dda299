import type { Options } from '@mikro-orm/core';
import { defineConfig, PostgreSqlDriver } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { discoverEntities } from './entities';
import { MIGRATIONS } from './migrations';

export const MIGRATIONS_TABLE = 'mikro_orm_migrations';

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

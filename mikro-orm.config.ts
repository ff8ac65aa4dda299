/**
 * Configuration for the MikroORM CLI (`npm run db:migration:create`), compiled to
 * `dist/mikro-orm.config.js`. The wrapper script provides DATABASE_URL (embedded PostgreSQL when
 * unset). New migrations are written as TypeScript into `src/database/migrations`; add each one
 * to `src/database/migrations/index.ts` (a test fails when one is missing).
 */
import { mikroOrmOptions } from './src/database/mikro-orm.options';

const url = process.env.DATABASE_URL;
if (!url)
  throw new Error('DATABASE_URL must be set; run the CLI through `npm run db:migration:create`.');

const base = mikroOrmOptions(url);
export default {
  ...base,
  migrations: {
    ...base.migrations,
    migrationsList: undefined,
    path: 'src/database/migrations',
    pathTs: 'src/database/migrations',
    glob: '!(*.d|index).{js,ts}',
  },
};

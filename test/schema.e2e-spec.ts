import { MikroORM } from '@mikro-orm/postgresql';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { mikroOrmOptions } from '../src/database/mikro-orm.options';
import { MIGRATIONS } from '../src/database/migrations';
import { createTestDatabase } from './setup/test-database';

describe('Database schema', () => {
  it('the migrations produce exactly the schema the entities describe', async () => {
    const db = await createTestDatabase(); // migrated from scratch via the template
    const orm = await MikroORM.init(mikroOrmOptions(db.url));
    try {
      const diff = await orm.getSchemaGenerator().getUpdateSchemaSQL({ wrap: false, safe: false });
      expect(diff.trim()).toBe('');
      const pending = await orm.getMigrator().getPendingMigrations();
      expect(pending).toEqual([]);
      // The delivery queue's autovacuum thresholds, which the entities cannot express.
      const [queue] = await orm.em
        .getConnection()
        .execute<{ reloptions: string[] }[]>(
          `SELECT reloptions FROM pg_class WHERE relname = 'webhook_deliveries'`,
        );
      expect([...queue.reloptions].sort()).toEqual([
        'autovacuum_analyze_scale_factor=0.01',
        'autovacuum_analyze_threshold=200',
        'autovacuum_vacuum_scale_factor=0.02',
      ]);
    } finally {
      await orm.close(true);
      await db.drop();
    }
  });

  it('every migration file is registered in migrations/index.ts, in order', () => {
    const dir = join(__dirname, '..', 'src', 'database', 'migrations');
    const files = readdirSync(dir)
      .filter((f) => /^Migration\d+.*\.ts$/.test(f))
      .map((f) => f.replace(/\.ts$/, ''))
      .sort();
    expect(MIGRATIONS.map((m) => m.name)).toEqual(files);
  });
});

import { MikroOrmModule } from '@mikro-orm/nestjs';
import { DynamicModule, Module } from '@nestjs/common';
import { mikroOrmOptions } from './mikro-orm.options';
import { Db } from './db';
import { PgListener } from './pg-listener';
import { SchemaCheck } from './schema-check';

/**
 * MikroORM on PostgreSQL, plus the instance's one LISTEN connection. There is no per-request
 * context: services fork an EntityManager (or use `transactional`) for each unit of work, and
 * hot paths run SQL on the connection directly.
 */
@Module({})
export class DatabaseModule {
  static forRoot(url: string, poolSize: number): DynamicModule {
    return {
      module: DatabaseModule,
      global: true,
      imports: [
        MikroOrmModule.forRoot({
          ...mikroOrmOptions(url, { pool: { min: 0, max: poolSize } }),
          registerRequestContext: false,
        }),
      ],
      providers: [Db, PgListener, SchemaCheck],
      exports: [Db, PgListener, SchemaCheck],
    };
  }
}

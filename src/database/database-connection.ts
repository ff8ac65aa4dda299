import { AppConfig } from '../config/app-config';
import {
  EMBEDDED_DATABASE,
  EmbeddedPostgresHandle,
  ensureDatabaseExists,
  startEmbeddedPostgres,
} from './embedded-postgres';
import { join } from 'node:path';

/** Where the service's database is, and how to let go of it when the process ends. */
export interface DatabaseConnection {
  readonly url: string;
  readonly embedded?: EmbeddedPostgresHandle;
  release(): Promise<void>;
}

/**
 * `DATABASE_URL` when set; otherwise the embedded PostgreSQL under `$DATA_DIR/postgres`, started
 * by this process or reused when another process already runs it.
 */
export async function openDatabase(
  config: AppConfig,
  log?: (line: string) => void,
): Promise<DatabaseConnection> {
  if (config.DATABASE_URL) {
    return { url: config.DATABASE_URL, release: () => Promise.resolve() };
  }
  const embedded = await startEmbeddedPostgres(join(config.DATA_DIR, 'postgres'), {
    port: config.EMBEDDED_POSTGRES_PORT,
    log,
  });
  await ensureDatabaseExists(embedded.serverUrl, EMBEDDED_DATABASE);
  return {
    url: `${embedded.serverUrl}/${EMBEDDED_DATABASE}`,
    embedded,
    release: () => embedded.stop(),
  };
}

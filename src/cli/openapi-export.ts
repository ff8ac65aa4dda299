/**
 * `npm run openapi:export`: writes the running app's OpenAPI document to openapi.json (committed;
 * a test fails when it differs from what the app serves at /docs-json).
 */
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createApp } from '../app.factory';
import { buildOpenApiDocument } from '../common/swagger/openapi-document';
import { parseConfig } from '../config/load-config';
import { openDatabase } from '../database/database-connection';
import { runMigrations } from '../database/migrate';
import { runCli } from './run-cli';

runCli(async (out) => {
  // The committed document is the one a fresh `npm start` serves (its default public URL), so
  // it does not depend on the exporting machine's environment.
  const { PORT: _port, PUBLIC_BASE_URL: _url, ...env } = process.env;
  const config = parseConfig({ ...env, LOG_LEVEL: 'silent' });
  const db = await openDatabase(config);
  try {
    await runMigrations(db.url);
    const app = await createApp(config, db.url);
    try {
      await app.init();
      const path = resolve(process.cwd(), 'openapi.json');
      await writeFile(path, `${JSON.stringify(buildOpenApiDocument(app), null, 2)}\n`);
      out(`Wrote ${path}`);
    } finally {
      await app.close();
    }
  } finally {
    await db.release();
  }
});

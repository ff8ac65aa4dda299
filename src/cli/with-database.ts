/**
 * Runs a command with DATABASE_URL pointing at the configured database (the embedded
 * PostgreSQL when unset), e.g. the MikroORM CLI: `npm run db:migration:create`.
 */
import { spawn } from 'node:child_process';
import { loadConfig } from '../config/load-config';
import { openDatabase } from '../database/database-connection';
import { runCli, UsageError } from './run-cli';

runCli(async () => {
  const [command, ...args] = process.argv.slice(2);
  if (!command) throw new UsageError('usage: with-database <command> [args...]');
  const db = await openDatabase(loadConfig());
  try {
    const code = await new Promise<number>((resolve, reject) => {
      const child = spawn(command, args, {
        stdio: 'inherit',
        env: { ...process.env, DATABASE_URL: db.url },
      });
      child.on('error', reject);
      child.on('exit', (status) => resolve(status ?? 1));
    });
    if (code !== 0) throw new Error(`${command} exited with code ${code}`);
  } finally {
    await db.release();
  }
});

/**
 * `npm run codegen:subscriptions`: renders the Subscriptions program's client from its committed
 * interface description (src/solana/subscriptions-client/codegen.ts), into
 * `src/solana/subscriptions-client/generated/`, or into the folder given by `--out=DIR` (the drift
 * test renders into a temporary one).
 */
import { resolve } from 'node:path';
import { GENERATED_DIR, renderSubscriptionsClient } from '../solana/subscriptions-client/codegen';
import { runCli } from './run-cli';

runCli(async () => {
  const out = process.argv.find((a) => a.startsWith('--out='));
  const outDir = out ? resolve(out.slice('--out='.length)) : GENERATED_DIR;
  await renderSubscriptionsClient(outDir);
  process.stdout.write(`Subscriptions client written to ${outDir}\n`);
});

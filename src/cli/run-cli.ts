import { ConfigError } from '../config/load-config';

/** Error for bad command-line input: printed without a stack trace, exit code 2. */
export class UsageError extends Error {}

/**
 * Runs a command-line entry point: prints its output, turns errors into a message on stderr and
 * a non-zero exit code.
 */
export function runCli(main: (out: (line: string) => void) => Promise<void>): void {
  main((line) => process.stdout.write(`${line}\n`))
    .then(() => process.exit(0))
    .catch((error: unknown) => {
      if (error instanceof UsageError || error instanceof ConfigError) {
        process.stderr.write(`${error.message}\n`);
        process.exit(2);
      }
      process.stderr.write(
        `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exit(1);
    });
}

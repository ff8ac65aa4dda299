import { plainToInstance } from 'class-transformer';
import { validateSync, ValidationError } from 'class-validator';
import { parse as parseDotenv } from 'dotenv';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { AppConfig } from './app-config';

/** Raised when the environment holds a value the service cannot start with. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const KNOWN = new Set(
  Object.keys(new AppConfig()).concat([
    'DATABASE_URL',
    'PUBLIC_BASE_URL',
    'SOLANA_RPC_URL',
    'SERVICE_KEYPAIR',
    'MINT_USDC',
    'MINT_PYUSD',
    'MINT_USDG',
    'SUBSCRIPTION_SCHEME',
    'SMTP_URL',
  ]),
);

/**
 * Builds the typed configuration from an environment. Unknown variables are ignored (the process
 * environment holds many); only the ones `AppConfig` declares are read.
 */
export function parseConfig(env: Record<string, string | undefined>): AppConfig {
  const raw: Record<string, string> = {};
  for (const key of KNOWN) {
    const value = env[key];
    if (value !== undefined) raw[key] = value;
  }
  const config = plainToInstance(AppConfig, raw);
  const errors = validateSync(config, { forbidUnknownValues: true });
  if (errors.length > 0) throw new ConfigError(errors.map(describe));
  return config;
}

/** Reads `.env` (without overriding real environment variables) and parses the result. */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  dotenvPath = resolve(process.cwd(), '.env'),
): AppConfig {
  const merged: Record<string, string | undefined> = {};
  if (existsSync(dotenvPath)) Object.assign(merged, parseDotenv(readFileSync(dotenvPath)));
  Object.assign(merged, env);
  return parseConfig(merged);
}

function describe(error: ValidationError): string {
  const reasons = Object.values(error.constraints ?? {}).join('; ');
  const value =
    error.property === 'SERVICE_KEYPAIR'
      ? '***' // may hold the secret key itself
      : /URL$/.test(error.property)
        ? // Everything up to the last '@': a password may hold '/', '@' or '#' (SMTP_URL).
          String(error.value).replace(/^([a-z][a-z0-9+.-]*:\/\/)?[\s\S]*@/i, '$1***@')
        : String(error.value);
  return `${error.property}=${JSON.stringify(value)}: ${reasons}`;
}

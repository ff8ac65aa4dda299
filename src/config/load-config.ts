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
    'SOLANA_RPC_REQUESTS_PER_SECOND',
    'SERVICE_KEYPAIR',
    'MINT_USDC',
    'MINT_PYUSD',
    'MINT_USDG',
    'SUBSCRIPTION_SCHEME',
    'SMTP_URL',
    'DEV_KEY',
    'METRICS_PORT',
    'METRICS_TOKEN',
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
  if (config.METRICS_PORT && config.METRICS_PORT === config.PORT) {
    // The metrics would be served on the API's port, behind its load balancer.
    throw new ConfigError([
      `METRICS_PORT=${config.METRICS_PORT}: must differ from PORT (metrics stay off the API's port)`,
    ]);
  }
  if (
    config.isLocalnet &&
    config.SOLANA_RPC_URL &&
    !config.solanaRpcUrls.every((url) => isLoopbackUrl(url))
  ) {
    // Localnet turns on the dev routes, relaxed webhook rules and the localnet mint table: never
    // against a chain elsewhere (a mainnet URL with SOLANA_CLUSTER left at its default).
    throw new ConfigError([
      `SOLANA_RPC_URL=${JSON.stringify(redactRpcUrls(config.SOLANA_RPC_URL))}: SOLANA_CLUSTER=localnet needs a chain on this machine (localhost, 127.0.0.0/8 or [::1]); for a remote cluster set SOLANA_CLUSTER to devnet or mainnet-beta`,
    ]);
  }
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

/** Whether a URL's host is this machine: `localhost`, 127.0.0.0/8 or `[::1]`. */
export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === '[::1]' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
  );
}

/** Everything up to the last '@': a password may hold '/', '@' or '#' (SMTP_URL). */
function redactUrl(value: string): string {
  return value.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[\s\S]*@/i, '$1***@');
}

/**
 * RPC URLs as they may be shown: scheme and host only. Providers put their API key in the
 * path or the query (`/v2/<key>`, `?api-key=<key>`), or as a user name.
 */
function redactRpcUrls(value: string): string {
  return value
    .split(',')
    .map((entry) => {
      try {
        const url = new URL(entry.trim());
        const hidden = url.username || url.password || url.pathname !== '/' || url.search;
        return `${url.protocol}//${url.host}${hidden ? '/***' : ''}`;
      } catch {
        return '***';
      }
    })
    .join(',');
}

function describe(error: ValidationError): string {
  const reasons = Object.values(error.constraints ?? {}).join('; ');
  const value = ['SERVICE_KEYPAIR', 'DEV_KEY', 'METRICS_TOKEN'].includes(error.property)
    ? '***' // may hold a secret
    : error.property === 'SOLANA_RPC_URL'
      ? redactRpcUrls(String(error.value))
      : /URL$/.test(error.property)
        ? redactUrl(String(error.value))
        : String(error.value);
  return `${error.property}=${JSON.stringify(value)}: ${reasons}`;
}

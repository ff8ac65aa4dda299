import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, IsUrl, Matches, Max, Min } from 'class-validator';
import { MaxLength, MinLength } from '../common/validators/chars';
import { IsTrustProxy, parseTrustProxy, TrustProxy } from '../common/http/trust-proxy';
import { IsMailbox, Mailbox, parseMailbox } from '../common/validators/mailbox';
import { IsSolanaAddress } from '../common/validators/solana-address';

export const SOLANA_CLUSTERS = ['localnet', 'devnet', 'mainnet-beta'] as const;
export type SolanaCluster = (typeof SOLANA_CLUSTERS)[number];

export const SOLANA_COMMITMENTS = ['processed', 'confirmed', 'finalized'] as const;
export type SolanaCommitment = (typeof SOLANA_COMMITMENTS)[number];

export const SUBSCRIPTION_SCHEMES = ['program', 'token-delegate'] as const;
export type SubscriptionScheme = (typeof SUBSCRIPTION_SCHEMES)[number];

const PUBLIC_RPC: Record<Exclude<SolanaCluster, 'localnet'>, string> = {
  devnet: 'https://api.devnet.solana.com',
  'mainnet-beta': 'https://api.mainnet-beta.solana.com',
};

export const ROLES = ['all', 'api', 'worker'] as const;
export type Role = (typeof ROLES)[number];

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const toInt = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value;

const emptyToUndefined = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && value.trim() === '' ? undefined : value;

/**
 * The whole runtime configuration, read once from the environment (and `.env`) at start-up.
 * Property names are the environment variable names so that a validation error names the variable.
 * Documented in `.env.example` and the README's configuration table.
 */
export class AppConfig {
  /** HTTP port of the API. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT: number = 3000;

  /** Interface the HTTP server binds to. */
  @IsString()
  @MinLength(1)
  HOST: string = '0.0.0.0';

  /**
   * How long a client has to send a whole request, headers and body (docs/security.md): a client
   * that has not finished by then gets 408 and its connection is closed, so a body sent a byte at
   * a time cannot hold a connection. 1000..60000 ms.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1000)
  @Max(60_000)
  HTTP_REQUEST_TIMEOUT_MS: number = 30_000;

  /** Directory for local state: embedded PostgreSQL data, localnet chain, generated keypairs. */
  @IsString()
  @MinLength(1)
  DATA_DIR: string = '.data';

  /** PostgreSQL connection string. When unset, an embedded PostgreSQL runs under `$DATA_DIR/postgres`. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsUrl({ protocols: ['postgres', 'postgresql'], require_tld: false, require_protocol: true })
  DATABASE_URL?: string;

  /** Port of the embedded PostgreSQL; 0 picks a free port (recorded in its `postmaster.pid`). */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  EMBEDDED_POSTGRES_PORT: number = 0;

  /** Size of the database connection pool of each instance. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(200)
  DATABASE_POOL_SIZE: number = 10;

  /** Base URL customers and merchants reach this service at (checkout links). Defaults to http://localhost:$PORT. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsUrl({ protocols: ['http', 'https'], require_tld: false, require_protocol: true })
  PUBLIC_BASE_URL?: string;

  /** Solana cluster: localnet (embedded chain), devnet or mainnet-beta. */
  @IsIn(SOLANA_CLUSTERS)
  SOLANA_CLUSTER: SolanaCluster = 'localnet';

  /**
   * JSON-RPC endpoint of the cluster. Unset on localnet: the embedded chain, started in-process
   * on `LOCALNET_RPC_PORT` (or already running there, from `npm run localnet`). Unset elsewhere:
   * the cluster's public endpoint (rate limited; use your own provider in production).
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsUrl({ protocols: ['http', 'https'], require_tld: false, require_protocol: true })
  SOLANA_RPC_URL?: string;

  /** Commitment the service reads and confirms at (`finalized` is always awaited for payments). */
  @IsIn(SOLANA_COMMITMENTS)
  SOLANA_COMMITMENT: SolanaCommitment = 'confirmed';

  /** Port of the embedded localnet JSON-RPC server (its WebSocket is on the next port). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(65534)
  LOCALNET_RPC_PORT: number = 8899;

  /**
   * Embedded localnet: slots (400 ms each) between a transaction's confirmation and its
   * finalization, so `confirmed` and `finalized` are two states as on a real cluster.
   */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(150)
  LOCALNET_FINALITY_SLOTS: number = 8;

  /**
   * The service keypair (fee payer of the pulls it makes, and the puller plans authorise): a
   * path to a Solana keypair file, or the file's JSON array itself. Unset on localnet: generated
   * into `$DATA_DIR/service-keypair.json`. Required on devnet and mainnet-beta.
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  SERVICE_KEYPAIR?: string;

  /** Mint address overrides (base58); default: the cluster's table (DESIGN section 6). */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsSolanaAddress()
  MINT_USDC?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsSolanaAddress()
  MINT_PYUSD?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsSolanaAddress()
  MINT_USDG?: string;

  /**
   * How subscriptions are authorised on-chain: `program` (the Subscriptions program, default on
   * devnet and mainnet-beta) or `token-delegate` (an SPL approve of the service key; default on
   * localnet, where the program cannot run).
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsIn(SUBSCRIPTION_SCHEMES)
  SUBSCRIPTION_SCHEME?: SubscriptionScheme;

  /** Token-delegate scheme: the approval covers this many periods of a plan's amount. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1000)
  SUBSCRIPTION_APPROVAL_PERIODS: number = 12;

  /** Log level of the structured JSON logs. */
  @IsIn(LOG_LEVELS)
  LOG_LEVEL: LogLevel = 'info';

  /** Largest accepted request body, in bytes. */
  @Transform(toInt)
  @IsInt()
  @Min(1024)
  @Max(10 * 1024 * 1024)
  MAX_BODY_BYTES: number = 100 * 1024;

  /** How often buffered API-key `lastUsedAt` updates are written, in milliseconds. */
  @Transform(toInt)
  @IsInt()
  @Min(50)
  @Max(2000)
  API_KEY_LAST_USED_FLUSH_MS: number = 1000;

  /** Requests per minute allowed for one API key (or one IP for unauthenticated routes). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  RATE_LIMIT_PER_MINUTE: number = 6000;

  /**
   * Which proxies in front of the service to trust for the client's address (DESIGN D17),
   * express's semantics: a hop count, or a comma-separated list of IPs, subnets or
   * `loopback`/`linklocal`/`uniquelocal`. Unset: the client is the TCP peer. Rate limits and the
   * failed-authentication limit count per client address as it decides.
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsTrustProxy()
  TRUST_PROXY?: string;

  /** Failed authentications allowed per client address per minute; beyond, 429 (D17). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  AUTH_FAILURES_PER_MINUTE: number = 60;

  /**
   * What this instance runs: `all` (HTTP and background work), `api` (HTTP only: no background
   * work) or `worker` (background work: webhook and e-mail delivery). A worker still serves the
   * same HTTP app, for `/health`; keep it out of the API's load balancer.
   */
  @IsIn(ROLES)
  ROLE: Role = 'all';

  /**
   * How long a close (SIGTERM) lets the work under way finish, in milliseconds: one bound from
   * the close's first step, shared by everything that drains. Webhook and e-mail attempts and
   * charges still in flight when it runs out are handed back (their leases end at once), so
   * another instance resumes them without waiting for the lease (docs/operations.md#shutdown).
   */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(600_000)
  SHUTDOWN_GRACE_MS: number = 10_000;

  /** Time allowed for one webhook POST (connect, headers and body), in milliseconds. */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(60_000)
  WEBHOOK_TIMEOUT_MS: number = 10_000;

  /** Webhook POSTs one instance keeps in flight at once. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1000)
  WEBHOOK_CONCURRENCY: number = 64;

  /** How often the delivery worker looks for due retries (new events wake it at once). */
  @Transform(toInt)
  @IsInt()
  @Min(20)
  @Max(60_000)
  WEBHOOK_POLL_INTERVAL_MS: number = 1000;

  /**
   * Days a finished webhook delivery (delivered, failed after its retries, or skipped) is kept
   * after its last attempt; then the retention job deletes it. Pending deliveries and the events
   * themselves are never deleted (docs/operations.md#retention).
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(3650)
  WEBHOOK_RETENTION_DAYS: number = 30;

  /**
   * SMTP server for outgoing e-mail (invoice notifications), in nodemailer's URL form:
   * `smtp://user:pass@host:587` (STARTTLS when the server offers it; `?requireTLS=true` insists)
   * or `smtps://user:pass@host:465` (TLS from the start). Unset: nothing is sent, each message is
   * recorded and marked `not_sent`. It holds a password: it is never logged, and a bad value is
   * reported with its credentials masked.
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsUrl(
    { protocols: ['smtp', 'smtps'], require_tld: false, require_protocol: true },
    { message: 'must be an smtp:// or smtps:// URL, e.g. smtp://user:pass@mail.example.com:587' },
  )
  SMTP_URL?: string;

  /** Sender of outgoing e-mail: an address, optionally with a display name. */
  @IsMailbox()
  EMAIL_FROM: string = 'Stablecoin Billing <billing@localhost>';

  /** How often the e-mail worker looks for due retries (a new message wakes it at once). */
  @Transform(toInt)
  @IsInt()
  @Min(20)
  @Max(60_000)
  EMAIL_POLL_INTERVAL_MS: number = 5000;

  /**
   * Time allowed for one message: connecting (at most 10 s of it), TLS, authentication and the
   * transfer, including any wait for a free pooled connection.
   */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(300_000)
  EMAIL_SEND_TIMEOUT_MS: number = 30_000;

  /**
   * Days a finished e-mail (sent, failed for good, or not sent for want of SMTP) is kept after
   * its last attempt, recipient and body included; then the retention job deletes it. Pending
   * messages are never deleted (docs/operations.md#retention).
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(3650)
  EMAIL_RETENTION_DAYS: number = 30;

  /** How often a charge run starts on instances that run background work (ms). */
  @Transform(toInt)
  @IsInt()
  @Min(1000)
  @Max(3_600_000)
  CHARGE_RUN_INTERVAL_MS: number = 60_000;

  /** Due subscriptions a charge run claims per batch (`FOR UPDATE SKIP LOCKED`). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(5000)
  CHARGE_BATCH_SIZE: number = 200;

  /** Charges one instance keeps in flight at once. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1000)
  CHARGE_CONCURRENCY: number = 64;

  /**
   * How long an instance holds a charge attempt before another may resume it (seconds). Short
   * is safe: a resumed attempt is settled by its recorded signature (or its very bytes re-sent),
   * never by a second transaction.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(3600)
  CHARGE_LEASE_SECONDS: number = 30;

  /**
   * How long a customer portal link from `POST /api/customers/:id/portal-session` works
   * (seconds, real time). The links in customer notices last 7 days.
   */
  @Transform(toInt)
  @IsInt()
  @Min(60)
  @Max(86_400)
  PORTAL_SESSION_TTL_SECONDS: number = 3600;

  /**
   * How often the watchers run (ms): invoice payments, finality of seen payments, subscribes
   * whose page was closed, overdue and expired invoices.
   */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  WATCH_INTERVAL_MS: number = 5_000;

  /** An Open invoice expires this many days after its `dueDate`. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(3650)
  INVOICE_EXPIRY_DAYS: number = 30;

  /**
   * Localnet: the operator's dev key, which opens `/api/dev/*` and the chain's `localnet_*`
   * JSON-RPC methods (docs/dev.md). Unset: generated on first start into `$DATA_DIR/dev-key` and
   * printed in the start banner. 32..256 printable characters.
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^[\x21-\x7e]{32,256}$/, {
    message: 'must be 32..256 printable characters without spaces',
  })
  DEV_KEY?: string;

  /** Create a demo merchant and print its API key on the first start with an empty database. */
  @IsIn(['true', 'false'])
  @MaxLength(5)
  DEMO_MERCHANT: 'true' | 'false' = 'true';

  get publicBaseUrl(): string {
    return (this.PUBLIC_BASE_URL ?? `http://localhost:${this.PORT}`).replace(/\/+$/, '');
  }

  /** `EMAIL_FROM` parsed (validated at start-up, so always a mailbox). */
  get emailFrom(): Mailbox {
    return parseMailbox(this.EMAIL_FROM)!;
  }

  /** `TRUST_PROXY` as express's `trust proxy` setting. */
  get trustProxy(): TrustProxy {
    return parseTrustProxy(this.TRUST_PROXY);
  }

  /** Whether this instance runs background work (webhook delivery, scheduled jobs). */
  get runsWorkers(): boolean {
    return this.ROLE !== 'api';
  }

  get isLocalnet(): boolean {
    return this.SOLANA_CLUSTER === 'localnet';
  }

  /** Localnet without an RPC URL: the service starts the embedded chain itself. */
  get embeddedLocalnet(): boolean {
    return this.isLocalnet && !this.SOLANA_RPC_URL;
  }

  get solanaRpcUrl(): string {
    if (this.SOLANA_RPC_URL) return this.SOLANA_RPC_URL;
    return this.SOLANA_CLUSTER === 'localnet'
      ? `http://127.0.0.1:${this.LOCALNET_RPC_PORT}`
      : PUBLIC_RPC[this.SOLANA_CLUSTER];
  }

  get subscriptionScheme(): SubscriptionScheme {
    return this.SUBSCRIPTION_SCHEME ?? (this.isLocalnet ? 'token-delegate' : 'program');
  }
}

import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, IsUrl, Matches, Max, Min } from 'class-validator';
import { MaxLength, MinLength } from '../common/validators/chars';
import { IsTrustProxy, parseTrustProxy, TrustProxy } from '../common/http/trust-proxy';
import { Mailbox, parseMailbox } from '../common/validators/mailbox';
import { IsSolanaAddress } from '../common/validators/solana-address';
import { BackgroundConfig } from './background-config';
import { IsRpcUrlList, rpcUrlList } from './rpc-url-list';
import { emptyToUndefined, optionalInt, toInt } from './transforms';

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
/** The public endpoints allow 100 requests per 10 s per IP. */
const PUBLIC_RPC_REQUESTS_PER_SECOND = 10;

export const ROLES = ['all', 'api', 'worker'] as const;
export type Role = (typeof ROLES)[number];

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * The whole runtime configuration, read once from the environment (and `.env`) at start-up.
 * Property names are the environment variable names so that a validation error names the variable.
 * Documented in `.env.example` and the README's configuration table.
 */
export class AppConfig extends BackgroundConfig {
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

  /**
   * Port of the Prometheus metrics server (`GET /metrics`, docs/operations.md#metrics), apart
   * from the API's so that it stays out of the load balancer. Unset: no metrics server. 0 picks
   * a free port.
   */
  @Transform(optionalInt)
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(65535)
  METRICS_PORT?: number;

  /** Interface the metrics server binds to. */
  @IsString()
  @MinLength(1)
  METRICS_HOST: string = '0.0.0.0';

  /**
   * When set, a scrape must send `Authorization: Bearer <METRICS_TOKEN>` (else 401). 16..256
   * printable characters without spaces.
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^[\x21-\x7e]{16,256}$/, {
    message: 'must be 16..256 printable characters without spaces',
  })
  METRICS_TOKEN?: string;

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
   * JSON-RPC endpoint of the cluster, or several separated by commas (failover in that order:
   * docs/solana.md, "RPC providers"). Unset on localnet: the embedded chain on
   * `LOCALNET_RPC_PORT` (started in-process, or from `npm run localnet`). Unset elsewhere: the
   * cluster's public endpoint (rate limited; use your own providers in production).
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsRpcUrlList()
  SOLANA_RPC_URL?: string;

  /** Longest wait for one JSON-RPC exchange with one RPC URL before the next URL is tried (ms). */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(120_000)
  SOLANA_RPC_TIMEOUT_MS: number = 10_000;

  /**
   * Requests a second per RPC URL (a batch counts as its requests; requests wait, never refused).
   * 0: none. Unset: 10 for a cluster's public endpoint (100 per 10 s), else none.
   */
  @Transform(({ value }) => toInt({ value: emptyToUndefined({ value }) }))
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(100_000)
  SOLANA_RPC_REQUESTS_PER_SECOND?: number;

  /** Most requests in one JSON-RPC batch; a URL that refuses less learns its own limit. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1000)
  SOLANA_RPC_MAX_BATCH: number = 100;

  /**
   * Ceiling of the compute-unit price of the service's charges (micro-lamports per unit; the
   * price is estimated from recent fees). 0: no priority fee. 1,000,000 is 1 lamport a unit.
   */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(100_000_000)
  PRIORITY_FEE_MAX_MICRO_LAMPORTS: number = 1_000_000;

  /**
   * Each merchant's daily budget of network fees the service key pays as its x402 facilitator
   * (lamports per UTC day; docs/x402.md). A settlement past it is refused (`fee_budget_exceeded`).
   * 0: x402 settlement off. The default, 0.01 SOL, is about 1,000 payments a day.
   */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(100_000_000_000)
  X402_DAILY_FEE_BUDGET_LAMPORTS: number = 10_000_000;

  /** Ceiling of an x402 payment's compute-unit price (micro-lamports a unit) the service pays. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(5_000_000)
  X402_MAX_COMPUTE_UNIT_PRICE_MICRO_LAMPORTS: number = 1_000_000;

  /**
   * Commitment the service reads and confirms at (`finalized` is always awaited for payments;
   * docs/solana.md, "Commitment").
   */
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

  /** The RPC URLs in order of preference: `SOLANA_RPC_URL`'s list, or the cluster's default. */
  get solanaRpcUrls(): string[] {
    if (this.SOLANA_RPC_URL) return rpcUrlList(this.SOLANA_RPC_URL);
    const cluster = this.SOLANA_CLUSTER;
    return [
      cluster === 'localnet' ? `http://127.0.0.1:${this.LOCALNET_RPC_PORT}` : PUBLIC_RPC[cluster],
    ];
  }

  /** The first RPC URL (the localnet dev tools and the banner); the chain calls use them all. */
  get solanaRpcUrl(): string {
    return this.solanaRpcUrls[0];
  }

  /** The request budget per RPC URL (`SOLANA_RPC_REQUESTS_PER_SECOND`); 0: none. */
  get solanaRpcRequestsPerSecond(): number {
    const publicEndpoint = !this.isLocalnet && !this.SOLANA_RPC_URL;
    return (
      this.SOLANA_RPC_REQUESTS_PER_SECOND ?? (publicEndpoint ? PUBLIC_RPC_REQUESTS_PER_SECOND : 0)
    );
  }

  get subscriptionScheme(): SubscriptionScheme {
    return this.SUBSCRIPTION_SCHEME ?? (this.isLocalnet ? 'token-delegate' : 'program');
  }
}

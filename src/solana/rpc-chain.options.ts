import type { Commitment, Keypair } from '@solana/web3.js';
import type { SolanaCluster, SubscriptionScheme as SchemeName } from '../config/app-config';
import type { BlockhashCacheOptions } from './blockhash-cache';
import type { MintInfo } from './mints';
import type { RpcTransport } from './rpc-transport';

/** How the service configures its chain adapter (`RpcChainAdapter`). */
export interface RpcChainOptions {
  cluster: SolanaCluster;
  scheme: SchemeName;
  commitment: Commitment;
  mints: MintInfo[];
  /** Kept inside the adapter (a `ServiceSigner`); never handed out. */
  serviceKey: Keypair;
  /** Token-delegate scheme: the approval covers this many periods. */
  approvalPeriods: number;
  /** How long `sendAndConfirm` waits for an answer before `unknown` (default 120 s). */
  confirmDeadlineMs?: number;
  /** The recent-blockhash cache of the unsigned transactions (refresh, age, fetch timeout). */
  blockhashes?: BlockhashCacheOptions;
  /**
   * The transport under `connection` (its `fetch`), for the adapter's own JSON-RPC calls (sends,
   * simulations, fee reads). Default: one of its own to the connection's endpoint.
   */
  transport?: RpcTransport;
  /**
   * Ceiling of the compute-unit price of the service's charges, in micro-lamports; 0 sets no
   * price. Default `DEFAULT_PRIORITY_FEE_MAX_MICRO_LAMPORTS` (compute-budget.ts).
   */
  priorityFeeMaxMicroLamports?: number;
  /** Told one line per mint when it is resolved: its Token-2022 extensions (the start-up log). */
  log?: (line: string) => void;
}

import { IsIn, IsInt, IsString, Max, Min } from 'class-validator';
import { IsPositiveAmount } from '../../common/validators/decimal-amount';
import { IsSolanaAddress } from '../../common/validators/solana-address';
import { MINT_SYMBOLS, type MintSymbol } from '../../solana/mints';

/** At most a million tokens per faucet call. */
export const FAUCET_MAX_UNITS = 1_000_000_000_000n;

export class FaucetDto {
  /**
   * The wallet to fund (base58). It also receives 1 SOL for fees.
   * @example "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"
   */
  @IsString()
  @IsSolanaAddress()
  walletAddress!: string;

  /** @example "USDC" */
  @IsIn(MINT_SYMBOLS)
  mint!: MintSymbol;

  /**
   * Tokens to mint to the wallet's associated token account: a decimal string, > 0, at most
   * 1000000.
   * @example "100"
   */
  @IsString()
  @IsPositiveAmount(FAUCET_MAX_UNITS, { message: 'must be a decimal string > 0 and <= 1000000' })
  amount!: string;
}

export class FaucetResponse {
  /** @example "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin" */
  walletAddress!: string;
  /** @example "USDC" */
  mint!: string;
  /** @example "100" */
  amount!: string;
  /** SOL sent for fees, in lamports (a decimal string). @example "1000000000" */
  lamports!: string;
  /** The localnet transactions that funded the wallet. */
  signatures!: string[];
}

export class AdvanceClockDto {
  /**
   * Seconds to move the service clock and the chain clock forward, 1..315360000 (10 years).
   * @example 86400
   */
  @IsInt()
  @Min(1)
  @Max(315_360_000)
  seconds!: number;
}

export class ClockResponse {
  /** The service clock after the move (ISO 8601). @example "2026-12-24T10:00:00.000Z" */
  now!: string;
  /** The chain's clock (unix seconds) after the move. @example 1797976800 */
  chainUnixTimestamp!: number;
}

export class ChargeRunCounts {
  /** Attempts taken up: new periods claimed and stale attempts resumed. @example 3 */
  attempts!: number;
  /** @example 2 */
  succeeded!: number;
  /** Charges that failed: the subscription is PastDue. @example 1 */
  failed!: number;
  /** Subscriptions completed: authorisation gone or term used up. @example 0 */
  completed!: number;
  /** Left for a later run (transient failure, or outcome not known yet). @example 0 */
  deferred!: number;
  /** Dropped: the subscription stopped being Active before anything was sent. @example 0 */
  abandoned!: number;
}

export class WatchCounts {
  /** Merchant receiving accounts scanned. @example 2 */
  accountsScanned!: number;
  /** @example 1 */
  signaturesScanned!: number;
  /** @example 1 */
  paymentsRecorded!: number;
  /** @example 1 */
  paymentsFinalized!: number;
  /** @example 1 */
  invoicesPaid!: number;
  /** @example 0 */
  invoicesOverdue!: number;
  /** @example 0 */
  invoicesExpired!: number;
}

export class BillingRunResponse {
  charges!: ChargeRunCounts;
  /** Subscriptions the reconciling watcher created (subscribes no page confirmed). @example 0 */
  subscriptionsCreated!: number;
  invoices!: WatchCounts;
}

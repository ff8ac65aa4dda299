import { ApiProperty } from '@nestjs/swagger';
import { MINT_SYMBOLS, type MintSymbol } from '../../solana/mints';

/** A plan's meter (docs/usage.md): amounts and units as exact decimal strings. */
export class MeterResponse {
  /** @example "api_calls" */
  name!: string;

  /** The price of one block of `unitSize` units. @example "0.002" */
  unitPrice!: string;

  /** @example "1" */
  unitSize!: string;

  /** @example "1000" */
  includedUnits!: string;

  /** The most one period's usage is charged. @example "50" */
  cap!: string;

  /** @example 3600 */
  graceSeconds!: number;
}

export class PlanResponse {
  /** @example "5d0c2a9e-1b4f-4e8a-9a43-7c6f1e2d3b4a" */
  id!: string;

  /** @example "Pro monthly" */
  label!: string;

  /** @example "All Pro features, billed every 30 days" */
  description!: string | null;

  /** @example "USDC" */
  @ApiProperty({ enum: MINT_SYMBOLS })
  mint!: MintSymbol;

  /**
   * Charged each period, a canonical decimal string; with a meter, the fixed fee the period's
   * usage is added to. @example "9.99"
   */
  amount!: string;

  /** Usage charged on top of `amount` (`POST /api/usage-events`); null: none. */
  meter!: MeterResponse | null;

  /**
   * The most one period may charge (`amount` plus the meter's cap): what a subscriber
   * authorises each period. @example "9.99"
   */
  maxAmountPerPeriod!: string;

  /** @example 2592000 */
  intervalSeconds!: number;

  /** `false`: no new subscribers; existing subscriptions are unaffected. @example true */
  active!: boolean;

  /**
   * The hosted page where customers subscribe.
   * @example "https://billing.example.com/checkout/plans/5d0c2a9e-1b4f-4e8a-9a43-7c6f1e2d3b4a"
   */
  checkoutUrl!: string;

  /**
   * The plan's on-chain account: the Subscriptions program's plan PDA under the program scheme
   * (devnet, mainnet-beta); `null` under the token-delegate scheme (localnet), where a plan is
   * registered by a memo and no plan account exists.
   * @example "9wFFyRfZBsuAha4YcuxcXLKwMxJR43S7fPfQLusDBzvT"
   */
  onchainAddress!: string | null;

  /** ISO 8601 UTC. @example "2026-11-24T10:15:30.123Z" */
  createdAt!: string;

  /** ISO 8601 UTC. @example "2026-11-24T10:15:30.123Z" */
  updatedAt!: string;
}

export class PlanCountsResponse {
  /** Subscriptions of the plan, whatever their status. @example 12 */
  subscriptions!: number;
}

export class PlanListItemResponse extends PlanResponse {
  _count!: PlanCountsResponse;
}

export class CreatePlanResponse {
  plan!: PlanResponse;

  /**
   * Registers the plan on-chain once the merchant signs and sends it (program scheme: the
   * Subscriptions program's `create_plan`; token-delegate: a memo committing to the terms).
   * Stale after about a minute: `POST /api/plans/:id/registration-tx` issues a fresh one.
   * @example "AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAQABA..."
   */
  unsignedTx!: string;

  /** The same as `plan.checkoutUrl`. */
  checkoutUrl!: string;
}

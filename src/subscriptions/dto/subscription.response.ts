import { ApiProperty } from '@nestjs/swagger';
import { MINT_SYMBOLS, type MintSymbol } from '../../solana/mints';
import { SUBSCRIPTION_STATUSES, type SubscriptionStatus } from '../subscription-status';

/** The plan a subscription belongs to, as it is now (its terms never change). */
export class SubscriptionPlanSnapshot {
  /** @example "5d0c2a9e-1b4f-4e8a-9a43-7c6f1e2d3b4a" */
  id!: string;

  /** @example "Pro monthly" */
  label!: string;

  /** @example "9.99" */
  amount!: string;

  /** @example "USDC" */
  @ApiProperty({ enum: MINT_SYMBOLS })
  mint!: MintSymbol;

  /** @example 2592000 */
  intervalSeconds!: number;
}

export class SubscriptionCustomerSnapshot {
  /** @example "3f1c2a9e-5b0d-4a51-9c43-0c8a8f6a2b7e" */
  id!: string;

  /** @example "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin" */
  walletAddress!: string;

  /** @example "Ada Lovelace" */
  label!: string | null;
}

export class SubscriptionResponse {
  /** @example "c4f1e2d3-b4a5-4968-8776-5a4b3c2d1e0f" */
  id!: string;

  /** @example "5d0c2a9e-1b4f-4e8a-9a43-7c6f1e2d3b4a" */
  planId!: string;

  /** @example "3f1c2a9e-5b0d-4a51-9c43-0c8a8f6a2b7e" */
  customerId!: string;

  /**
   * `Active`: charged at `currentPeriodEnd`. `PastDue`: paused by the merchant, or a charge
   * failed (`failureReason`); nothing is charged until resumed. `Cancelled`: never charged
   * again. `Completed`: the authorised term is over.
   * @example "Active"
   */
  @ApiProperty({ enum: SUBSCRIPTION_STATUSES })
  status!: SubscriptionStatus;

  /** When the next charge is due (the end of the period paid for). @example "2026-12-24T10:15:30.123Z" */
  currentPeriodEnd!: string | null;

  /** ISO 8601 UTC; set on cancellation. @example null */
  cancelledAt!: string | null;

  /**
   * True when the customer cancelled (in the customer portal, by revoking its authorisation on
   * its own) while a paid period runs: it is never charged again, and becomes `Completed`
   * (`failureReason` `authorization_gone`) when `currentPeriodEnd` passes. Access should end
   * then. @example false
   */
  cancelAtPeriodEnd!: boolean;

  /**
   * When the customer's own cancellation was recorded (null: none). Stays set once it has
   * completed. A merchant's cancel is `cancelledAt`. @example null
   */
  customerCancelledAt!: string | null;

  /** When the last successful charge was made. @example "2026-11-24T10:15:30.123Z" */
  lastChargeAt!: string | null;

  /**
   * Why the last charge failed (`insufficient_funds`, `account_frozen`, ...), while PastDue
   * because of it; for a subscription the billing engine Completed, why it ended
   * (`authorization_gone`: the approval no longer covers it; `term_ended`: its authorised term is
   * used up). @example null
   */
  failureReason!: string | null;

  /**
   * Where the customer's authorisation lives on-chain: the subscription delegation PDA (program
   * scheme) or the customer's token account carrying the approval (token-delegate).
   * @example "8sLbNZoA1cfnvMJLPfp98ZLAnFSYCFApfJKMbiXNLwxj"
   */
  onchainAddress!: string | null;

  plan!: SubscriptionPlanSnapshot;

  customer!: SubscriptionCustomerSnapshot;

  /** ISO 8601 UTC. @example "2026-11-24T10:15:30.123Z" */
  createdAt!: string;

  /** ISO 8601 UTC. @example "2026-11-24T10:15:30.123Z" */
  updatedAt!: string;
}

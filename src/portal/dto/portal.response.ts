import { ApiProperty } from '@nestjs/swagger';
import { MINT_SYMBOLS, type MintSymbol } from '../../solana/mints';
import {
  SUBSCRIPTION_STATUSES,
  type SubscriptionStatus,
} from '../../subscriptions/subscription-status';

/** `POST /api/customers/:id/portal-session`. */
export class PortalSessionResponse {
  /**
   * The customer's portal page: a signed link, good until `expiresAt`; hand it to the customer
   * only. @example "https://billing.example.com/portal/AXNPxFBt..."
   */
  url!: string;
  /** @example "2026-11-24T13:00:00.000Z" */
  expiresAt!: string;
}

/** A subscription as its customer sees it in the portal, with what they may do about it. */
export class PortalSubscriptionResponse {
  id!: string;
  planId!: string;
  /** @example "Pro" */
  label!: string;
  @ApiProperty({ enum: MINT_SYMBOLS })
  mint!: MintSymbol;
  /** Per period, decimal. @example "9.99" */
  amount!: string;
  /** The interval in words, after "every". @example "30 days" */
  every!: string;
  @ApiProperty({ enum: SUBSCRIPTION_STATUSES })
  status!: SubscriptionStatus;
  /** Why the last charge failed, or why it ended. @example "insufficient_funds" */
  failureReason!: string | null;
  /** Paused by the merchant (only the merchant resumes it). */
  pausedByMerchant!: boolean;
  /** The customer revoked its authorisation: no further payment; it ends at `currentPeriodEnd`. */
  cancelled!: boolean;
  currentPeriodEnd!: string | null;
  lastChargeAt!: string | null;
  /** When it ended (Cancelled or Completed), ISO 8601 UTC; null while it runs. */
  endedAt!: string | null;
  /** Token-delegate scheme: payments the authorisation still covers; null otherwise. */
  paymentsAuthorized!: number | null;
  /** A failed charge paused it: a top-up and a settle make it Active again. */
  canSettle!: boolean;
  canReauthorize!: boolean;
  /**
   * Re-authorising moves it to the Solana Subscriptions program, where the service now takes new
   * subscriptions: at most two wallet approvals (the program's authority, then the subscribe),
   * after which each payment is bounded on-chain by the plan's terms. Until then its current
   * authorisation keeps being charged.
   */
  movesToProgram!: boolean;
  canCancel!: boolean;
}

export class PortalInvoiceResponse {
  id!: string;
  /** @example "INV-000042" */
  number!: string;
  /** @example "Open" */
  status!: string;
  /** @example "USDC" */
  mint!: string;
  /** @example "10.5" */
  total!: string;
  amountPaid!: string;
  amountDue!: string;
  /** ISO 8601 UTC, or null when the invoice has no due date. */
  dueDate!: string | null;
  /** The invoice's hosted checkout, where it is paid. */
  checkoutUrl!: string;
}

/** `GET /api/portal/session`: what the session's customer has with the merchant. */
export class PortalResponse {
  /** @example "Acme" */
  merchantName!: string;
  walletAddress!: string;
  expiresAt!: string;
  subscriptions!: PortalSubscriptionResponse[];
  invoices!: PortalInvoiceResponse[];
}

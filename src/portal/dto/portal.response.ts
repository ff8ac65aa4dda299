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
  /** The invoice as a PDF. */
  pdfUrl!: string;
  /** Its receipt as a PDF, once Paid; else null. */
  receiptUrl!: string | null;
}

/** A refund the merchant made to the customer. */
export class PortalRefundResponse {
  id!: string;
  /** `Pending`, `Succeeded` or `Expired`. @example "Succeeded" */
  status!: string;
  /** @example "USDC" */
  mint!: string;
  /** @example "4.5" */
  amount!: string;
  invoiceId!: string | null;
  /** The transfer, once Succeeded. */
  signature!: string | null;
  createdAt!: string;
}

/** A credit note the merchant issued to the customer. */
export class PortalCreditNoteResponse {
  id!: string;
  /** @example "CN-000001" */
  number!: string;
  invoiceId!: string;
  /** @example "USDC" */
  mint!: string;
  /** @example "10" */
  amount!: string;
  /** `reduce_due`, `refund` or `credit`. @example "credit" */
  action!: string;
  createdAt!: string;
  /** The credit note as a PDF. */
  pdfUrl!: string;
}

/** The customer's credit balance in one mint, which its next invoices take. */
export class PortalCreditBalanceResponse {
  /** @example "USDC" */
  mint!: string;
  /** @example "12" */
  balance!: string;
}

/** `GET /api/portal/session`: what the session's customer has with the merchant. */
export class PortalResponse {
  /** @example "Acme" */
  merchantName!: string;
  walletAddress!: string;
  expiresAt!: string;
  subscriptions!: PortalSubscriptionResponse[];
  invoices!: PortalInvoiceResponse[];
  refunds!: PortalRefundResponse[];
  creditNotes!: PortalCreditNoteResponse[];
  creditBalances!: PortalCreditBalanceResponse[];
}

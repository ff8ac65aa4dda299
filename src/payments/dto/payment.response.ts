import { ApiProperty } from '@nestjs/swagger';
import { MINT_SYMBOLS, type MintSymbol } from '../../solana/mints';
import {
  PAYMENT_KINDS,
  PAYMENT_STATUSES,
  type PaymentKind,
  type PaymentStatus,
} from '../entities/payment.entity';

/** A metered charge's breakdown (docs/usage.md): amounts in the mint's units, exact decimals. */
export class UsageBreakdownResponse {
  /** The period whose usage this charge billed (the one before the charge's). @example 2 */
  usagePeriod!: number;
  /** The plan's fixed fee, charged for the charge's period. @example "10" */
  fixed!: string;
  /** @example "api_calls" */
  meter!: string;
  /** The period's usage, all of it. @example "1520" */
  units!: string;
  /** @example "1000" */
  includedUnits!: string;
  /** Units beyond the included ones. @example "520" */
  billableUnits!: string;
  /** The price of one block of `unitSize` units. @example "0.01" */
  unitPrice!: string;
  /** Units per priced block (1: priced per unit; a started block is a whole one). @example "1" */
  unitSize!: string;
  /** What the usage came to, before the cap. @example "5.20" */
  usageAmount!: string;
  /** The most the customer authorised for usage per period. @example "50.00" */
  cap!: string;
  /** Whether the usage came to more than the cap (then the cap was charged). @example false */
  capped!: boolean;
}

/**
 * One line of the payments ledger: an invoice payment, a subscription charge, or money that
 * arrived in a merchant's receiving account and pays no invoice (`unattributed`).
 */
export class PaymentResponse {
  /** @example "0b7d3c1e-8f2a-4c5d-9e6f-1a2b3c4d5e6f" */
  id!: string;

  /**
   * `invoice`: a transfer instruction found on-chain carrying one invoice's reference, in its
   * mint; `subscription`: a charge; `unattributed`: money in the merchant's receiving account
   * that pays no invoice by that rule (`note` says why), until the merchant attaches it
   * (`POST /api/invoices/:id/payments`); `refund`: money the merchant gave back of one of those
   * (`POST /api/payments/:id/refunds`), a negative `amount`; `per_request`: an x402 payment
   * the service settled as facilitator (`resourceUrl`, `payer`; docs/x402.md).
   * @example "subscription"
   */
  @ApiProperty({ enum: PAYMENT_KINDS })
  kind!: PaymentKind;

  /**
   * `confirmed`: seen on-chain; `finalized`: irreversible; `failed`: a charge that moved nothing
   * (`note` says why).
   * @example "finalized"
   */
  @ApiProperty({ enum: PAYMENT_STATUSES })
  status!: PaymentStatus;

  /**
   * What arrived in the merchant's account, net of `fee`; for a refund, minus what left it (the
   * recipient got that less `fee`). Decimal string. @example "9.99"
   */
  amount!: string;

  /**
   * What the chain withheld of the transfer (a Token-2022 transfer fee); "0" without one. The
   * payer sent `amount + fee`.
   * @example "0"
   */
  fee!: string;

  /** The merchant's token account that received; null for charges. @example null */
  destination!: string | null;

  /** The references the transfer carried (invoice and unattributed payments). @example [] */
  references!: string[];

  /** What it brought beyond the invoice's total (an overpayment); "0" otherwise. @example "0" */
  excess!: string;

  /** @example "USDC" */
  @ApiProperty({ enum: MINT_SYMBOLS })
  mint!: MintSymbol;

  /** The transaction; null for a charge refused before anything was signed. @example "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW" */
  signature!: string | null;

  /** The paying wallet. @example "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin" */
  payer!: string | null;

  /** @example null */
  invoiceId!: string | null;

  /** @example "c4f1e2d3-b4a5-4968-8776-5a4b3c2d1e0f" */
  subscriptionId!: string | null;

  /** The subscription period a charge paid for (1 = the first). @example 1 */
  period!: number | null;

  /** @example "3f1c2a9e-5b0d-4a51-9c43-0c8a8f6a2b7e" */
  customerId!: string | null;

  /**
   * Invoice payments: `invoice_not_open` when the invoice was already Paid, Cancelled or
   * Expired (recorded, reported, never lost). Unattributed payments: why (`several_invoices`:
   * the transfer carried several invoices' references; `no_invoice_reference`; `other_mint`: it
   * carried an invoice's reference in another mint; `no_transfer_instruction`: it arrived
   * without a transfer instruction of its own; `subscription_pull_by_other`: the Subscriptions
   * program pulled it from a subscription for someone other than the service, the plan's owner
   * or another puller: `references` holds the subscription's address then the puller, and
   * `subscriptionId` the subscription when it is one of yours). Failed charges: why
   * (`insufficient_funds`, `authorization_gone`, `account_frozen`).
   * @example null
   */
  note!: string | null;

  /** The slot it landed in. @example 351234567 */
  slot!: number | null;

  /** A `per_request` payment's resource (the URL the x402 payment bought). @example null */
  resourceUrl!: string | null;

  /** A metered subscription charge's breakdown; null for every other line. */
  usage!: UsageBreakdownResponse | null;

  /** ISO 8601 UTC. @example "2026-11-24T10:15:30.123Z" */
  createdAt!: string;

  /** When it was seen finalized. @example "2026-11-24T10:15:33.523Z" */
  finalizedAt!: string | null;

  /** ISO 8601 UTC. @example "2026-11-24T10:15:33.523Z" */
  updatedAt!: string;
}

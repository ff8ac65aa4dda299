import { ApiProperty } from '@nestjs/swagger';
import { INVOICE_STATUSES, type InvoiceStatus } from '../../invoices/invoice-status';
import { LineItemResponse } from '../../invoices/dto/invoice.response';
import { MeterResponse } from '../../plans/dto/plan.response';
import { MINT_SYMBOLS, type MintSymbol } from '../../solana/mints';

/** Solana Pay transaction request, GET: what the wallet shows before asking for the account. */
export class TransactionRequestMetaResponse {
  /** The merchant (invoices) or the plan (plans). @example "Acme" */
  label!: string;
  /** An absolute URL of an SVG icon. @example "https://billing.example.com/checkout/icon.svg" */
  icon!: string;
}

/** Solana Pay transaction request, POST: the transaction for the account to sign. */
export class TransactionRequestResponse {
  /** Base64 of the serialized transaction, unsigned, fee payer = the account. */
  transaction!: string;
  /** What the wallet shows. @example "Pay INV-000042 to Acme: 10.5 USDC" */
  message!: string;
}

/** The subscribe's transaction request: the transaction, and which step of the subscribe it is. */
export class PlanTransactionRequestResponse extends TransactionRequestResponse {
  /**
   * `subscribe`: the authorisation itself; confirm it once sent. `authority` (the Subscriptions
   * program scheme only, a wallet's first subscription in the mint): the program's authority on
   * the wallet's token account, which the subscribe must name as it landed; send it, then ask
   * for the transaction again to get the subscribe.
   * @example "subscribe"
   */
  @ApiProperty({ enum: ['authority', 'subscribe'] })
  step!: 'authority' | 'subscribe';
}

/** Who an invoice is billed to, as its page shows it: the merchant's label and the wallet. */
export class CheckoutBilledToResponse {
  /** The merchant's display name for the customer (null: none). @example "Ada Lovelace" */
  label!: string | null;
  /** The customer's wallet (base58). */
  walletAddress!: string;
}

/**
 * An invoice as its payer may see it: who it is billed to (label and wallet, never the e-mail),
 * no internal memo.
 */
export class CheckoutInvoiceResponse {
  id!: string;
  /** @example "INV-000042" */
  number!: string;
  @ApiProperty({ enum: INVOICE_STATUSES })
  status!: InvoiceStatus;
  /** @example "Acme" */
  merchantName!: string;
  /** The merchant's wallet, which receives the payment. */
  merchantWallet!: string;
  @ApiProperty({ enum: MINT_SYMBOLS })
  mint!: MintSymbol;
  lineItems!: LineItemResponse[];
  /** @example "10" */
  subtotal!: string;
  /** @example 500 */
  taxBps!: number;
  /** @example "0.5" */
  tax!: string;
  /** @example "10.5" */
  total!: string;
  /** @example "0" */
  amountPaid!: string;
  /** What credit notes and the customer's credit balance took off it. @example "0" */
  amountCredited!: string;
  /** What the merchant is still to receive. @example "10.5" */
  amountDue!: string;
  /**
   * What the payer sends for `amountDue` to arrive: the same, or more by the mint's Token-2022
   * transfer fee (which the chain withholds from what arrives). @example "10.5"
   */
  amountToPay!: string;
  /** The reference key a payment carries (base58). */
  reference!: string;
  dueDate!: string | null;
  paidAt!: string | null;
  /** When the invoice was issued (created), ISO 8601 UTC. */
  issuedAt!: string;
  billedTo!: CheckoutBilledToResponse;
}

/** A plan as a prospective subscriber may see it. */
export class CheckoutPlanResponse {
  id!: string;
  /** @example "Pro monthly" */
  label!: string;
  description!: string | null;
  /** @example "Acme" */
  merchantName!: string;
  @ApiProperty({ enum: MINT_SYMBOLS })
  mint!: MintSymbol;
  /**
   * The most each period charges: the price, or with a meter its fixed fee plus the meter's cap
   * (what the subscriber authorises). @example "9.99"
   */
  amount!: string;
  /** With a meter, the fixed fee each period's usage is added to; else `amount`. @example "9.99" */
  fixedAmount!: string;
  /** Usage charged on top of the fixed fee, at most its cap a period; null: none. */
  meter!: MeterResponse | null;
  /** @example 2592000 */
  intervalSeconds!: number;
  /** `false`: no new subscribers. */
  active!: boolean;
  /**
   * What each period's charge takes: `amount`, or more by the mint's Token-2022 transfer fee
   * (which the chain withholds: `amount` reaches the merchant). @example "9.99"
   */
  amountPerPeriod!: string;
  /**
   * What the subscribe authorises the service to pull from the subscriber's token account for
   * this plan, in total (token-delegate scheme: amount x periods); null under the program scheme,
   * where the program enforces the amount per period.
   * @example "119.88"
   */
  authorizedAmount!: string | null;
  /** How many periods that covers. @example 12 */
  authorizedPeriods!: number | null;
}

/** How the first payment of a subscription went. */
export const FIRST_PAYMENT_STATES = ['pending', 'paid', 'failed'] as const;
export type FirstPaymentState = (typeof FIRST_PAYMENT_STATES)[number];

/**
 * What the checkout page needs to know after a subscribe, and no more: anyone who knows a
 * (public) transaction signature may ask, so no subscription id, wallet, status history or
 * dates. The merchant reads the subscription itself through the API.
 */
export class CheckoutSubscriptionResponse {
  planId!: string;
  /**
   * Whether this request created the subscription (false: the signature was confirmed before,
   * or the wallet already had a live subscription to the plan).
   */
  created!: boolean;
  /** Whether the subscription the signature belongs to is live (Active or PastDue). */
  subscribed!: boolean;
  /** Its first payment; null once the subscription has ended. */
  @ApiProperty({ enum: FIRST_PAYMENT_STATES, nullable: true, type: String })
  firstPayment!: FirstPaymentState | null;
  /** Why the first payment did not go through (`insufficient_funds`, ...), else null. */
  failureReason!: string | null;
}

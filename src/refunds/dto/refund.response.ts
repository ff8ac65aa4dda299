import { ApiProperty } from '@nestjs/swagger';
import { MINT_SYMBOLS, type MintSymbol } from '../../solana/mints';
import { REFUND_STATUSES, type RefundStatus } from '../entities/refund.entity';

/** Money a merchant gives back of a payment, sent from its own wallet (docs/refunds.md). */
export class RefundResponse {
  /** @example "9b2f6c1d-3e4a-4b5c-8d7e-0f1a2b3c4d5e" */
  id!: string;

  /** The ledger line refunded (`GET /api/payments`). @example "0b7d3c1e-8f2a-4c5d-9e6f-1a2b3c4d5e6f" */
  paymentId!: string;

  /** The invoice that payment paid, if any. @example null */
  invoiceId!: string | null;

  /** The subscription that charge was of, if any. @example "5c0e1d2f-3a4b-4c5d-9e6f-7a8b9c0d1e2f" */
  subscriptionId!: string | null;

  /** @example "3f1c2a9e-5b0d-4a51-9c43-0c8a8f6a2b7e" */
  customerId!: string | null;

  /**
   * `Pending`: its transaction is with the merchant to sign and send; `Succeeded`: the transfer
   * is finalized on-chain; `Expired`: its transaction can no longer land and nothing carrying
   * its reference did (`POST /api/refunds/:id/transaction` issues a new one).
   * @example "Pending"
   */
  @ApiProperty({ enum: REFUND_STATUSES })
  status!: RefundStatus;

  /** @example "USDC" */
  @ApiProperty({ enum: MINT_SYMBOLS })
  mint!: MintSymbol;

  /** What leaves the merchant's account. Decimal string. @example "4.5" */
  amount!: string;

  /** What the chain withheld of it (a Token-2022 transfer fee), once Succeeded. @example "0" */
  fee!: string;

  /** @example "Order cancelled" */
  reason!: string | null;

  /** The key its transfer carries: how it is found on-chain. @example "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin" */
  reference!: string;

  /** The wallet the money goes back to (the payment's payer). @example "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU" */
  recipient!: string;

  /** The recipient's token account of the mint. @example "3Kz9YH9yUq2sN8d7a2c9c4o1oYQpE4n4n6rP3r8tQ5mW" */
  destination!: string;

  /** The block height after which its current transaction can no longer land. @example 312345678 */
  lastValidBlockHeight!: number;

  /** The transfer that did it, once Succeeded. @example null */
  signature!: string | null;

  /** Its ledger line (a negative `amount`), once Succeeded. @example null */
  ledgerPaymentId!: string | null;

  /** @example "2026-11-27T10:00:00.000Z" */
  createdAt!: string;

  /** @example "2026-11-27T10:00:00.000Z" */
  updatedAt!: string;

  /** @example null */
  succeededAt!: string | null;

  /** @example null */
  expiredAt!: string | null;
}

/** A refund with the transaction the merchant signs and sends to make it. */
export class RefundTransactionResponse {
  refund!: RefundResponse;

  /**
   * The transaction, base64, unsigned: the merchant's wallet is its fee payer and only signer.
   * @example "AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAQABA..."
   */
  unsignedTx!: string;

  /** The block height after which it can no longer land (about a minute). @example 312345678 */
  lastValidBlockHeight!: number;
}

/**
 * `POST /api/refunds/:id/transaction`: the refund Pending again with its new transaction, or,
 * when its transfer was found on-chain after all, the refund Succeeded and no transaction.
 */
export class RefundReissueResponse {
  refund!: RefundResponse;

  /** The new transaction, base64, unsigned; null when the refund was found Succeeded. */
  unsignedTx!: string | null;

  /** The block height after which it can no longer land; null with no transaction. */
  lastValidBlockHeight!: number | null;
}

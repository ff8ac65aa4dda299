import { ApiProperty } from '@nestjs/swagger';
import { CustomerResponse } from '../../customers/dto/customer.response';
import { EmailDeliveryResponse } from '../../email/dto/email-delivery.response';
import { MINT_SYMBOLS, type MintSymbol } from '../../solana/mints';
import { INVOICE_STATUSES, type InvoiceStatus } from '../invoice-status';

export class LineItemResponse {
  /** @example "Consulting, November" */
  description!: string;

  /** @example 3 */
  quantity!: number;

  /** @example "150" */
  unitAmount!: string;

  /** `quantity x unitAmount`. @example "450" */
  amount!: string;
}

export class InvoiceResponse {
  /** @example "7a1d2e3f-4b5c-4d6e-8f90-1a2b3c4d5e6f" */
  id!: string;

  /** Sequential per merchant. @example "INV-000042" */
  number!: string;

  /** @example "Open" */
  @ApiProperty({ enum: INVOICE_STATUSES })
  status!: InvoiceStatus;

  /**
   * The invoice's reference key (base58): its payments carry it, and it is searchable.
   * @example "Ffq9mR5s3e6QJ7ak2dV8xYcN4pH1uT9wZbL6gK3jE2aM"
   */
  onchainId!: string;

  /** @example "PO 4471" */
  memo!: string | null;

  /** @example "USDC" */
  @ApiProperty({ enum: MINT_SYMBOLS })
  mint!: MintSymbol;

  lineItems!: LineItemResponse[];

  /** The sum of the line items. @example "450" */
  subtotal!: string;

  /** @example 825 */
  taxBps!: number;

  /** `subtotal x taxBps / 10000`, rounded half up to the base unit. @example "37.125" */
  tax!: string;

  /** `subtotal + tax`: what the customer pays. @example "487.125" */
  total!: string;

  /** What payments have brought so far. @example "0" */
  amountPaid!: string;

  /** `total - amountPaid - amountCredited`, never below 0. @example "487.125" */
  amountDue!: string;

  /**
   * What Succeeded refunds of its payments gave back (docs/refunds.md); the invoice stays Paid.
   * @example "0"
   */
  amountRefunded!: string;

  /**
   * What credit notes (`reduce_due`) and the customer's credit balance took off what it asks
   * for (docs/refunds.md). @example "0"
   */
  amountCredited!: string;

  /**
   * What credit notes (`credit`) turned of its payments into the customer's credit balance.
   * @example "0"
   */
  amountCreditedToBalance!: string;

  /** ISO 8601 UTC, or null. @example "2026-12-31T23:59:59.000Z" */
  dueDate!: string | null;

  /**
   * The hosted page where the customer pays.
   * @example "https://billing.example.com/checkout/invoices/7a1d2e3f-4b5c-4d6e-8f90-1a2b3c4d5e6f"
   */
  hostedCheckoutUrl!: string;

  /** @example "3f1c2a9e-5b0d-4a51-9c43-0c8a8f6a2b7e" */
  customerId!: string;

  /** ISO 8601 UTC, once paid. @example null */
  paidAt!: string | null;

  /** The signature of the payment that completed it. @example null */
  paymentSignature!: string | null;

  /** ISO 8601 UTC. @example "2026-11-24T10:15:30.123Z" */
  createdAt!: string;

  /** ISO 8601 UTC. @example "2026-11-24T10:15:30.123Z" */
  updatedAt!: string;
}

/** An invoice with its customer (list and single-invoice responses). */
export class InvoiceWithCustomerResponse extends InvoiceResponse {
  customer!: CustomerResponse;
}

/** A single invoice (`GET /api/invoices/:id`): with its customer and its e-mail's delivery. */
export class InvoiceDetailResponse extends InvoiceWithCustomerResponse {
  /**
   * Where the invoice notification to the customer stands; null when none was queued (the
   * customer had no e-mail when the invoice was created), or once it was deleted,
   * `EMAIL_RETENTION_DAYS` after its last attempt.
   */
  @ApiProperty({ type: EmailDeliveryResponse, nullable: true })
  email!: EmailDeliveryResponse | null;
}

export class CreateInvoiceResponse {
  invoice!: InvoiceWithCustomerResponse;

  /**
   * Registers the invoice on-chain once the merchant signs and sends it: a memo with a SHA-256
   * commitment to its terms, carrying its reference key. Stale after about a minute:
   * `POST /api/invoices/:id/registration-tx` issues a fresh one.
   * @example "AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAQABA..."
   */
  unsignedTx!: string;

  /** The same as `invoice.hostedCheckoutUrl`. */
  hostedCheckoutUrl!: string;
}

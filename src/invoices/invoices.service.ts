import { Injectable } from '@nestjs/common';
import bs58 from 'bs58';
import { randomBytes, randomUUID } from 'node:crypto';
import { Clock } from '../common/clock';
import { DomainError, NotFoundError, ValidationError } from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-codes';
import { invoiceTotals, parseAmount } from '../common/money';
import { resolvePage } from '../common/pagination';
import { AppConfig } from '../config/app-config';
import { CustomerCreditsService } from '../customers/customer-credits.service';
import { CustomersService, upsertEvent } from '../customers/customers.service';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import { EmailOutboxService } from '../email/email-outbox.service';
import { renderInvoiceEmail } from '../email/invoice-email';
import { EventsService } from '../events/events.service';
import { IdempotencyClaim, IdempotencyService } from '../idempotency/idempotency.service';
import { MerchantsService } from '../merchants/merchants.service';
import { UnsignedTxResponse } from '../common/dto/unsigned-tx.response';
import { ChainPort } from '../solana/chain.port';
import { CreateInvoiceDto, ListInvoicesQueryDto } from './dto/invoice.dto';
import {
  CreateInvoiceResponse,
  InvoiceDetailResponse,
  InvoiceResponse,
  InvoiceWithCustomerResponse,
} from './dto/invoice.response';
import type { StoredLineItem } from './entities/invoice.entity';
import { invoiceCommitment } from './invoice-commitment';
import { checkoutUrlPrefixJson, invoiceListItemJson } from './invoice-list';
import {
  lineItemsJson,
  InvoiceRow,
  InvoiceWithCustomerRow,
  toInvoiceResponse,
  toInvoiceWithCustomer,
} from './invoice.mapper';
import { INVOICE_TRANSITIONS, InvoiceAction } from './invoice-status';
import { InvoicePaymentTarget, InvoicesRepository } from './invoices.repository';
import {
  CheckoutInvoiceRow,
  InvoiceViewsRepository,
  PortalInvoiceRow,
} from './invoice-views.repository';

/** The spec's code when a void finds the invoice in another status than Open. */
export class InvoiceNotOpenError extends DomainError {
  constructor(status: string) {
    super(ErrorCode.INVOICE_NOT_OPEN, `Invoice is not Open (it is ${status})`);
  }
}

/**
 * Invoices of a merchant. Every query filters by the merchant id; every not-found (absent,
 * another merchant's, malformed id) is `INVOICE_NOT_FOUND`. Money is exact to the base unit
 * through the money module; statuses move only through `transition`.
 */
/** What the checkout and the portal read of invoices (they hold no SQL of their own). */
export type { CheckoutInvoiceRow, InvoicePaymentTarget, PortalInvoiceRow };

@Injectable()
export class InvoicesService {
  constructor(
    private readonly db: Db,
    private readonly invoices: InvoicesRepository,
    private readonly views: InvoiceViewsRepository,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly merchants: MerchantsService,
    private readonly customers: CustomersService,
    private readonly credits: CustomerCreditsService,
    private readonly events: EventsService,
    private readonly chain: ChainPort,
    private readonly email: EmailOutboxService,
    private readonly idempotency: IdempotencyService,
  ) {}

  /**
   * Creates an invoice (DESIGN D10): the totals, a fresh reference key as `onchainId`, the next
   * number, the customer upserted by wallet and `invoice.created`, all in one transaction. The
   * registration transaction is built first, so no database transaction waits on the chain;
   * with the chain unreachable nothing is created (503). When the customer has an e-mail (given
   * now or before), the invoice notification is queued in the same transaction: it is sent by
   * the outbox's worker after the commit, never by the request.
   */
  async create(
    merchantId: string,
    input: CreateInvoiceDto,
    claim?: IdempotencyClaim,
  ): Promise<CreateInvoiceResponse> {
    const lines = input.lineItems.map((line) => ({
      description: line.description,
      quantity: line.quantity,
      unitAmount: parseAmount(line.unitAmount),
    }));
    const taxBps = input.taxBps ?? 0;
    const totals = invoiceTotals(lines, taxBps); // beyond the largest amount: a 400
    const now = this.clock.now();
    const dueDate = input.dueDate === undefined ? null : new Date(input.dueDate);
    if (dueDate && dueDate.getTime() <= now.getTime()) {
      throw new ValidationError('dueDate: must be in the future', [
        { field: 'dueDate', message: 'must be in the future' },
      ]);
    }
    const id = randomUUID();
    // A Solana Pay reference: 32 random bytes, base58 (it need not be a point on the curve, and
    // generating a keypair for it costs ~0.4 ms of CPU for nothing).
    const onchainId = bs58.encode(randomBytes(32));
    const merchant = await this.merchants.account(merchantId);
    const registration = await this.chain.buildInvoiceRegistration({
      merchantWallet: merchant.walletAddress,
      mint: input.mint,
      reference: onchainId,
      commitment: invoiceCommitment({
        onchainId,
        mint: input.mint,
        total: totals.total,
        merchantWallet: merchant.walletAddress,
        dueDate: dueDate?.toISOString() ?? null,
      }),
    });
    const stored: StoredLineItem[] = lines.map((line) => ({
      description: line.description,
      quantity: line.quantity,
      unitAmount: line.unitAmount.toString(),
    }));
    return this.db.session(async (session) => {
      // The number commits on its own, before the invoice's transaction (see `nextNumber`).
      const number = await this.invoices.nextNumber(session, merchantId);
      return session.transaction(async (tx) => {
        const upserted = await this.customers.upsertRowIn(tx, merchantId, {
          walletAddress: input.walletAddress,
          email: input.customerEmail,
          label: input.customerLabel,
        });
        const { customer } = upserted;
        // The customer's credit balance in the mint pays what it can, at once (docs/refunds.md).
        const credited = await this.credits.applyIn(
          tx,
          { merchantId, customerId: customer.id, mint: input.mint, upTo: totals.total },
          id,
        );
        const row: InvoiceRow = {
          id,
          merchant_id: merchantId,
          customer_id: customer.id,
          number,
          status: 'Open',
          onchain_id: onchainId,
          memo: input.memo ?? null,
          mint: input.mint,
          line_items: stored,
          subtotal: totals.subtotal.toString(),
          tax_bps: taxBps,
          tax: totals.tax.toString(),
          total: totals.total.toString(),
          amount_paid: '0',
          amount_refunded: '0',
          amount_credited: credited.toString(),
          amount_credited_to_balance: '0',
          amount_due: (totals.total - credited).toString(),
          due_date: dueDate?.toISOString() ?? null,
          paid_at: null,
          payment_signature: null,
          created_at: now.toISOString(),
          updated_at: now.toISOString(),
        };
        const created: InvoiceWithCustomerResponse = {
          ...toInvoiceResponse(row, this.config.publicBaseUrl),
          customer,
        };
        // The invoice and its events (the customer's first) in one statement: one round trip.
        const customerEvent = upsertEvent(upserted);
        await this.events.recordAll(
          tx,
          merchantId,
          [...(customerEvent ? [customerEvent] : []), { type: 'invoice.created', object: created }],
          this.invoices.insertWrite({
            id,
            merchant_id: merchantId,
            customer_id: customer.id,
            number,
            onchain_id: onchainId,
            memo: row.memo,
            mint: row.mint,
            line_items: stored,
            line_items_json: lineItemsJson(stored),
            subtotal: row.subtotal,
            tax_bps: taxBps,
            tax: row.tax,
            total: row.total,
            amount_credited: row.amount_credited,
            due_date: dueDate,
            chain_slot: registration.slot,
            at: now,
          }),
        );
        if (customer.email) {
          const message = renderInvoiceEmail({
            merchantName: merchant.name,
            invoiceNumber: created.number,
            mint: created.mint,
            lineItems: created.lineItems,
            subtotal: created.subtotal,
            taxBps: created.taxBps,
            tax: created.tax,
            total: created.total,
            dueDate: created.dueDate,
            hostedCheckoutUrl: created.hostedCheckoutUrl,
          });
          await this.email.enqueue(tx, merchantId, {
            to: customer.email,
            invoiceId: id,
            ...message,
          });
        }
        // Credit that covers it all: Paid at once (`invoice.paid`), nothing asked on-chain.
        const invoice =
          credited === totals.total ? await this.transition(tx, merchantId, id, 'pay') : created;
        const response = {
          invoice,
          unsignedTx: registration.transaction,
          hostedCheckoutUrl: created.hostedCheckoutUrl,
        };
        // With an Idempotency-Key, the response commits with the invoice (D15).
        if (claim) await this.idempotency.completeIn(tx, claim, 201, response);
        return response;
      });
    });
  }

  /**
   * Newest first, each with its customer; `status` filters, `search` is a case-insensitive
   * substring of the onchainId, number, memo, or the customer's label or wallet (D11). Read
   * through a cursor and handed to `onBatch` as JSON a batch of rows at a time
   * (`Db.forEachBatch`), so a list of any length costs two batches of memory. `limit` and
   * `startingAfter` ask for a page of it (D6).
   * @throws ValidationError when `startingAfter` names no invoice of the merchant.
   */
  async listJson(
    merchantId: string,
    query: ListInvoicesQueryDto,
    onBatch: (json: string) => Promise<boolean>,
  ): Promise<void> {
    const prefix = checkoutUrlPrefixJson(this.config.publicBaseUrl);
    const page = await resolvePage(query, 'invoice', (id) =>
      this.invoices.createdAt(merchantId, id),
    );
    await this.invoices.streamList(
      merchantId,
      { status: query.status, search: query.search },
      page,
      (rows) => onBatch(rows.map((row) => invoiceListItemJson(row, prefix)).join(',')),
    );
  }

  /**
   * One invoice with its customer and where its e-mail notification stands (`email`, null when
   * none was queued).
   * @throws NotFoundError (`INVOICE_NOT_FOUND`) when absent or another merchant's.
   */
  async get(merchantId: string, id: string): Promise<InvoiceDetailResponse> {
    const invoice = toInvoiceWithCustomer(
      await this.findRow(this.db, merchantId, id),
      this.config.publicBaseUrl,
    );
    const email = await this.email.stateForInvoices(merchantId, [invoice.id]);
    return { ...invoice, email: email.get(invoice.id) ?? null };
  }

  /** A customer's invoices, newest first, without the nested customer (customer detail, D7). */
  /**
   * An invoice by id alone, any merchant's, with its merchant and customer: what the public
   * checkout shows (the payer holds the link). Undefined when there is none.
   */
  findForCheckout(id: string): Promise<CheckoutInvoiceRow | undefined> {
    return this.views.findForCheckout(id);
  }

  /** A customer's invoices as the customer portal lists them, newest first. */
  listForPortal(merchantId: string, customerId: string): Promise<PortalInvoiceRow[]> {
    return this.views.listForPortal(merchantId, customerId);
  }

  async listForCustomer(
    merchantId: string,
    customerId: string,
    ex?: SqlTx,
  ): Promise<InvoiceResponse[]> {
    const rows = await this.invoices.listForCustomer(ex ?? this.db, merchantId, customerId);
    return rows.map((row) => toInvoiceResponse(row, this.config.publicBaseUrl));
  }

  /** `Open -> Cancelled`; the customer can no longer pay it. `invoice.voided` is recorded. */
  async void(merchantId: string, id: string): Promise<InvoiceWithCustomerResponse> {
    return this.db.transaction((tx) => this.transition(tx, merchantId, id, 'void'));
  }

  /**
   * Applies an action of the transition table (invoice-status.ts) inside the caller's
   * transaction: moves the status only from an allowed one (checked by the UPDATE itself, under
   * the row's lock, so concurrent moves serialize), stamps `updatedAt` (and `paidAt` with its
   * signature for `pay`) and records the action's event.
   * @throws NotFoundError (`INVOICE_NOT_FOUND`) or InvoiceNotOpenError.
   */
  async transition(
    em: SqlTx,
    merchantId: string,
    id: string,
    action: InvoiceAction,
    payment?: { signature: string },
  ): Promise<InvoiceWithCustomerResponse> {
    const move = INVOICE_TRANSITIONS[action];
    const moved = await this.invoices.moveStatus(
      em,
      merchantId,
      id,
      {
        from: move.from,
        to: move.to,
        paid: action === 'pay',
        signature: payment?.signature ?? null,
      },
      this.clock.now(),
    );
    const row = await this.findRow(em, merchantId, id); // not found: INVOICE_NOT_FOUND
    if (!moved) throw new InvoiceNotOpenError(row.status);
    // Never paid: what the customer's credit balance gave it goes back to the balance.
    if (action === 'void' || action === 'expire') {
      await this.credits.restoreIn(
        em,
        { merchantId, customerId: row.customer_id, mint: row.mint },
        id,
      );
    }
    const invoice = toInvoiceWithCustomer(row, this.config.publicBaseUrl);
    if (move.event) await this.events.record(em, merchantId, move.event, invoice);
    return invoice;
  }

  /** The invoice as the API returns it, read in the caller's transaction. */
  async getIn(em: SqlTx, merchantId: string, id: string): Promise<InvoiceWithCustomerResponse> {
    return toInvoiceWithCustomer(await this.findRow(em, merchantId, id), this.config.publicBaseUrl);
  }

  /**
   * Records `invoice.overdue` once for an Open invoice whose `dueDate` has passed (the billing
   * engine's sweep). @returns false when it is not Open, not past due, or already reported.
   */
  async markOverdue(em: SqlTx, merchantId: string, id: string): Promise<boolean> {
    if (!(await this.invoices.markOverdue(em, merchantId, id, this.clock.now()))) return false;
    await this.events.record(
      em,
      merchantId,
      'invoice.overdue',
      await this.getIn(em, merchantId, id),
    );
    return true;
  }

  /** A fresh registration transaction for an Open invoice (the first goes stale in a minute). */
  async registrationTx(merchantId: string, id: string): Promise<UnsignedTxResponse> {
    const row = await this.findRow(this.db, merchantId, id);
    if (row.status !== 'Open') throw new InvoiceNotOpenError(row.status);
    const merchant = await this.merchants.account(merchantId);
    const tx = await this.chain.buildInvoiceRegistration({
      merchantWallet: merchant.walletAddress,
      mint: row.mint,
      reference: row.onchain_id,
      commitment: invoiceCommitment({
        onchainId: row.onchain_id,
        mint: row.mint,
        total: BigInt(row.total),
        merchantWallet: merchant.walletAddress,
        dueDate: row.due_date,
      }),
    });
    return { unsignedTx: tx.transaction, lastValidBlockHeight: tx.lastValidBlockHeight };
  }

  private async findRow(
    em: SqlTx,
    merchantId: string,
    id: string,
  ): Promise<InvoiceWithCustomerRow> {
    // In the caller's transaction when there is one (a transition reads what it just wrote).
    const row = await this.invoices.findWithCustomer(em, merchantId, id);
    if (!row) throw new NotFoundError('Invoice', ErrorCode.INVOICE_NOT_FOUND);
    return row;
  }
}

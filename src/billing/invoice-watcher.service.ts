import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { AppConfig } from '../config/app-config';
import { inPgTransaction, pgQuery, type SqlTx } from '../database/pg-transaction';
import { EventsService, NewEvent } from '../events/events.service';
import { InvoicesService } from '../invoices/invoices.service';
import { PaymentResponse } from '../payments/dto/payment.response';
import { PaymentsService } from '../payments/payments.service';
import { ChainPort, ScannedPayment } from '../solana/chain.port';
import { MINT_SYMBOLS, type MintSymbol } from '../solana/mints';

/** What one sweep of the watchers did. */
export interface WatchResult {
  /** Receiving token accounts scanned (one `getSignaturesForAddress` each when idle). */
  accountsScanned: number;
  signaturesScanned: number;
  /** Invoice payments recorded (new ledger lines). */
  paymentsRecorded: number;
  /** Ledger lines seen finalized. */
  paymentsFinalized: number;
  invoicesPaid: number;
  invoicesOverdue: number;
  invoicesExpired: number;
}

interface CursorRow {
  address: string;
  merchant_id: string;
  mint: MintSymbol;
  cursor: string | null;
}

interface InvoiceTarget {
  id: string;
  status: string;
  total: string;
  amount_paid: string;
  customer_id: string;
  mint: MintSymbol;
}

/** Ledger lines finalized per sweep (their statuses are read 256 per RPC call). */
const FINALITY_BATCH = 1024;
/** Invoices moved per statement by the overdue and expiry sweep. */
const DUE_BATCH = 500;

/**
 * Finds invoice payments and follows them to finality (DESIGN sections 6 and 8).
 *
 * **Scans by merchant account, not by invoice.** Each merchant's receiving token account of
 * each mint is scanned forward from a stored cursor (`chain_cursors`): a sweep with nothing new
 * costs one RPC call per account, however many invoices are open, and every new transaction is
 * read once. A transfer into the account carrying an invoice's reference (`onchainId`) of that
 * merchant, in the invoice's mint, is a payment of it: partial payments accumulate
 * (`amountPaid`), the one that crosses the total records the excess, and a payment to an invoice
 * that is no longer Open is recorded with `note: invoice_not_open` and reported, never lost.
 * Spam (transactions naming a reference without paying the account) never reaches the account's
 * history; a cursor scan reads everything after it, so nothing can push a payment out of view.
 *
 * Two instances scanning one account at once record each payment once (a unique index on
 * (signature, invoice)); the cursor moves by compare-and-set. No transaction is held open
 * across an RPC call.
 */
@Injectable()
export class InvoiceWatcherService {
  private readonly logger = new Logger(InvoiceWatcherService.name);

  constructor(
    private readonly em: EntityManager,
    private readonly chain: ChainPort,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly events: EventsService,
    private readonly payments: PaymentsService,
    private readonly invoices: InvoicesService,
  ) {}

  /** One sweep: payments, finality, then overdue and expired invoices. */
  async sweep(): Promise<WatchResult> {
    const result: WatchResult = {
      accountsScanned: 0,
      signaturesScanned: 0,
      paymentsRecorded: 0,
      paymentsFinalized: 0,
      invoicesPaid: 0,
      invoicesOverdue: 0,
      invoicesExpired: 0,
    };
    await this.scanAccounts(result);
    await this.finalize(result);
    await this.overdueAndExpired(result);
    return result;
  }

  /** Every (merchant, mint) that has invoices gets a cursor; every cursor is scanned. */
  private async scanAccounts(result: WatchResult): Promise<void> {
    await this.addCursors();
    const cursors = await pgQuery<CursorRow[]>(
      this.em,
      `SELECT address, merchant_id, mint, cursor FROM chain_cursors WHERE kind = 'merchant_account' ORDER BY address`,
    );
    for (const cursor of cursors) {
      try {
        await this.scanAccount(cursor, result);
      } catch (error) {
        this.logger.warn(
          { err: error, account: cursor.address },
          'Scan of a merchant account failed; the next sweep retries from its cursor',
        );
      }
    }
  }

  /** Cursors for the (merchant, mint) pairs of invoices that have none yet. */
  private async addCursors(): Promise<void> {
    const missing = await pgQuery<{ merchant_id: string; mint: MintSymbol; wallet: string }[]>(
      this.em,
      `SELECT DISTINCT i.merchant_id, i.mint, m.wallet_address AS wallet
         FROM invoices i JOIN merchants m ON m.id = i.merchant_id
        WHERE i.status = 'Open'
          AND NOT EXISTS (
            SELECT 1 FROM chain_cursors k
             WHERE k.kind = 'merchant_account' AND k.merchant_id = i.merchant_id AND k.mint = i.mint)`,
    );
    for (const pair of missing) {
      if (!MINT_SYMBOLS.includes(pair.mint)) continue;
      const address = await this.chain.tokenAccount(pair.wallet, pair.mint);
      await pgQuery(
        this.em,
        `INSERT INTO chain_cursors (address, kind, merchant_id, mint, cursor, updated_at)
         VALUES (?, 'merchant_account', ?, ?, NULL, ?) ON CONFLICT (address) DO NOTHING`,
        [address, pair.merchant_id, pair.mint, this.clock.now()],
      );
    }
  }

  private async scanAccount(cursor: CursorRow, result: WatchResult): Promise<void> {
    const scan = await this.chain.scanTokenAccount(cursor.address, cursor.cursor);
    result.accountsScanned++;
    result.signaturesScanned += scan.signaturesScanned;
    const mint = await this.chain.mint(cursor.mint);
    for (const payment of scan.payments) {
      if (payment.mint !== mint.address || payment.destination !== cursor.address) continue;
      for (const reference of payment.references) {
        if (await this.recordPayment(cursor, reference, payment)) result.paymentsRecorded++;
      }
    }
    if (scan.cursor !== cursor.cursor) {
      await pgQuery(
        this.em,
        `UPDATE chain_cursors SET cursor = ?, updated_at = ? WHERE address = ? AND cursor IS NOT DISTINCT FROM ?`,
        [scan.cursor, this.clock.now(), cursor.address, cursor.cursor],
      );
    }
  }

  /**
   * Records a transfer carrying `reference` as a payment of that merchant's invoice, if it is
   * one, in the invoice's mint. @returns whether a new ledger line was written.
   */
  private async recordPayment(
    cursor: CursorRow,
    reference: string,
    scanned: ScannedPayment,
  ): Promise<boolean> {
    return inPgTransaction(this.em, async (em) => {
      const [invoice] = await em.execute<InvoiceTarget[]>(
        `SELECT id, status, total::text AS total, amount_paid::text AS amount_paid, customer_id, mint
           FROM invoices WHERE onchain_id = ? AND merchant_id = ? FOR UPDATE`,
        [reference, cursor.merchant_id],
      );
      if (!invoice || invoice.mint !== cursor.mint) return false;
      const open = invoice.status === 'Open';
      const total = BigInt(invoice.total);
      const paidBefore = BigInt(invoice.amount_paid);
      const paidAfter = paidBefore + scanned.amount;
      const excess = !open
        ? scanned.amount
        : paidAfter > total
          ? paidAfter - (paidBefore > total ? paidBefore : total)
          : 0n;
      const payment = await this.payments.insertIn(em, {
        merchantId: cursor.merchant_id,
        kind: 'invoice',
        status: scanned.finalized ? 'finalized' : 'confirmed',
        amount: scanned.amount,
        excess,
        mint: invoice.mint,
        signature: scanned.signature,
        payer: scanned.payer,
        customerId: invoice.customer_id,
        invoiceId: invoice.id,
        note: open ? null : 'invoice_not_open',
        slot: scanned.slot,
      });
      if (!payment) return false; // recorded before (another scan or instance)
      if (open) {
        await em.execute(
          `UPDATE invoices SET amount_paid = amount_paid + ?::bigint, updated_at = ? WHERE id = ?`,
          [scanned.amount.toString(), this.clock.now(), invoice.id],
        );
      }
      const events: NewEvent[] = [{ type: 'payment.received', object: payment }];
      if (payment.status === 'finalized')
        events.push({ type: 'payment.confirmed', object: payment });
      await this.events.recordAll(em, cursor.merchant_id, events);
      if (payment.status === 'finalized') await this.payIfCovered(em, payment);
      return true;
    });
  }

  /** Ledger lines seen at `confirmed` are followed until `finalized` (any kind). */
  private async finalize(result: WatchResult): Promise<void> {
    const pending = await pgQuery<{ id: string; signature: string; merchant_id: string }[]>(
      this.em,
      `SELECT id, signature, merchant_id FROM payments
        WHERE status = 'confirmed' AND signature IS NOT NULL
        ORDER BY created_at LIMIT ?`,
      [FINALITY_BATCH],
    );
    if (pending.length === 0) return;
    const outcomes = await this.chain.outcomes(
      pending.map((p) => ({
        signature: p.signature,
        lastValidBlockHeight: Number.MAX_SAFE_INTEGER,
      })),
    );
    for (const line of pending) {
      const outcome = outcomes.get(line.signature);
      if (outcome?.state !== 'succeeded' || !outcome.finalized) continue;
      const paid = await inPgTransaction(this.em, async (em) => {
        const payment = await this.payments.finalizeIn(em, line.id);
        if (!payment) return null;
        await this.events.record(em, line.merchant_id, 'payment.confirmed', payment);
        result.paymentsFinalized++;
        return payment.kind === 'invoice' ? this.payIfCovered(em, payment) : false;
      });
      if (paid) result.invoicesPaid++;
    }
  }

  /**
   * The invoice becomes Paid (`invoice.paid`) once its finalized payments reach the total.
   * @returns whether it moved now.
   */
  private async payIfCovered(em: SqlTx, payment: PaymentResponse): Promise<boolean> {
    if (!payment.invoiceId || payment.note) return false;
    const [covered] = await em.execute<{ covered: boolean }[]>(
      `SELECT i.status = 'Open' AND COALESCE((
                SELECT SUM(pm.amount) FROM payments pm
                 WHERE pm.invoice_id = i.id AND pm.kind = 'invoice' AND pm.status = 'finalized'
                   AND pm.note IS NULL), 0) >= i.total AS covered
         FROM invoices i WHERE i.id = ? FOR UPDATE`,
      [payment.invoiceId],
    );
    if (!covered?.covered) return false;
    const merchantId = (
      await em.execute<{ merchant_id: string }[]>(`SELECT merchant_id FROM invoices WHERE id = ?`, [
        payment.invoiceId,
      ])
    )[0].merchant_id;
    await this.invoices.transition(em, merchantId, payment.invoiceId, 'pay', {
      signature: payment.signature!,
    });
    return true;
  }

  /** `invoice.overdue` once past `dueDate`; `Expired` past `dueDate + INVOICE_EXPIRY_DAYS`. */
  private async overdueAndExpired(result: WatchResult): Promise<void> {
    const now = this.clock.now();
    const overdue = await pgQuery<{ id: string; merchant_id: string }[]>(
      this.em,
      `SELECT id, merchant_id FROM invoices
        WHERE status = 'Open' AND due_date < ? AND overdue_at IS NULL
        ORDER BY due_date LIMIT ?`,
      [now, DUE_BATCH],
    );
    for (const invoice of overdue) {
      const marked = await inPgTransaction(this.em, (em) =>
        this.invoices.markOverdue(em, invoice.merchant_id, invoice.id),
      );
      if (marked) result.invoicesOverdue++;
    }
    const expiredBefore = new Date(now.getTime() - this.config.INVOICE_EXPIRY_DAYS * 86_400_000);
    const expired = await pgQuery<{ id: string; merchant_id: string }[]>(
      this.em,
      `SELECT id, merchant_id FROM invoices WHERE status = 'Open' AND due_date < ?
        ORDER BY due_date LIMIT ?`,
      [expiredBefore, DUE_BATCH],
    );
    for (const invoice of expired) {
      try {
        await inPgTransaction(this.em, (em) =>
          this.invoices.transition(em, invoice.merchant_id, invoice.id, 'expire'),
        );
        result.invoicesExpired++;
      } catch {
        // paid or voided meanwhile: nothing to expire
      }
    }
  }
}

import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { AppConfig } from '../config/app-config';
import { Db } from '../database/db';
import { EventsService } from '../events/events.service';
import { InvoicePaymentsService } from '../invoices/invoice-payments.service';
import { InvoicesService } from '../invoices/invoices.service';
import { PaymentsService } from '../payments/payments.service';
import { ChainPort, SignatureEntry } from '../solana/chain.port';
import { MINT_SYMBOLS } from '../solana/mints';
import { SubscriptionsService } from '../subscriptions/subscriptions.service';
import { X402Service } from '../x402/x402.service';
import { ChainCursors, CursorRow, WalkBudget } from './chain-cursors';
import { ChainCursorsRepository } from './repositories/chain-cursors.repository';
import { ChargeAttemptsRepository } from './repositories/charge-attempts.repository';
import { InvoiceWatchRepository } from './repositories/invoice-watch.repository';

/** What one sweep of the watchers did. */
export interface WatchResult {
  /** Receiving token accounts scanned (one `getSignaturesForAddress` each when idle). */
  accountsScanned: number;
  signaturesScanned: number;
  /** Invoice payments recorded (new ledger lines). */
  paymentsRecorded: number;
  /** Money that paid no invoice, recorded as unattributed (new ledger lines). */
  paymentsUnattributed: number;
  /** Ledger lines seen finalized. */
  paymentsFinalized: number;
  invoicesPaid: number;
  invoicesOverdue: number;
  invoicesExpired: number;
}

/** Ledger lines finalized per sweep (their statuses are read 256 per RPC call). */
const FINALITY_BATCH = 1024;
/** Invoices moved per statement by the overdue and expiry sweep. */
const DUE_BATCH = 500;
/** Merchant accounts walked at once: one busy account never holds up the others. */
const SCAN_LANES = 4;
/** What one sweep reads of one merchant account at most; the rest waits for the next sweep. */
const SCAN_BUDGET: WalkBudget = { pages: 5, ms: 3_000 };

/**
 * Finds what arrives in merchants' receiving accounts and follows it to finality (DESIGN
 * sections 6, 8 and 10); what it pays is the invoices' rules (`InvoicePaymentsService`).
 *
 * **Scans by merchant account, not by invoice.** A merchant with Open invoices has each of its
 * receiving token accounts (one per mint: a payment in the wrong mint is found too) scanned
 * forward from a cursor (`ChainCursors`): a sweep with nothing new costs one RPC call per
 * account, however many invoices are open, and every new transaction is read once. A new
 * cursor starts at the slot of the merchant's earliest Open invoice (what came before cannot
 * pay it), and a long history is read in bounded steps that save their progress, a few accounts
 * at a time, so one merchant with a busy wallet delays nobody. Spam (transactions naming a
 * reference without paying the account) never reaches the account's history; a cursor scan
 * reads everything after it, so nothing can push a payment out of view.
 *
 * The service's own charges into a merchant's account are the charge engine's, recorded by
 * their signature: the scan leaves them out. Any other pull by the Subscriptions program (the
 * plan's owner or another puller, known by the program's transfer event) is recorded as a pull
 * by another, with the merchant's subscription it came from. Two instances never scan one account at once (a
 * lease), and a receipt seen twice is recorded once. No transaction is held open across an RPC
 * call.
 */
@Injectable()
export class InvoiceWatcherService {
  private readonly logger = new Logger(InvoiceWatcherService.name);

  constructor(
    private readonly db: Db,
    private readonly reads: InvoiceWatchRepository,
    private readonly cursorRows: ChainCursorsRepository,
    private readonly attempts: ChargeAttemptsRepository,
    private readonly chain: ChainPort,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly events: EventsService,
    private readonly payments: PaymentsService,
    private readonly invoices: InvoicesService,
    private readonly invoicePayments: InvoicePaymentsService,
    private readonly cursors: ChainCursors,
    private readonly subscriptions: SubscriptionsService,
    private readonly x402: X402Service,
  ) {}

  /** One sweep: payments, finality, then overdue and expired invoices. */
  async sweep(): Promise<WatchResult> {
    const result: WatchResult = {
      accountsScanned: 0,
      signaturesScanned: 0,
      paymentsRecorded: 0,
      paymentsUnattributed: 0,
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

  /**
   * Every merchant with Open invoices has its receiving accounts scanned, a few at a time (each
   * walk first tries again what earlier walks of that account could not read).
   */
  private async scanAccounts(result: WatchResult): Promise<void> {
    await this.addCursors();
    await this.cursors.walkAll('merchant_account', SCAN_LANES, async (cursor) => {
      try {
        const walked = await this.cursors.walk(
          cursor,
          (entries) => this.settle(cursor, entries, result),
          SCAN_BUDGET,
        );
        result.accountsScanned++;
        result.signaturesScanned += walked.signatures;
      } catch (error) {
        this.logger.warn(
          { err: error, account: cursor.address },
          'Scan of a merchant account failed; the next sweep retries from its cursor',
        );
      }
    });
  }

  /**
   * Cursors for every receiving account (one per mint) of merchants with Open invoices that lack
   * them, starting at the slot of the merchant's earliest Open invoice (the chain's current slot
   * when an invoice predates slots being recorded).
   */
  private async addCursors(): Promise<void> {
    const missing = await this.cursorRows.merchantsWithoutCursors(MINT_SYMBOLS.length);
    for (const merchant of missing) {
      const startSlot =
        merchant.unknown || merchant.start_slot === null
          ? await this.chain.currentSlot()
          : Number(merchant.start_slot);
      for (const mint of MINT_SYMBOLS) {
        await this.cursors.add({
          address: await this.chain.tokenAccount(merchant.wallet, mint),
          kind: 'merchant_account',
          merchantId: merchant.merchant_id,
          mint,
          startSlot,
        });
      }
    }
  }

  /**
   * Merchant-account transactions, oldest first: what each brought the account goes to the
   * invoices' rules, except the service's own charges and the x402 payments it settled. @returns those it could not settle: a
   * transaction the RPC lists but does not serve, or one whose recording failed (the walk parks
   * them and goes on; later sweeps try them again, and recording is idempotent).
   */
  private async settle(
    cursor: CursorRow,
    entries: SignatureEntry[],
    result: WatchResult,
  ): Promise<SignatureEntry[]> {
    const reads = await this.chain.receiptsInto(cursor.address, entries);
    const unread = entries.filter((_, i) => !reads[i].served);
    const receipts = reads.flatMap((read) => (read.served && read.receipt ? [read.receipt] : []));
    if (receipts.length === 0) return unread;
    const signatures = receipts.map((r) => r.signature);
    // The service's own charges, and the x402 payments it settles (each recorded once, as a
    // `per_request` line, by the x402 module: written before it is sent, so never missed here).
    const [charges, settlements] = await Promise.all([
      this.attempts.chargeSignatures(signatures),
      this.x402.settlementSignatures(signatures),
    ]);
    for (const receipt of receipts) {
      if (charges.has(receipt.signature) || settlements.has(receipt.signature)) continue;
      try {
        const pulledFrom = await this.subscriptions.atOnchainAddresses(
          cursor.merchant_id,
          receipt.pulls.map((p) => p.subscription),
        );
        const outcome = await this.invoicePayments.record(
          cursor.merchant_id,
          cursor.mint,
          receipt,
          pulledFrom,
        );
        result.paymentsRecorded += outcome.lines - outcome.unattributed;
        result.paymentsUnattributed += outcome.unattributed;
        result.invoicesPaid += outcome.paid;
      } catch (error) {
        this.logger.warn(
          { err: error, account: cursor.address, signature: receipt.signature },
          'Could not record what a transaction brought; it is parked and tried again',
        );
        unread.push(entries.find((e) => e.signature === receipt.signature)!);
      }
    }
    return unread;
  }

  /** Ledger lines seen at `confirmed` are followed until `finalized` (any kind). */
  private async finalize(result: WatchResult): Promise<void> {
    const pending = await this.reads.confirmedPayments(FINALITY_BATCH);
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
      const paid = await this.db.transaction(async (tx) => {
        const payment = await this.payments.finalizeIn(tx, line.id);
        if (!payment) return null;
        await this.events.record(tx, line.merchant_id, 'payment.confirmed', payment);
        result.paymentsFinalized++;
        return this.invoicePayments.payIfCovered(tx, payment);
      });
      if (paid) result.invoicesPaid++;
    }
  }

  /** `invoice.overdue` once past `dueDate`; `Expired` past `dueDate + INVOICE_EXPIRY_DAYS`. */
  private async overdueAndExpired(result: WatchResult): Promise<void> {
    const now = this.clock.now();
    const overdue = await this.reads.newlyOverdue(now, DUE_BATCH);
    for (const invoice of overdue) {
      const marked = await this.db.transaction((tx) =>
        this.invoices.markOverdue(tx, invoice.merchant_id, invoice.id),
      );
      if (marked) result.invoicesOverdue++;
    }
    const expiredBefore = new Date(now.getTime() - this.config.INVOICE_EXPIRY_DAYS * 86_400_000);
    const expired = await this.reads.openDueBefore(expiredBefore, DUE_BATCH);
    for (const invoice of expired) {
      try {
        await this.db.transaction((tx) =>
          this.invoices.transition(tx, invoice.merchant_id, invoice.id, 'expire'),
        );
        result.invoicesExpired++;
      } catch {
        // paid or voided meanwhile: nothing to expire
      }
    }
  }
}

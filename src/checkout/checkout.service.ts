import { Injectable } from '@nestjs/common';
import { formatAmount } from '../common/money';
import { ConflictError, NotFoundError, ValidationError } from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-codes';
import { AppConfig } from '../config/app-config';
import { CannotMoveYetError, SchemeMovesService } from '../billing/scheme-moves.service';
import { SubscribeService } from '../billing/subscribe.service';
import { meterOf } from '../plans/plan.mapper';
import { PlansService } from '../plans/plans.service';
import {
  type CheckoutInvoiceRow,
  InvoiceNotOpenError,
  InvoicesService,
} from '../invoices/invoices.service';
import { invoiceNumber, toInvoiceResponse } from '../invoices/invoice.mapper';
import { ChainUnavailableError } from '../solana/blockhash-cache';
import {
  ChainPort,
  PlanTermsMismatchError,
  SubscribedOnChainError,
  TransactionTooLargeError,
} from '../solana/chain.port';
import type { MintSymbol } from '../solana/mints';
import { planSubscribeReference } from '../solana/references';
import { everyText } from './every-text';
import { SubscriptionsService } from '../subscriptions/subscriptions.service';
import {
  CheckoutInvoiceResponse,
  CheckoutPlanResponse,
  CheckoutSubscriptionResponse,
  FirstPaymentState,
  TransactionRequestMetaResponse,
  PlanTransactionRequestResponse,
  TransactionRequestResponse,
} from './dto/checkout.response';

/**
 * The public checkout API (DESIGN section 9): what a customer sees of an invoice or a plan, and
 * the Solana Pay transaction requests their wallet calls. No API key; nothing beyond what the
 * payer needs (no customer data, no internal memo). Rate limited per client address by the
 * global guard.
 */
@Injectable()
export class CheckoutService {
  constructor(
    private readonly invoices: InvoicesService,
    private readonly plans: PlansService,
    private readonly chain: ChainPort,
    private readonly config: AppConfig,
    private readonly subscribes: SubscribeService,
    private readonly subscriptions: SubscriptionsService,
    private readonly moves: SchemeMovesService,
  ) {}

  get icon(): string {
    return `${this.config.publicBaseUrl}/checkout/icon.svg`;
  }

  async invoice(id: string): Promise<CheckoutInvoiceResponse> {
    const row = await this.invoiceRow(id);
    const invoice = toInvoiceResponse(row, this.config.publicBaseUrl);
    const toPay = await this.toPay(row.mint, BigInt(row.amount_due));
    return {
      id: invoice.id,
      number: invoice.number,
      status: invoice.status,
      merchantName: row.merchant_name,
      merchantWallet: row.merchant_wallet,
      mint: invoice.mint,
      lineItems: invoice.lineItems,
      subtotal: invoice.subtotal,
      taxBps: invoice.taxBps,
      tax: invoice.tax,
      total: invoice.total,
      amountPaid: invoice.amountPaid,
      amountCredited: invoice.amountCredited,
      amountDue: invoice.amountDue,
      amountToPay: formatAmount(toPay),
      reference: invoice.onchainId,
      dueDate: invoice.dueDate,
      paidAt: invoice.paidAt,
      issuedAt: invoice.createdAt,
      billedTo: { label: row.customer_label, walletAddress: row.customer_wallet },
    };
  }

  async invoiceMeta(id: string): Promise<TransactionRequestMetaResponse> {
    return { label: (await this.invoiceRow(id)).merchant_name, icon: this.icon };
  }

  /**
   * The payment of what is still due, by `account`: a `transferChecked` to the merchant's
   * token account carrying the invoice's reference (Solana Pay's layout).
   * @throws InvoiceNotOpenError for a Paid, Cancelled or Expired invoice, or one already paid in
   *   full and waiting for finality.
   */
  async invoiceTransaction(id: string, account: string): Promise<TransactionRequestResponse> {
    const row = await this.invoiceRow(id);
    if (row.status !== 'Open') throw new InvoiceNotOpenError(row.status);
    const due = BigInt(row.amount_due);
    if (due === 0n) throw new InvoiceNotOpenError('paid in full, waiting for finality');
    // The transfer fee (if the mint has one) comes on top: what is due arrives whole.
    const amount = await this.chain.grossAmount(row.mint, due).catch(() => {
      throw new ChainUnavailableError();
    });
    const tx = await this.chain.buildInvoicePayment({
      payer: account,
      merchantWallet: row.merchant_wallet,
      mint: row.mint,
      amount,
      reference: row.onchain_id,
    });
    const fee =
      amount > due ? ` (${formatAmount(due)} + ${formatAmount(amount - due)} network fee)` : '';
    return {
      transaction: tx.transaction,
      message: `Pay ${invoiceNumber(row.number)} to ${row.merchant_name}: ${formatAmount(amount)} ${row.mint}${fee}`,
    };
  }

  /**
   * What a payer sends for `due` to arrive (the mint's transfer fee on top). The page renders
   * with the RPC down: then the amount due itself (never more than asked; the invoice says what
   * is still due after).
   */
  private toPay(mint: MintSymbol, due: bigint): Promise<bigint> {
    if (due === 0n) return Promise.resolve(0n);
    return this.chain.grossAmount(mint, due).catch(() => due);
  }

  async plan(id: string): Promise<CheckoutPlanResponse> {
    const plan = await this.subscribes.plan(id);
    const description = await this.plans.description(id);
    const amount = BigInt(plan.amount);
    const approval = this.chain.approval;
    // What each period pulls: the price, plus the mint's transfer fee under a shared approval
    // (the price arrives whole). The page renders with the RPC down: the price then.
    const pull = await this.chain.pullAmount(plan.mint, amount).catch(() => amount);
    return {
      id: plan.id,
      label: plan.label,
      description,
      merchantName: plan.merchant_name,
      mint: plan.mint,
      amount: formatAmount(amount),
      fixedAmount: formatAmount(amount - BigInt(plan.meter_cap ?? 0)),
      meter: meterOf(plan),
      intervalSeconds: plan.interval_seconds,
      active: plan.active,
      amountPerPeriod: formatAmount(pull),
      authorizedAmount: approval ? formatAmount(approval.share(pull)) : null,
      authorizedPeriods: approval ? approval.periods : null,
    };
  }

  async planMeta(id: string): Promise<TransactionRequestMetaResponse> {
    return { label: (await this.subscribes.plan(id)).label, icon: this.icon };
  }

  /**
   * The subscribe for `account`: under the token-delegate scheme an approval of the service key
   * for this plan's share plus what the account's other live subscriptions in the mint still
   * need (one delegate per token account). The plan's reference rides on it, so the reconciling
   * watcher finds it even if the page never confirms.
   * @throws ValidationError (inactive plan); ConflictError (already subscribed, or under the
   *   program scheme the plan is not registered on-chain yet or differs).
   */
  async planTransaction(id: string, account: string): Promise<PlanTransactionRequestResponse> {
    const plan = await this.subscribes.plan(id);
    if (!plan.active) {
      throw new ValidationError('Plan is not active: it accepts no new subscribers', [
        { field: 'planId', message: 'is not active' },
      ]);
    }
    if (await this.subscriptions.hasLiveForWallet(id, account))
      throw new ConflictError('This wallet already has a live subscription to the plan');
    const price = BigInt(plan.amount);
    const amount = await this.chain.pullAmount(plan.mint, price).catch(() => {
      throw new ChainUnavailableError();
    });
    const subscribe = {
      merchantWallet: plan.merchant_wallet,
      planId: plan.id,
      amount,
      periodHours: plan.interval_seconds / 3600,
      reference: planSubscribeReference(plan.id),
    };
    // Under the program, the wallet's token-delegate subscriptions in the mint (any merchant's)
    // ride along: the program's authority takes their approval's place as the account's delegate.
    const carried = await this.moves.carried(account, plan.mint, 1);
    const tx = carried.plans.length
      ? await this.chain
          .buildMove({
            subscriber: account,
            mint: plan.mint,
            plans: [subscribe, ...carried.plans],
            keepApproved: carried.keepApproved,
          })
          .catch((error: unknown) => {
            // Another merchant's plan, or more than one transaction holds: said without naming them.
            const theirs = error instanceof PlanTermsMismatchError && error.planId !== plan.id;
            const stuck = error instanceof SubscribedOnChainError && error.planId !== plan.id;
            if (theirs || stuck || error instanceof TransactionTooLargeError) {
              throw new CannotMoveYetError(plan.mint);
            }
            throw error;
          })
      : await this.chain.buildSubscribe({
          ...subscribe,
          subscriber: account,
          mint: plan.mint,
          otherSubscriptionsAllowance: await this.subscribes.reserved(account, plan.mint, plan.id),
        });
    if (tx.step === 'authority') {
      return {
        step: tx.step,
        transaction: tx.transaction,
        message: `Step 1 of 2: allow subscriptions in ${plan.mint} from this wallet (the Subscriptions program's authority on your ${plan.mint} account). Then subscribe to ${plan.label}.`,
      };
    }
    // The reconciling watcher follows the plan's subscribes from before this one.
    await this.subscribes.watch(plan, tx.slot);
    return {
      step: tx.step,
      transaction: tx.transaction,
      message: `Subscribe to ${plan.label} (${plan.merchant_name}): ${formatAmount(amount)} ${plan.mint} every ${everyText(plan.interval_seconds)}${amount > price ? ` (${formatAmount(price)} + ${formatAmount(amount - price)} network fee)` : ''}${carriedText(carried.plans.length, plan.mint)}`,
    };
  }

  /**
   * Confirms a signed subscribe (see `SubscribeService.confirm`) and answers with what the page
   * shows: whether it took and how the first payment went.
   */
  async confirm(planId: string, signature: string): Promise<CheckoutSubscriptionResponse> {
    const confirmed = await this.subscribes.confirm(planId, signature);
    const row = await this.subscriptions.chargeState(confirmed.subscriptionId);
    const live = row.status === 'Active' || row.status === 'PastDue';
    const firstPayment: FirstPaymentState | null = !live
      ? null
      : row.periods_charged > 0
        ? 'paid'
        : row.status === 'PastDue' && row.failure_reason
          ? 'failed'
          : 'pending';
    return {
      planId,
      created: confirmed.created,
      subscribed: live,
      firstPayment,
      failureReason: firstPayment === 'failed' ? row.failure_reason : null,
    };
  }

  private async invoiceRow(id: string): Promise<CheckoutInvoiceRow> {
    const row = await this.invoices.findForCheckout(id);
    if (!row) throw new NotFoundError('Invoice', ErrorCode.INVOICE_NOT_FOUND);
    return row;
  }
}

/** What a subscribe that carries the wallet's earlier subscriptions in the mint says of them. */
function carriedText(count: number, mint: MintSymbol): string {
  if (count === 0) return '';
  const them =
    count === 1
      ? `your other ${mint} subscription moves`
      : `your ${count} other ${mint} subscriptions move`;
  return `; ${them} to the Subscriptions program with it`;
}

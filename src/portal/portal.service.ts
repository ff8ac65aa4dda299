import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import {
  ConflictError,
  NotFoundError,
  ServiceUnavailableError,
  ValidationError,
} from '../common/errors/domain-error';
import { formatAmount } from '../common/money';
import { AppConfig } from '../config/app-config';
import { Db } from '../database/db';
import { ChargeRunService } from '../billing/charge-run.service';
import { SchemeMovesService } from '../billing/scheme-moves.service';
import { invalidSignature, SubscribeService } from '../billing/subscribe.service';
import { invoiceCheckoutUrl, invoiceNumber } from '../invoices/invoice.mapper';
import { ChainPort, SharedApproval } from '../solana/chain.port';
import type { MintSymbol } from '../solana/mints';
import { SubscriptionsService } from '../subscriptions/subscriptions.service';
import type { SignatureUse } from '../subscriptions/entities/subscription-signature.entity';
import type { PortalGrant } from '../auth/portal-token';
import { PortalMoneyBack } from './portal-money-back';
import { PortalSubscriptionRow, PortalSubscriptions } from './portal-subscriptions';
import { CustomersService } from '../customers/customers.service';
import { InvoicesService } from '../invoices/invoices.service';
import {
  PortalInvoiceResponse,
  PortalResponse,
  PortalSubscriptionResponse,
} from './dto/portal.response';
import {
  PlanTransactionRequestResponse,
  TransactionRequestResponse,
} from '../checkout/dto/checkout.response';

/** How many times settle tries to claim its charge (100 ms apart) while the row is locked. */
const SETTLE_CLAIM_TRIES = 20;

/**
 * The customer portal (DESIGN section 9, Stripe's customer portal for wallets): what one
 * customer has with one merchant, and what they may do about it themselves: pay an open invoice
 * (at its checkout), settle a subscription a failed charge paused, re-authorise, and cancel by
 * revoking its authorisation. Every subscription is looked up within the session's merchant and
 * customer: anything else is "not found".
 */
@Injectable()
export class PortalService {
  private readonly logger = new Logger(PortalService.name);

  constructor(
    private readonly db: Db,
    private readonly customers: CustomersService,
    private readonly invoices: InvoicesService,
    private readonly chain: ChainPort,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly subscriptions: SubscriptionsService,
    private readonly subscribes: SubscribeService,
    private readonly charges: ChargeRunService,
    private readonly subscriptionsView: PortalSubscriptions,
    private readonly moves: SchemeMovesService,
    private readonly moneyBack: PortalMoneyBack,
  ) {}

  async view(grant: PortalGrant): Promise<PortalResponse> {
    const customer = await this.customers.findWithMerchantName(grant.merchantId, grant.customerId);
    if (!customer) throw new NotFoundError('Customer');
    const subscriptions = await this.subscriptionsView.rows(grant);
    const invoices = await this.invoices.listForPortal(grant.merchantId, grant.customerId);
    const base = this.config.publicBaseUrl;
    return {
      merchantName: customer.merchant_name,
      walletAddress: customer.wallet_address,
      expiresAt: grant.expiresAt.toISOString(),
      subscriptions: subscriptions.map((row) => this.subscriptionsView.view(row)),
      invoices: invoices.map((row): PortalInvoiceResponse => ({
        id: row.id,
        number: invoiceNumber(row.number),
        status: row.status,
        mint: row.mint,
        total: formatAmount(BigInt(row.total)),
        amountPaid: formatAmount(BigInt(row.amount_paid)),
        amountDue: formatAmount(BigInt(row.amount_due)),
        dueDate: row.due_date,
        checkoutUrl: invoiceCheckoutUrl(base, row.id),
        pdfUrl: `${invoiceCheckoutUrl(base, row.id)}/pdf`,
        receiptUrl:
          row.status === 'Paid' ? `${invoiceCheckoutUrl(base, row.id)}/receipt/pdf` : null,
      })),
      ...(await this.moneyBack.view(grant)),
    };
  }

  /**
   * Settles a subscription a failed charge paused (not one the merchant paused): one charge for
   * the current period, now. Refused before anything moves when the wallet cannot cover it.
   * The resume (`subscription.resumed`) and the charge are the merchant's resume and the
   * engine's charge; a charge that fails again leaves it `PastDue`, as a run would.
   * @throws NotFoundError; ConflictError (not settleable, or the wallet cannot cover it yet).
   */
  async settle(grant: PortalGrant, id: string): Promise<PortalSubscriptionResponse> {
    const row = await this.current(grant, id);
    if (!this.subscriptionsView.settleable(row)) {
      throw new ConflictError(
        row.status === 'PastDue' && row.paused
          ? 'The merchant paused this subscription; only the merchant can resume it'
          : `Only a subscription paused by a failed payment can be settled (it is ${row.status})`,
      );
    }
    const amount = this.subscriptionsView.pullOf(row);
    const state = await this.readAuthorization(row.wallet_address, row.mint);
    if (state.frozen) {
      throw new ConflictError('Your token account is frozen by the stablecoin issuer');
    }
    if (state.balance < amount) {
      throw new ConflictError(
        `Your wallet holds ${formatAmount(state.balance)} ${row.mint}; the payment is ` +
          `${formatAmount(amount)} ${row.mint}. Top up, then settle again`,
      );
    }
    if (this.chain.approvalOf(row.scheme) && !this.covered(row, state)) {
      throw new ConflictError(
        'Your authorisation no longer covers this payment: re-authorise first',
      );
    }
    try {
      await this.db.transaction((tx) =>
        this.subscriptions.transition(tx, grant.merchantId, id, 'resume'),
      );
    } catch (error) {
      // Another settle (a double click) resumed it first: this one charges nothing.
      if (!(error instanceof ValidationError)) throw error;
      throw new ConflictError('This subscription is being settled already');
    }
    // The claim skips a row another request holds locked for a moment (a concurrent settle
    // being refused): try again briefly rather than leave the charge to the next run.
    for (let tries = 0; tries < SETTLE_CLAIM_TRIES; tries++) {
      if ((await this.charges.chargeNow(id)).attempts > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return this.subscriptionsView.view(await this.subscriptionsView.row(grant, id));
  }

  /**
   * The re-authorisation (token-delegate scheme) for the subscription's wallet to sign: the
   * plan's subscribe again, approving a fresh share for this subscription plus what the
   * wallet's other live subscriptions in the mint still need. Where new subscriptions are taken
   * under the Subscriptions program, it is the move there instead (`SchemeMovesService`), in
   * the program's steps (`step`).
   * @throws NotFoundError; ConflictError (not live, revoked, or the program scheme);
   *   ValidationError (another wallet).
   */
  async reauthorizeTransaction(
    grant: PortalGrant,
    id: string,
    account: string,
  ): Promise<PlanTransactionRequestResponse> {
    const row = await this.actionable(grant, id, account);
    const move = this.moves.movable(row.scheme) ? await this.moveTransaction(row) : null;
    if (move) return move;
    const approval = this.needsReauthorizing(row);
    const amount = this.subscriptionsView.pullOf(row);
    const tx = await this.chain.buildSubscribe({
      scheme: row.scheme,
      subscriber: account,
      merchantWallet: row.merchant_wallet,
      planId: row.plan_id,
      mint: row.mint,
      amount,
      periodHours: row.interval_seconds / 3600,
      otherSubscriptionsAllowance: await this.subscribes.reserved(account, row.mint, row.plan_id),
    });
    return {
      transaction: tx.transaction,
      message:
        `Re-authorise ${row.label}: ${approval.periods} more payments of ${formatAmount(amount)} ${row.mint}` +
        (this.moves.movable(row.scheme)
          ? ' (it cannot move to the Subscriptions program yet)'
          : ''),
      step: 'subscribe',
    };
  }

  /**
   * The move to the Subscriptions program, as the wallet signs it (`reauthorizeTransaction`);
   * null when it cannot be built now (a re-approval is offered instead).
   */
  private async moveTransaction(
    row: PortalSubscriptionRow,
  ): Promise<PlanTransactionRequestResponse | null> {
    const tx = await this.moves.transaction(this.moveRequest(row));
    if (!tx) return null;
    const what =
      tx.plans === 1 ? row.label : `${row.label} and your other ${row.mint} subscriptions`;
    return {
      transaction: tx.transaction,
      message:
        tx.step === 'authority'
          ? `Step 1 of 2: allow subscriptions in ${row.mint} under the Subscriptions program; ` +
            'your current payments go on as before'
          : `Move ${what} to the Subscriptions program: each payment bounded on-chain by its plan`,
      step: tx.step,
    };
  }

  /**
   * After the wallet sent the re-authorisation: verified on-chain (a successful transaction
   * holding this subscription's wallet's signed approval of the service key, with the plan's
   * subscribe memo, and the approval now covers a fresh share on top of the others' needs, judged
   * under the wallet's lock), the subscription's share starts again from what it has been
   * charged. The signature is used once: the same confirm again answers as before; a signature
   * used for anything else is refused.
   * @throws ValidationError (not that transaction, or not confirmed yet); NotFoundError;
   *   ConflictError (the subscription is no longer live).
   */
  async confirmReauthorize(
    grant: PortalGrant,
    id: string,
    signature: string,
  ): Promise<PortalSubscriptionResponse> {
    const row = await this.subscriptionsView.row(grant, id);
    const used = await this.subscriptions.signatureUse(this.db, signature);
    const again = used?.subscriptionId === id && ['move', 'reauthorize'].includes(used.use);
    const request = this.moveRequest(row);
    if (
      again ||
      (!used && this.moves.movable(row.scheme) && (await this.moves.confirm(request, signature))) ||
      // Its move, taken up another way first (the charge run, a sibling's confirm).
      ((!used || used.use === 'move') && (await this.moves.movedBy(request, signature)))
    ) {
      return this.subscriptionsView.view(await this.subscriptionsView.row(grant, id));
    }
    // Not a move: a re-approval (offered where the move cannot be built yet).
    const approval = this.needsReauthorizing(row);
    if (await this.usedFor(signature, id, 'reauthorize')) {
      return this.subscriptionsView.view(await this.subscriptionsView.row(grant, id));
    }
    const tx = await this.subscribes.readConfirmed(signature);
    const signer = await this.chain.authorizationSigner(tx, this.planRef(row));
    if (signer !== row.wallet_address) {
      throw invalidSignature('is not an authorisation of this subscription signed by its wallet');
    }
    const share = approval.share(this.subscriptionsView.pullOf(row));
    const state = await this.readAuthorization(row.wallet_address, row.mint);
    const changed = await this.db.transaction(async (tx) => {
      const others = await this.subscribes.lockWalletReservations(
        tx,
        row.wallet_address,
        row.mint,
        row.plan_id,
      );
      if (!state.delegatedToService || state.delegatedAmount < share + others) {
        throw invalidSignature('left an approval that does not cover this subscription');
      }
      return this.subscriptions.reauthorize(tx, grant, id, share, signature);
    });
    if (!changed) throw new ConflictError('This subscription is no longer live');
    return this.subscriptionsView.view(await this.subscriptionsView.row(grant, id));
  }

  /**
   * The cancel for the subscription's wallet to sign: the revoke of this subscription's
   * authorisation (`ChainPort.buildRevoke`; under the token-delegate scheme the shared approval
   * is reset to what the wallet's other subscriptions still need).
   */
  async cancelTransaction(
    grant: PortalGrant,
    id: string,
    account: string,
  ): Promise<TransactionRequestResponse> {
    await this.current(grant, id); // a move that landed first: cancelled under the program
    const row = await this.actionable(grant, id, account);
    const tx = await this.chain.buildRevoke({
      scheme: row.scheme,
      subscriber: account,
      merchantWallet: row.merchant_wallet,
      planId: row.plan_id,
      mint: row.mint,
      remainingAllowance: await this.subscribes.reserved(account, row.mint, row.plan_id),
    });
    return { transaction: tx.transaction, message: `Cancel ${row.label}: no further payments` };
  }

  /**
   * After the wallet sent the revoke, seen on-chain (a successful transaction holding this
   * subscription's wallet's signed revoke of it): the subscription is never charged again and
   * ends per DESIGN section 8, `Completed` (`authorization_gone`) at the end of the period paid
   * for: at once when it is `PastDue`, else when `currentPeriodEnd` passes (the charge run).
   * Idempotent per subscription; the signature is used once.
   * @throws ValidationError (not this subscription's revoke, or not confirmed yet).
   */
  async confirmCancel(
    grant: PortalGrant,
    id: string,
    signature: string,
  ): Promise<PortalSubscriptionResponse> {
    const row = await this.subscriptionsView.row(grant, id);
    if (await this.usedFor(signature, id, 'cancel')) return this.subscriptionsView.view(row);
    if (row.revoked) return this.subscriptionsView.view(row);
    const tx = await this.subscribes.readConfirmed(signature);
    const revoked = await this.chain.isRevocationBy(tx, {
      ...this.planRef(row),
      subscriber: row.wallet_address,
    });
    if (!revoked) {
      throw invalidSignature('is not the revoke of this subscription signed by its wallet');
    }
    const withdrawn = await this.chain.authorizationWithdrawn({
      ...this.planRef(row),
      subscriber: row.wallet_address,
    });
    if (!withdrawn) throw invalidSignature('left the subscription authorised on-chain');
    await this.db.transaction((tx) => this.subscriptions.revoke(tx, grant, id, signature));
    return this.subscriptionsView.view(await this.subscriptionsView.row(grant, id));
  }

  /**
   * Whether `signature` already did `use` to subscription `id` (a repeated confirm).
   * @throws ValidationError when it was used for anything else: a signature is used once.
   */
  private async usedFor(signature: string, id: string, use: SignatureUse): Promise<boolean> {
    const used = await this.subscriptions.signatureUse(this.db, signature);
    if (!used) return false;
    if (used.use === use && used.subscriptionId === id) return true;
    throw invalidSignature('was already used to change a subscription; a signature is used once');
  }

  private planRef(row: PortalSubscriptionRow) {
    return {
      scheme: row.scheme,
      merchantWallet: row.merchant_wallet,
      planId: row.plan_id,
      mint: row.mint,
    };
  }

  /** The subscription, after a move of its wallet's that landed unconfirmed is taken up. */
  private async current(grant: PortalGrant, id: string): Promise<PortalSubscriptionRow> {
    const row = await this.subscriptionsView.row(grant, id);
    if (!this.moves.movable(row.scheme)) return row;
    await this.moves.adopt(row.wallet_address, row.mint);
    return this.subscriptionsView.row(grant, id);
  }

  private moveRequest(row: PortalSubscriptionRow) {
    return { ...this.planRef(row), id: row.id, wallet: row.wallet_address };
  }

  /** Whether the approval covers this subscription's next charge after the older ones' needs. */
  private covered(
    row: PortalSubscriptionRow,
    state: { delegatedToService: boolean; delegatedAmount: bigint },
  ): boolean {
    const left = BigInt(row.authorized_amount) - BigInt(row.charged_amount);
    return (
      state.delegatedToService &&
      state.delegatedAmount >= this.subscriptionsView.pullOf(row) &&
      left >= this.subscriptionsView.pullOf(row)
    );
  }

  /** A live subscription of the session's customer, acted on by its own wallet. */
  private async actionable(
    grant: PortalGrant,
    id: string,
    account: string,
  ): Promise<PortalSubscriptionRow> {
    const row = await this.subscriptionsView.row(grant, id);
    if (row.revoked) {
      throw new ConflictError('This subscription is cancelled: no further payments');
    }
    if (row.status !== 'Active' && row.status !== 'PastDue') {
      throw new ConflictError(`This subscription has ended (it is ${row.status})`);
    }
    if (account !== row.wallet_address) {
      throw new ValidationError(
        `account: connect the wallet that holds this subscription (${row.wallet_address})`,
        [{ field: 'account', message: 'is not the subscription wallet' }],
      );
    }
    return row;
  }

  /**
   * The shared approval a re-authorisation renews. @throws ConflictError where the chain keeps
   * each subscription's terms (the Subscriptions program): nothing runs out to renew.
   */
  private needsReauthorizing(row: PortalSubscriptionRow): SharedApproval {
    const approval = this.chain.approvalOf(row.scheme);
    if (!approval) {
      throw new ConflictError(
        'Subscriptions under the Subscriptions program need no re-authorising',
      );
    }
    return approval;
  }

  private async readAuthorization(wallet: string, mint: MintSymbol) {
    return this.chain.readAuthorization(wallet, mint).catch((error: unknown) => {
      this.logger.warn({ err: error }, 'Could not read a token account');
      throw new ServiceUnavailableError('The chain is not reachable; retry shortly');
    });
  }
}

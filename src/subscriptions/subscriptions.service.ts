import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Clock } from '../common/clock';
import { NotFoundError, ValidationError } from '../common/errors/domain-error';
import { resolvePage } from '../common/pagination';
import { CustomersService } from '../customers/customers.service';
import { Db } from '../database/db';
import type { SubscriptionScheme } from '../config/app-config';
import type { SqlTx } from '../database/pg-transaction';
import { EventsService, NewEvent } from '../events/events.service';
import type { MintSymbol } from '../solana/mints';
import { ListSubscriptionsQueryDto } from './dto/subscription.dto';
import { SubscriptionResponse } from './dto/subscription.response';
import type { SignatureUse } from './entities/subscription-signature.entity';
import { SUBSCRIPTION_TRANSITIONS, SubscriptionAction } from './subscription-status';
import { subscriptionListJson, toSubscriptionResponse } from './subscription.mapper';
import {
  type DelegatedSubscriptionRow,
  SubscriptionMovesRepository,
} from './subscription-moves.repository';
import { SubscriptionSignaturesRepository } from './subscription-signatures.repository';
import {
  type ChargeStateRow,
  type CustomerSubscriptionRow,
  type SubscriptionOwner,
  type SubscriptionRow,
  SubscriptionsRepository,
} from './subscriptions.repository';

export type { ChargeStateRow, CustomerSubscriptionRow, SubscriptionOwner };

/** What the billing engine knows when a customer's subscribe transaction is confirmed. */
export interface NewSubscription {
  planId: string;
  /** The subscriber's wallet: the customer is created (or found) by it. */
  walletAddress: string;
  /** Where the authorisation lives on-chain (`ChainPort.subscriptionAddress`). */
  onchainAddress: string | null;
  /** The confirmed subscribe transaction (a signature creates at most one subscription). */
  subscribeSignature?: string | null;
  /** The scheme the customer authorised it under. */
  scheme: SubscriptionScheme;
  /** Token-delegate scheme: this subscription's share of the approval, in base units. */
  authorizedAmount?: bigint;
}

/** A subscription of the merchant found by its on-chain address. */
export interface OnchainSubscription {
  id: string;
  customerId: string;
}

/** Extra values some moves set: the failure of a charge. */
export interface TransitionDetails {
  failureReason?: string;
}

/**
 * Subscriptions of a merchant. Created by the billing engine when a customer's authorisation is
 * confirmed; moved only by `transition` (the table in subscription-status.ts), which validates
 * under the row's lock, stamps, and records the event in the same transaction.
 *
 * Row locks (docs/subscriptions.md): every move is one `UPDATE … WHERE status IN (allowed)`, so
 * concurrent moves of one subscription serialize on its row and each sees the other's result.
 * The charge run takes the same row lock before it sends a charge, so a pause or cancel that
 * commits first stops the charge, and one that commits after finds it already sent.
 */
@Injectable()
export class SubscriptionsService {
  constructor(
    private readonly db: Db,
    private readonly repository: SubscriptionsRepository,
    private readonly signatures: SubscriptionSignaturesRepository,
    private readonly moves: SubscriptionMovesRepository,
    private readonly clock: Clock,
    private readonly customers: CustomersService,
    private readonly events: EventsService,
  ) {}

  /**
   * Creates a subscription `Active`, its first charge due at once (DESIGN section 8), in the
   * caller's transaction: the customer upserted by wallet, `subscription.created` recorded. The
   * plan is read under a share lock, so a plan deactivated concurrently either lets this one in
   * first or refuses it.
   * @throws NotFoundError for another merchant's or an unknown plan; ValidationError for an
   *   inactive plan; a unique violation (409) when the customer already has a live subscription
   *   to the plan.
   */
  async create(
    tx: SqlTx,
    merchantId: string,
    input: NewSubscription,
  ): Promise<SubscriptionResponse> {
    const em = tx;
    const plan = await this.repository.lockPlanForSubscribe(em, merchantId, input.planId);
    if (!plan) throw new NotFoundError('Plan');
    if (!plan.active) {
      throw new ValidationError('Plan is not active: it accepts no new subscribers', [
        { field: 'planId', message: 'is not active' },
      ]);
    }
    const { customer } = await this.customers.upsertIn(em, merchantId, {
      walletAddress: input.walletAddress,
    });
    const id = randomUUID();
    const now = this.clock.now();
    await this.repository.insert(em, {
      id,
      merchantId,
      planId: input.planId,
      customerId: customer.id,
      onchainAddress: input.onchainAddress,
      authorizedAmount: input.authorizedAmount ?? 0n,
      scheme: input.scheme,
      at: now,
    });
    if (input.subscribeSignature) {
      await this.useSignature(em, id, input.subscribeSignature, 'subscribe', { mustBeNew: true });
    }
    const subscription = toSubscriptionResponse(await this.findRow(em, merchantId, id));
    await this.events.record(em, merchantId, 'subscription.created', subscription);
    return subscription;
  }

  /**
   * Newest first with plan and customer snapshots; `status` filters. Read through a cursor and
   * handed to `onBatch` as JSON a batch of rows at a time (`Db.forEachBatch`): memory stays
   * at two batches. `limit` and `startingAfter` ask for a page of it (D6).
   * @throws ValidationError when `startingAfter` names no subscription of the merchant.
   */
  async listJson(
    merchantId: string,
    query: ListSubscriptionsQueryDto,
    onBatch: (json: string) => Promise<boolean>,
  ): Promise<void> {
    const page = await resolvePage(query, 'subscription', (id) =>
      this.repository.createdAt(merchantId, id),
    );
    await this.repository.forEachListBatch(merchantId, query.status, page, (rows) =>
      onBatch(subscriptionListJson(rows)),
    );
  }

  /** @throws NotFoundError when absent or another merchant's. */
  async get(merchantId: string, id: string): Promise<SubscriptionResponse> {
    return toSubscriptionResponse(await this.findRow(this.db, merchantId, id));
  }

  /** A customer's subscriptions, newest first (customer detail, D7). */
  async listForCustomer(
    merchantId: string,
    customerId: string,
    ex?: SqlTx,
  ): Promise<SubscriptionResponse[]> {
    const rows = await this.repository.listForCustomer(ex ?? this.db, merchantId, customerId);
    return rows.map(toSubscriptionResponse);
  }

  /** The merchant's pause, resume and cancel: one transition each, in its own transaction. */
  act(merchantId: string, id: string, action: 'pause' | 'resume' | 'cancel') {
    return this.db.transaction((tx) => this.transition(tx, merchantId, id, action));
  }

  /**
   * Applies an action of the transition table inside the caller's transaction. The UPDATE
   * checks the current status itself, under the row's lock, and stamps what the move changes:
   * `cancelledAt` (cancel), `pausedAt` (pause; cleared by resume), `failureReason` (a failed
   * charge; cleared by resume), and on resume the next charge: at the end of the period already
   * paid for, or at the next run when it has passed (paused periods are not billed back; the
   * charge re-anchors the period). Records the move's event with the previous status.
   * @throws NotFoundError; ValidationError (the move is not allowed from the current status).
   */
  async transition(
    em: SqlTx,
    merchantId: string,
    id: string,
    action: SubscriptionAction,
    details: TransitionDetails = {},
  ): Promise<SubscriptionResponse> {
    const move = SUBSCRIPTION_TRANSITIONS[action];
    const now = this.clock.now();
    const previous = await this.repository.transition(em, merchantId, id, {
      to: move.to,
      from: move.from,
      stampCancelled: action === 'cancel',
      stampPaused: action === 'pause',
      resume: action === 'resume',
      // A failed charge says why; so does the end of a subscription the engine completes.
      setFailure:
        action === 'chargeFailed' || (action === 'complete' && details.failureReason !== undefined),
      failureReason: details.failureReason ?? null,
      at: now,
    });
    const row = await this.findRow(em, merchantId, id); // not found: 404
    if (previous === undefined) {
      throw new ValidationError(`${move.refusal} (it is ${row.status})`, [
        { field: 'status', message: `is ${row.status}` },
      ]);
    }
    const subscription = toSubscriptionResponse(row);
    if (move.event) {
      await this.events.record(em, merchantId, move.event, subscription, {
        status: previous,
      });
    }
    return subscription;
  }

  /**
   * A charge of the subscription succeeded (the billing engine, inside the transaction that
   * settles it; the row is locked, so a pause or cancel committing meanwhile is seen). The money
   * moved whatever the status now, so the charge is always counted (`chargedAmount`,
   * `periodsCharged`, `lastChargeAt`) and the period it paid for always moves on, whatever the
   * status (a charge that lands after a pause committed has still paid its period: a resume must
   * not charge it again). The first charge starts it at `chargedAt` (`currentPeriodEnd =
   * chargedAt + interval`; `subscription.activated` is recorded when it is Active); later ones
   * keep the anchor (`currentPeriodEnd + interval`) unless that is already past (a resume after a
   * long pause: re-anchored at `chargedAt`, nothing billed back).
   * @throws NotFoundError.
   */
  async recordCharge(
    tx: SqlTx,
    merchantId: string,
    id: string,
    charge: { chargedAt: Date; amount: bigint; period: number },
  ): Promise<SubscriptionResponse> {
    const [subscription] = await this.recordCharges(tx, [{ merchantId, id, ...charge }]);
    return subscription;
  }

  /**
   * `recordCharge` of several subscriptions at once (a group of charges settled together, each
   * of its own merchant's): one statement for all their rows, and the `subscription.activated`
   * events of first charges recorded per merchant. @returns the subscriptions, in the charges'
   * order. @throws NotFoundError when one is absent or another merchant's.
   */
  async recordCharges(
    tx: SqlTx,
    charges: readonly {
      merchantId: string;
      id: string;
      chargedAt: Date;
      amount: bigint;
      period: number;
    }[],
  ): Promise<SubscriptionResponse[]> {
    const rows = await this.repository.recordCharges(tx, charges, this.clock.now());
    const activated = new Map<string, NewEvent[]>();
    const subscriptions = rows.map((row, i) => {
      if (!row) throw new NotFoundError('Subscription');
      const subscription = toSubscriptionResponse(row);
      if (row.charge_first && row.status_before === 'Active') {
        const events = activated.get(charges[i].merchantId) ?? [];
        events.push({ type: 'subscription.activated', object: subscription });
        activated.set(charges[i].merchantId, events);
      }
      return subscription;
    });
    for (const [merchantId, events] of activated) {
      await this.events.recordAll(tx, merchantId, events);
    }
    return subscriptions;
  }

  /**
   * What an accepted customer signature did, if the service ever accepted it: the subscription
   * it created or changed (any merchant's: a signature is used once, whatever for).
   */
  async signatureUse(
    db: SqlTx,
    signature: string,
  ): Promise<{ subscriptionId: string; planId: string; use: SignatureUse } | null> {
    const row = await this.signatures.find(db, signature);
    return row ? { subscriptionId: row.subscription_id, planId: row.plan_id, use: row.use } : null;
  }

  /**
   * Records that `signature` created or changed subscription `id` (in the caller's transaction).
   * A signature is used once, ever: @returns false when it was used before (for anything);
   * with `mustBeNew` that is a unique violation instead (the caller's transaction fails).
   */
  async useSignature(
    tx: SqlTx,
    id: string,
    signature: string,
    use: SignatureUse,
    options: { mustBeNew?: boolean } = {},
  ): Promise<boolean> {
    return this.signatures.insert(
      tx,
      { signature, subscriptionId: id, use, at: this.clock.now() },
      options.mustBeNew ?? false,
    );
  }

  /** The wallet's live token-delegate subscriptions in a mint, any merchant's: they move together. */
  liveDelegatedOfWallet(wallet: string, mint: MintSymbol): Promise<DelegatedSubscriptionRow[]> {
    return this.moves.liveDelegatedOfWallet(wallet, mint);
  }

  /** Locks subscriptions for a move, in id order (before the caller checks their charges). */
  lockForMove(tx: SqlTx, ids: string[]): Promise<void> {
    return this.moves.lock(tx, ids);
  }

  /**
   * A customer's move to the Subscriptions program: each of `moves` still live under
   * token-delegate takes the program scheme and its delegation PDA. `use`: the signature the
   * customer moved with, recorded once against the subscription it was asked for (when it moved).
   * @returns the ids that moved.
   */
  async moveToProgram(
    tx: SqlTx,
    moves: { id: string; onchainAddress: string }[],
    use?: { id: string; signature: string },
  ): Promise<string[]> {
    const moved = await this.moves.moveToProgram(tx, moves, this.clock.now());
    if (use && moved.includes(use.id)) {
      await this.useSignature(tx, use.id, use.signature, 'move', { mustBeNew: true });
    }
    return moved;
  }

  /**
   * A re-authorisation the customer signed (token-delegate scheme): the subscription's share
   * of the approval starts again from what it has been charged. Only a live, unrevoked
   * subscription of the customer is re-authorised; the signature is used once.
   * @returns whether it changed.
   */
  async reauthorize(
    tx: SqlTx,
    owner: SubscriptionOwner,
    id: string,
    share: bigint,
    signature: string,
  ): Promise<boolean> {
    if (!(await this.repository.reauthorize(tx, owner, id, share, this.clock.now()))) return false;
    return this.useSignature(tx, id, signature, 'reauthorize', { mustBeNew: true });
  }

  /**
   * The customer's revoke of its authorisation, seen on-chain (the portal): never charged again;
   * a `PastDue` one (nothing paid it forward) is `Completed` at once (`authorization_gone`), an
   * `Active` one when the period paid for ends (the charge run). The signature is used once.
   * @returns whether it changed.
   */
  async revoke(
    tx: SqlTx,
    owner: SubscriptionOwner,
    id: string,
    signature: string,
  ): Promise<boolean> {
    const status = await this.repository.markRevoked(tx, owner, id, this.clock.now());
    if (status === undefined) return false;
    await this.useSignature(tx, id, signature, 'cancel', { mustBeNew: true });
    // The merchant hears of it at once: access ends at the period paid for (Active), or now.
    const cancelled = toSubscriptionResponse(await this.findRow(tx, owner.merchantId, id));
    await this.events.record(tx, owner.merchantId, 'subscription.cancel_requested', cancelled, {
      cancelAtPeriodEnd: false,
      customerCancelledAt: null,
    });
    if (status === 'PastDue') {
      await this.transition(tx, owner.merchantId, id, 'complete', {
        failureReason: 'authorization_gone',
      });
    }
    return true;
  }

  /**
   * The customer's subscriptions (or the one `id`), newest first, with the plan, the merchant's
   * wallet and the customer's wallet: what the customer portal shows and acts on.
   */
  listOfCustomer(owner: SubscriptionOwner, id?: string): Promise<CustomerSubscriptionRow[]> {
    return this.repository.listOfCustomer(owner, id);
  }

  /**
   * Whether the wallet (a customer of any merchant) has a live (`Active` or `PastDue`)
   * subscription to the plan: the checkout refuses to build a second subscribe.
   */
  hasLiveForWallet(planId: string, walletAddress: string): Promise<boolean> {
    return this.repository.hasLiveForWallet(planId, walletAddress);
  }

  /**
   * The status and charges of subscription `id`, whichever merchant's (the public checkout,
   * after its confirm created or found it). @throws NotFoundError when absent.
   */
  async chargeState(id: string): Promise<ChargeStateRow> {
    const row = await this.repository.chargeState(id);
    if (!row) throw new NotFoundError('Subscription');
    return row;
  }

  /**
   * The merchant's subscriptions at these on-chain addresses (the Subscriptions program's
   * subscription PDAs), by address: the newest when a customer subscribed to the plan again.
   */
  async atOnchainAddresses(
    merchantId: string,
    addresses: string[],
  ): Promise<Map<string, OnchainSubscription>> {
    const found = new Map<string, OnchainSubscription>();
    if (addresses.length === 0) return found;
    for (const row of await this.repository.atOnchainAddresses(merchantId, addresses)) {
      if (!found.has(row.onchain_address)) {
        found.set(row.onchain_address, { id: row.id, customerId: row.customer_id });
      }
    }
    return found;
  }

  private async findRow(em: SqlTx, merchantId: string, id: string): Promise<SubscriptionRow> {
    const row = await this.repository.find(em, merchantId, id);
    if (!row) throw new NotFoundError('Subscription');
    return row;
  }
}

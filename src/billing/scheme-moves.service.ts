import { Injectable, Logger } from '@nestjs/common';
import { ConflictError, DomainError, ServiceUnavailableError } from '../common/errors/domain-error';
import type { SubscriptionScheme } from '../config/app-config';
import { Db } from '../database/db';
import {
  ChainPort,
  type ChainTransaction,
  MAX_MOVE_PLANS,
  type MoveInput,
  PlanTermsMismatchError,
  SubscribedOnChainError,
  type SubscribeTx,
  TransactionTooLargeError,
} from '../solana/chain.port';
import type { MintSymbol } from '../solana/mints';
import type { DelegatedSubscriptionRow } from '../subscriptions/subscription-moves.repository';
import { SubscriptionsService } from '../subscriptions/subscriptions.service';
import { invalidSignature, readConfirmed } from './confirmed-transactions';
import { ChargeAttemptsRepository } from './repositories/charge-attempts.repository';
import { WalletReservationsRepository } from './repositories/wallet-reservations.repository';

/** The subscription a customer asked to move (the portal's), as the move needs it. */
export interface MoveRequest {
  id: string;
  scheme: SubscriptionScheme;
  wallet: string;
  mint: MintSymbol;
  merchantWallet: string;
  planId: string;
}

/** A plan a move subscribes to under the program (`MoveInput.plans`). */
type MovePlan = MoveInput['plans'][number];

/** Why the wallet's subscriptions in a mint cannot move now: said without naming any of them. */
export class CannotMoveYetError extends ConflictError {
  constructor(mint: MintSymbol) {
    super(
      `This wallet's other ${mint} subscriptions cannot move to the Subscriptions program yet, ` +
        'and a subscription under it would end their approval: subscribe from another wallet, ' +
        'or try again later',
    );
  }
}

/**
 * A customer's move from the token-delegate scheme to the Subscriptions program, on a deployment
 * that now takes new subscriptions under the program (docs/solana.md, "Moving subscribers
 * between schemes"). Until a customer moves, its approval keeps being charged. A move takes
 * every live token-delegate subscription of the wallet in the mint at once: they share the one
 * approval that the program's authority replaces as the token account's delegate. They switch
 * in one database transaction under their row locks, never while a charge of theirs may still
 * land, so each period is charged once, under one scheme or the other.
 *
 * Four ways in, one path (`adopt`): the portal's confirm of the move's signature, the checkout's
 * confirm of a subscribe under the program (which carries the wallet's subscriptions in the mint
 * along, or is a move posted there), the charge run, which finds a subscription's approval gone
 * and its program subscription running (a move nobody confirmed), and every new move or
 * checkout of the wallet in the mint, which first takes up what already landed.
 */
@Injectable()
export class SchemeMovesService {
  private readonly logger = new Logger(SchemeMovesService.name);

  constructor(
    private readonly db: Db,
    private readonly chain: ChainPort,
    private readonly subscriptions: SubscriptionsService,
    private readonly attempts: ChargeAttemptsRepository,
    private readonly reservations: WalletReservationsRepository,
  ) {}

  /** Whether a subscription under `scheme` is to move (`ChainPort.movable`). */
  movable(scheme: SubscriptionScheme): boolean {
    return this.chain.movable(scheme);
  }

  /**
   * The plans of the wallet's live token-delegate subscriptions in the mint, for a transaction
   * that subscribes the wallet under the program (it must carry them: see the class), and what
   * they still need of the approval until it lands. Those whose move already landed are taken
   * up first (`adopt`: its 409 while a charge of theirs may land, and its 503, pass through).
   * Empty where new subscriptions are not taken under the program.
   * @throws CannotMoveYetError when one transaction cannot carry them (with `extra` more).
   */
  async carried(
    wallet: string,
    mint: MintSymbol,
    extra = 0,
  ): Promise<{ rows: DelegatedSubscriptionRow[]; plans: MovePlan[]; keepApproved: bigint }> {
    if (!this.chain.moveTo) return { rows: [], plans: [], keepApproved: 0n };
    await this.adopt(wallet, mint);
    const rows = await this.subscriptions.liveDelegatedOfWallet(wallet, mint);
    if (rows.length + extra > MAX_MOVE_PLANS) throw new CannotMoveYetError(mint);
    const plans = rows.map((row) => ({
      merchantWallet: row.merchant_wallet,
      planId: row.plan_id,
      amount: BigInt(row.amount),
      periodHours: row.interval_seconds / 3600,
    }));
    const keepApproved = rows.length
      ? await this.reservations.reserved(wallet, mint, { forApproval: true })
      : 0n;
    return { rows, plans, keepApproved };
  }

  /**
   * The move's transaction for the wallet to sign: step `authority` first when the wallet has
   * no authority for the mint under the program yet, then `subscribe` (asked again once the
   * first has landed), as a first subscribe under the program. `plans`: how many it moves. Null
   * when it cannot be built now (another of the wallet's plans not registered under the program
   * as it is, or more than one transaction holds): the caller offers a re-approval instead.
   * @throws ConflictError (not movable, or no longer live, or its move already landed and was
   *   taken up now).
   */
  async transaction(request: MoveRequest): Promise<(SubscribeTx & { plans: number }) | null> {
    if (!this.movable(request.scheme)) throw this.notMovable(request);
    let carried: Awaited<ReturnType<SchemeMovesService['carried']>>;
    try {
      carried = await this.carried(request.wallet, request.mint);
    } catch (error) {
      if (error instanceof CannotMoveYetError) return null;
      throw error;
    }
    if (!carried.rows.some((row) => row.id === request.id)) {
      // Its earlier move had landed and was taken up just now, or it ended meanwhile.
      const { status } = await this.subscriptions.chargeState(request.id);
      throw new ConflictError(
        status === 'Active' || status === 'PastDue'
          ? 'This subscription is under the Subscriptions program already: your move has landed'
          : 'This subscription is no longer live',
      );
    }
    try {
      const tx = await this.chain.buildMove({
        subscriber: request.wallet,
        mint: request.mint,
        plans: carried.plans,
        keepApproved: carried.keepApproved,
      });
      return { ...tx, plans: carried.plans.length };
    } catch (error) {
      // Too many for one transaction, or every one already running on-chain while the approval
      // is back with the service key (a move stopped after step 1, or a cancel since).
      if (error instanceof TransactionTooLargeError) return null;
      if (error instanceof SubscribedOnChainError) return null;
      // Another plan of the wallet's not registered as it is (its own: the 409 names it).
      if (error instanceof PlanTermsMismatchError && error.planId !== request.planId) return null;
      throw error;
    }
  }

  /**
   * After the wallet sent the move's subscribe (the portal): verified on-chain, the wallet's
   * subscriptions in the mint whose subscribe it holds take the program scheme (`adopt`). The
   * signature is used once: the same confirm again answers as before; one used for anything
   * else is refused; a transaction that also subscribes a plan the wallet had no subscription
   * to is a checkout's, confirmed there.
   * @returns false when the transaction holds no running subscribe of this subscription's plan
   *   (it may be a re-approval instead).
   * @throws ValidationError (not confirmed yet, used before, a checkout's); ConflictError (a
   *   charge of one of them is on its way: asked again once it has settled).
   */
  async confirm(request: MoveRequest, signature: string): Promise<boolean> {
    const used = await this.subscriptions.signatureUse(this.db, signature);
    if (used?.use === 'move' && used.subscriptionId === request.id) return true;
    if (used) {
      throw invalidSignature('was already used to change a subscription; a signature is used once');
    }
    if (!this.movable(request.scheme)) throw this.notMovable(request);
    const tx = await readConfirmed(this.chain, this.logger, signature);
    if (await this.subscribesOthers(request.wallet, request.mint, tx)) {
      throw invalidSignature('is a subscribe at a checkout: confirm it there');
    }
    const moved = await this.adopt(request.wallet, request.mint, {
      tx,
      use: { id: request.id, signature },
    });
    if (moved.includes(request.id)) return true;
    // The same confirm, concurrently, moved it first: the same answer.
    const meanwhile = await this.subscriptions.signatureUse(this.db, signature);
    return meanwhile?.use === 'move' && meanwhile.subscriptionId === request.id;
  }

  /**
   * Moves to the program every live token-delegate subscription of the wallet in the mint whose
   * program subscription runs on-chain with its plan's terms, bound to the wallet's authority as
   * it is (`ChainPort.authorizationLeft`) and, given `tx`, whose signed subscribe `tx` holds.
   * `use` records the signature against the subscription it was asked for. Nothing is ever
   * revived: only live subscriptions move, and a program subscription only the wallet can sign.
   * @returns the ids that moved.
   * @throws ConflictError when a charge of one of them may still land under the approval;
   *   ServiceUnavailableError when the chain cannot be read.
   */
  async adopt(
    wallet: string,
    mint: MintSymbol,
    given: { tx?: ChainTransaction; use?: { id: string; signature: string } } = {},
  ): Promise<string[]> {
    const to = this.chain.moveTo;
    if (!to) return [];
    const rows = await this.subscriptions.liveDelegatedOfWallet(wallet, mint);
    if (!rows.length) return [];
    const moves: { id: string; onchainAddress: string }[] = [];
    try {
      // The approval still the token account's delegate: its subscriptions are charged under it
      // (a move's first step, or a cancel since, gave it back), whatever runs under the program.
      if ((await this.chain.readAuthorization(wallet, mint)).delegatedToService) return [];
      for (const row of rows) {
        const plan = { scheme: to, merchantWallet: row.merchant_wallet, planId: row.plan_id, mint };
        if (given.tx && (await this.chain.authorizationSigner(given.tx, plan)) !== wallet) continue;
        const left = await this.chain.authorizationLeft(
          { ...plan, amount: BigInt(row.amount), periodHours: row.interval_seconds / 3600 },
          wallet,
        );
        if (left) moves.push({ id: row.id, onchainAddress: left.address });
      }
    } catch (error) {
      if (error instanceof DomainError) throw error;
      this.logger.warn({ err: error }, 'Could not read a move on-chain');
      throw new ServiceUnavailableError('The chain is not reachable; retry shortly');
    }
    if (!moves.length) return [];
    return this.db.transaction(async (sql) => {
      const ids = moves.map((move) => move.id);
      await this.subscriptions.lockForMove(sql, ids);
      if ((await this.attempts.triesThatMayLand(sql, ids)).length > 0) {
        throw new ConflictError(
          'A payment of this subscription is on its way under the old authorisation: try ' +
            'again in a minute, once it has settled',
        );
      }
      return this.subscriptions.moveToProgram(sql, moves, given.use);
    });
  }

  /**
   * Whether the asked subscription is under the program already and `signature`'s transaction
   * holds its wallet's signed subscribe of its plan: its move was taken up another way first
   * (the charge run, a sibling's confirm), and this confirm answers as if it had done it.
   */
  async movedBy(request: MoveRequest, signature: string): Promise<boolean> {
    const to = this.chain.moveTo;
    if (!to || this.chain.approvalOf(request.scheme)) return false;
    const tx = await readConfirmed(this.chain, this.logger, signature);
    const plan = {
      scheme: to,
      merchantWallet: request.merchantWallet,
      planId: request.planId,
      mint: request.mint,
    };
    return (await this.chain.authorizationSigner(tx, plan)) === request.wallet;
  }

  /**
   * Whether `tx` subscribes a plan the wallet holds no token-delegate subscription to: a
   * checkout's (which carries those along), confirmed at that plan's checkout only, so that its
   * signature creates that subscription.
   */
  async subscribesOthers(wallet: string, mint: MintSymbol, tx: ChainTransaction) {
    const rows = await this.subscriptions.liveDelegatedOfWallet(wallet, mint);
    const ours = await Promise.all(
      rows.map((row) => this.chain.planAddress(row.merchant_wallet, row.plan_id)),
    );
    return this.chain.subscribedPlans(tx).some((plan) => !ours.includes(plan));
  }

  /** Why a subscription does not move: it is where new ones are taken, or nothing moves. */
  private notMovable(request: MoveRequest): ConflictError {
    return new ConflictError(
      this.chain.approvalOf(request.scheme)
        ? 'New subscriptions are taken under this subscription’s scheme: there is nothing to move to'
        : 'This subscription is under the Subscriptions program already',
    );
  }
}

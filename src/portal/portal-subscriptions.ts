import { Injectable } from '@nestjs/common';
import { NotFoundError } from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-codes';
import { formatAmount } from '../common/money';
import { everyText } from '../checkout/every-text';
import { ChainPort } from '../solana/chain.port';
import { ChainUnavailableError } from '../solana/blockhash-cache';
import {
  type CustomerSubscriptionRow,
  SubscriptionsService,
} from '../subscriptions/subscriptions.service';
import { PortalSubscriptionResponse } from './dto/portal.response';
import type { PortalGrant } from '../auth/portal-token';

/** Failures a customer can put right by topping up: the next charge may succeed. */
const SETTLEABLE_FAILURES = ['insufficient_funds', 'transient'];

/** A subscription of the session's customer, with what the portal shows and acts on. */
export interface PortalSubscriptionRow extends CustomerSubscriptionRow {
  /**
   * What a charge pulls each period (base units): the price, plus the mint's transfer fee under
   * the token-delegate scheme, so that the price arrives whole. Null when the mint's fee cannot
   * be read now (the RPC down): shown as the price, never used to build or judge an approval
   * (`pullOf`).
   */
  pull: string | null;
}

/**
 * The portal's reads of one customer's subscriptions (always within the session's merchant and
 * customer: anything else is "not found") and how each is shown to them.
 */
@Injectable()
export class PortalSubscriptions {
  constructor(
    private readonly subscriptions: SubscriptionsService,
    private readonly chain: ChainPort,
  ) {}

  async rows(grant: PortalGrant, id?: string): Promise<PortalSubscriptionRow[]> {
    const rows = await this.subscriptions.listOfCustomer(grant, id);
    return Promise.all(rows.map(async (row) => ({ ...row, pull: await this.readPull(row) })));
  }

  /** @throws NotFoundError when it is not a subscription of the session's customer. */
  async row(grant: PortalGrant, id: string): Promise<PortalSubscriptionRow> {
    const [row] = await this.rows(grant, id);
    if (!row) throw new NotFoundError('Subscription', ErrorCode.NOT_FOUND);
    return row;
  }

  /** Whether the customer may settle it: paused by a failed charge they can put right. */
  settleable(row: PortalSubscriptionRow): boolean {
    return (
      row.status === 'PastDue' &&
      !row.paused &&
      !row.revoked &&
      SETTLEABLE_FAILURES.includes(row.failure_reason ?? '')
    );
  }

  view(row: PortalSubscriptionRow): PortalSubscriptionResponse {
    const amount = BigInt(row.amount);
    const live = (row.status === 'Active' || row.status === 'PastDue') && !row.revoked;
    const delegate = this.chain.approvalOf(row.scheme) !== null;
    const left = BigInt(row.authorized_amount) - BigInt(row.charged_amount);
    return {
      id: row.id,
      planId: row.plan_id,
      label: row.label,
      mint: row.mint,
      amount: formatAmount(amount),
      every: everyText(row.interval_seconds),
      status: row.status,
      failureReason: row.failure_reason,
      pausedByMerchant: row.paused,
      cancelled: row.revoked,
      currentPeriodEnd: row.current_period_end,
      lastChargeAt: row.last_charge_at,
      endedAt: row.ended_at,
      paymentsAuthorized:
        delegate && live ? Number(maxZero(left) / BigInt(row.pull ?? row.amount)) : null,
      canSettle: this.settleable(row),
      canReauthorize: delegate && live && !row.paused,
      movesToProgram: live && !row.paused && this.chain.movable(row.scheme),
      canCancel: live,
    };
  }

  /**
   * What a charge of the subscription pulls, for building or judging an approval or a payment.
   * @throws ChainUnavailableError when the mint's fee cannot be read now: the price alone would
   *   approve less than each charge pulls.
   */
  pullOf(row: PortalSubscriptionRow): bigint {
    if (row.pull === null) throw new ChainUnavailableError();
    return BigInt(row.pull);
  }

  /** What a charge pulls, or null when the mint's fee cannot be read now. */
  private async readPull(row: CustomerSubscriptionRow): Promise<string | null> {
    const pull = await this.chain
      .pullAmount(row.mint, BigInt(row.amount), row.scheme)
      .catch(() => null);
    return pull === null ? null : pull.toString();
  }
}

export function maxZero(value: bigint): bigint {
  return value < 0n ? 0n : value;
}

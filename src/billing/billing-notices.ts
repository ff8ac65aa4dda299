import type { SqlTx } from '../database/pg-transaction';
import { Injectable } from '@nestjs/common';
import { EmailOutboxService } from '../email/email-outbox.service';
import { escapeHtml } from '../email/invoice-email';
import type { ChargeFailure } from '../solana/chain.port';
import { NOTICE_PORTAL_TTL_SECONDS, PortalSessions } from '../auth/portal-sessions.service';
import { SubscriptionResponse } from '../subscriptions/dto/subscription.response';
import { BillingNoticesRepository } from './repositories/billing-notices.repository';

/** What a customer is told about each failure, in plain words. */
const FAILURE_TEXT: Record<ChargeFailure, string> = {
  insufficient_funds: 'your wallet did not hold enough to cover it',
  authorization_gone: 'the authorisation you gave has been withdrawn or used up',
  account_frozen: 'the token account involved is frozen by the stablecoin issuer',
  merchant_account_missing: 'the merchant could not receive it yet',
  merchant_account_frozen: "the stablecoin issuer has frozen the merchant's account for now",
  mint_paused: 'the stablecoin issuer has paused all transfers of it for now',
  transfer_hook_failed: "the stablecoin issuer's transfer check did not let it through",
  transient: 'the network could not process it',
};

/**
 * Customer notices about their subscriptions, queued in the e-mail outbox inside the
 * transaction of the change they tell about (so a notice exists exactly when the change
 * committed). Only customers with an e-mail address get them. The links open the customer's
 * portal (a session good for `NOTICE_PORTAL_TTL_SECONDS`), where they settle, re-authorise or
 * cancel.
 */
@Injectable()
export class BillingNotices {
  constructor(
    private readonly email: EmailOutboxService,
    private readonly portal: PortalSessions,
    private readonly recipients: BillingNoticesRepository,
  ) {}

  /** A charge failed: what happened and where to put it right. */
  async chargeFailed(
    em: SqlTx,
    subscription: SubscriptionResponse,
    reason: ChargeFailure,
  ): Promise<void> {
    const to = await this.recipient(em, subscription);
    if (!to) return;
    const url = await this.portalUrl(to.merchantId, subscription);
    const what = `${subscription.plan.amount} ${subscription.plan.mint} for ${subscription.plan.label}`;
    const text =
      `Hello,\n\nWe could not collect your payment of ${what} from ${to.merchant}: ` +
      `${FAILURE_TEXT[reason]}.\n\nYour subscription is paused until it is settled. ` +
      `You can review it and put it right here:\n${url}\n`;
    await this.email.enqueue(em, to.merchantId, {
      to: to.email,
      subject: oneLine(`Payment failed: ${subscription.plan.label} (${to.merchant})`),
      text,
      html: html(text, url),
    });
  }

  /**
   * The approval covers only `periodsLeft` more charges: re-authorise before it runs out. With
   * `move`, the service now takes new subscriptions under the Subscriptions program, and the
   * portal's re-authorisation moves the subscription there (docs/solana.md, "Moving subscribers
   * between schemes"): the notice says so.
   */
  async approvalRunningLow(
    em: SqlTx,
    subscription: SubscriptionResponse,
    periodsLeft: bigint,
    move = false,
  ): Promise<void> {
    const to = await this.recipient(em, subscription);
    if (!to) return;
    const url = await this.portalUrl(to.merchantId, subscription);
    const action = move
      ? `move it to the Solana Subscriptions program (one approval in your wallet, after ` +
        `which each payment is bounded on-chain by the plan's terms) here`
      : 're-authorise it here';
    const text =
      `Hello,\n\nYour authorisation for ${subscription.plan.label} (${to.merchant}) covers ` +
      `${periodsLeft} more payment${periodsLeft === 1n ? '' : 's'} of ` +
      `${subscription.plan.amount} ${subscription.plan.mint}. To keep your subscription ` +
      `running after that, ${action}:\n${url}\n`;
    await this.email.enqueue(em, to.merchantId, {
      to: to.email,
      subject: oneLine(
        `${move ? 'Move' : 'Re-authorise'} your subscription: ${subscription.plan.label}`,
      ),
      text,
      html: html(text, url),
    });
  }

  private async portalUrl(merchantId: string, subscription: SubscriptionResponse) {
    const session = await this.portal.create(
      merchantId,
      subscription.customerId,
      NOTICE_PORTAL_TTL_SECONDS,
    );
    return session.url;
  }

  private async recipient(em: SqlTx, subscription: SubscriptionResponse) {
    const row = await this.recipients.recipient(em, subscription.customerId);
    return row?.email
      ? { email: row.email, merchant: row.merchant, merchantId: row.merchant_id }
      : null;
  }
}

function oneLine(text: string): string {
  return text.replace(/[\p{Cc}\u2028\u2029]+/gu, ' ').slice(0, 900);
}

function html(text: string, url: string): string {
  const body = escapeHtml(text).replace(/\n/g, '<br>\n');
  const link = escapeHtml(url);
  return `<!doctype html><html><body><p>${body.replace(link, `<a href="${link}">${link}</a>`)}</p></body></html>`;
}

import { Controller, Get, Param, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../common/decorators/public.decorator';
import { DomainError } from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-codes';
import { displayAmount } from '../common/money';
import { sendPage } from '../checkout/pages/checkout-pages.controller';
import { day } from '../checkout/pages/checkout-pages.service';
import { html } from '../checkout/pages/html';
import { PageShell } from '../checkout/pages/layout';
import { PortalSubscriptionResponse } from './dto/portal.response';
import { PortalSessions } from '../auth/portal-sessions.service';
import { PortalService } from './portal.service';

const REASONS: Record<string, string> = {
  insufficient_funds: 'the last payment failed: the wallet did not hold enough',
  transient: 'the last payment failed: the network could not process it',
  account_frozen: 'the token account is frozen by the stablecoin issuer',
  authorization_gone: 'the authorisation was withdrawn or used up',
  term_ended: 'the authorised payments have all been made',
};

/** The customer portal page, opened from a portal session link (no API key). */
@ApiExcludeController()
@Public()
@Controller('portal')
export class PortalPageController {
  constructor(
    private readonly sessions: PortalSessions,
    private readonly portal: PortalService,
    private readonly shell: PageShell,
  ) {}

  @Get(':token')
  async page(@Param('token') token: string, @Res() res: Response): Promise<void> {
    let grant;
    try {
      grant = await this.sessions.verify(token);
    } catch (error) {
      if (!(error instanceof DomainError) || error.code !== ErrorCode.UNAUTHORIZED) throw error;
      res.status(401).type('html').setHeader('Cache-Control', 'no-store');
      res.send(this.shell.error('Link not valid', error.message));
      return;
    }
    await sendPage(res, 'Customer', this.shell, async () => {
      const view = await this.portal.view(grant);
      const subscriptions = view.subscriptions.map((s) => subscriptionItem(s));
      const invoices = view.invoices.map(
        (i) =>
          html`<li class="item" data-row>
            <strong>Invoice ${i.number}</strong>
            <span class="badge badge-${i.status}">${i.status}</span>
            <p>
              ${i.total}
              ${i.mint}${i.status === 'Open' ? html`, ${i.amountDue} still due by ${day(i.dueDate)}` : null}
            </p>
            ${i.status === 'Open' && i.amountDue !== '0' ? html`<a class="button" href="${i.checkoutUrl}">Pay invoice ${i.number}</a>` : null}
            <p class="note">
              <a href="${i.pdfUrl}">Invoice ${i.number} (PDF)</a
              >${i.receiptUrl ? html` · <a href="${i.receiptUrl}">Receipt (PDF)</a>` : null}
            </p>
          </li>`,
      );
      const given = [
        ...view.refunds.map(
          (r) =>
            html`<li class="item" data-row>
              <strong>Refund ${displayAmount(r.amount, r.mint)}</strong>
              <span class="badge badge-${r.status}">${r.status}</span>
              <p class="note break">
                ${day(r.createdAt)}${r.signature ? html` · transaction ${r.signature}` : null}
              </p>
            </li>`,
        ),
        ...view.creditNotes.map(
          (n) =>
            html`<li class="item" data-row>
              <strong>Credit note ${n.number}</strong>
              <p>${displayAmount(n.amount, n.mint)} · ${CREDIT_EFFECTS[n.action] ?? n.action}</p>
              <p class="note"><a href="${n.pdfUrl}">Credit note ${n.number} (PDF)</a></p>
            </li>`,
        ),
      ];
      const balances = view.creditBalances.map((b) => displayAmount(b.balance, b.mint)).join(', ');
      const body = html` <p class="merchant">${view.merchantName}</p>
        <h1>Your subscriptions and invoices</h1>
        <p class="note break">
          Wallet ${view.walletAddress} · this page works until
          ${view.expiresAt.slice(0, 16).replace('T', ' ')} UTC
        </p>
        <h2>Subscriptions</h2>
        ${
          subscriptions.length
            ? html`<ul class="plain">
                ${subscriptions}
              </ul>`
            : html`<p>No subscriptions.</p>`
        }
        <div id="wallets" hidden></div>
        <h2>Invoices</h2>
        ${
          invoices.length
            ? html`<ul class="plain">
                ${invoices}
              </ul>`
            : html`<p>No invoices.</p>`
        }
        ${balances ? html`<p>Your credit with ${view.merchantName}: ${balances}. Your next invoices take it first.</p>` : null}
        ${
          given.length
            ? html`<h2>Refunds and credit notes</h2>
                <ul class="plain">
                  ${given}
                </ul>`
            : null
        }`;
      return this.shell.render({
        title: `Your account · ${view.merchantName}`,
        page: 'portal',
        body,
        session: token,
      });
    });
  }
}

/** What a credit note did, as the customer reads it. */
const CREDIT_EFFECTS: Record<string, string> = {
  reduce_due: 'took off what the invoice asks for',
  refund: 'refunded to your wallet',
  credit: 'credited to your balance',
};

function subscriptionItem(s: PortalSubscriptionResponse) {
  const status = s.cancelled ? `${s.status} (cancelled)` : s.status;
  const why = s.failureReason ? (REASONS[s.failureReason] ?? s.failureReason) : null;
  const low = s.paymentsAuthorized !== null && s.paymentsAuthorized <= 2;
  return html`<li class="item" data-row>
    <strong>${s.label}</strong>
    <span class="badge badge-${s.status}" data-field="status">${status}</span>
    <p>
      ${displayAmount(s.amount, s.mint)} every
      ${s.every}${s.currentPeriodEnd && s.status === 'Active' ? html` · ${s.cancelled ? 'ends' : 'next payment'} ${day(s.currentPeriodEnd)}` : null}${s.endedAt ? html` · ended ${day(s.endedAt)}` : null}
    </p>
    ${s.pausedByMerchant ? html`<p>Paused by the merchant.</p>` : null}
    ${why ? html`<p>Why: ${why}.</p>` : null}
    ${s.paymentsAuthorized !== null ? html`<p${low ? html` class="warn"` : null}>Your authorisation covers ${s.paymentsAuthorized} more payment${s.paymentsAuthorized === 1 ? '' : 's'}.</p>` : null}
    ${s.canSettle ? html`<button type="button" data-action="settle" data-subscription="${s.id}">Pay now and resume ${s.label}</button>` : null}
    ${s.movesToProgram ? html`<p>This subscription can move to the Solana Subscriptions program: each payment is then bounded on-chain by the plan's terms. Until you move it, your current authorisation keeps being charged.</p>` : null}
    ${s.canReauthorize ? html`<button type="button" class="${low || s.movesToProgram ? '' : 'secondary'}" data-action="reauthorize" data-subscription="${s.id}">${s.movesToProgram ? 'Move' : 'Re-authorise'} ${s.label}${s.movesToProgram ? ' to the Subscriptions program' : ''}</button>` : null}
    ${s.canCancel ? html`<button type="button" class="secondary" data-action="cancel" data-subscription="${s.id}">Cancel ${s.label}</button>` : null}
  </li>`;
}

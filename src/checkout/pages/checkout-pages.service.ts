import { Injectable } from '@nestjs/common';
import { encodeURL } from '@solana/pay';
import { PublicKey } from '@solana/web3.js';
import BigNumber from 'bignumber.js';
import { Clock } from '../../common/clock';
import { displayAmount, formatAmount } from '../../common/money';
import { AppConfig } from '../../config/app-config';
import { withTimeout } from '../../common/with-timeout';
import { configuredMints } from '../../solana/chain.factory';
import { ChainPort, ResolvedMint } from '../../solana/chain.port';
import type { MintSymbol } from '../../solana/mints';
import { CheckoutService } from '../checkout.service';
import { everyText } from '../every-text';
import { html, SafeHtml } from './html';
import { PageShell } from './layout';
import { qrSvg } from './qr';

/** A date for people: "2026-12-24" (the ISO day, the same in every locale). */
export function day(iso: string | null): string {
  return iso ? iso.slice(0, 10) : '—';
}

/**
 * The hosted checkout pages (DESIGN section 9), server-rendered from the public checkout API's
 * own views, so a page shows exactly what that API exposes and nothing more.
 */
@Injectable()
export class CheckoutPages {
  constructor(
    private readonly checkout: CheckoutService,
    private readonly shell: PageShell,
    private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly chain: ChainPort,
  ) {}

  async invoice(id: string): Promise<string> {
    const invoice = await this.checkout.invoice(id);
    const due = invoice.amountDue;
    const money = (amount: string) => displayAmount(amount, invoice.mint);
    const open = invoice.status === 'Open' && due !== '0';
    const partial = invoice.amountPaid !== '0' && invoice.status === 'Open';
    const state: Record<string, string> = {
      Paid: `Paid in full${invoice.paidAt ? ` on ${day(invoice.paidAt)}` : ''}. Thank you.`,
      Cancelled: 'This invoice was voided by the merchant: nothing is due.',
      Expired: 'This invoice has expired: ask the merchant for a new one.',
      Open: open
        ? partial
          ? `Partially paid: ${money(due)} is still due.`
          : `${money(due)} is due${invoice.dueDate ? ` by ${day(invoice.dueDate)}` : ''}.`
        : 'Payment received: waiting for it to be final.',
    };
    // Only an Open invoice asks for money: a voided or expired one shows no "still due".
    const owed = invoice.status === 'Open' || invoice.status === 'Paid';
    const billedTo = invoice.billedTo.label ?? invoice.billedTo.walletAddress;
    const items = invoice.lineItems.map(
      (item) =>
        html`<tr>
          <td>${item.description}</td>
          <td class="num">${item.quantity}</td>
          <td class="num">${displayAmount(item.unitAmount)}</td>
          <td class="num">${displayAmount(item.amount)}</td>
        </tr>`,
    );
    const body = html` <p class="merchant">${invoice.merchantName}</p>
      <h1>Invoice ${invoice.number}</h1>
      <p>
        <span class="badge badge-${invoice.status}" data-field="invoice-status"
          >${invoice.status}</span
        >
      </p>
      <p>${state[invoice.status]}</p>
      <dl>
        <dt>Billed to</dt>
        <dd class="break" data-field="billed-to">${billedTo}</dd>
        <dt>Issued</dt>
        <dd data-field="issued">${day(invoice.issuedAt)}</dd>
      </dl>
      <table>
        <caption class="note">
          Amounts in ${invoice.mint}
        </caption>
        <thead>
          <tr>
            <th scope="col">Item</th>
            <th scope="col" class="num">Qty</th>
            <th scope="col" class="num">Unit</th>
            <th scope="col" class="num">Amount</th>
          </tr>
        </thead>
        <tbody>
          ${items}
        </tbody>
      </table>
      <dl>
        <dt>Subtotal</dt>
        <dd>${money(invoice.subtotal)}</dd>
        <dt>Tax (${formatBps(invoice.taxBps)})</dt>
        <dd>${money(invoice.tax)}</dd>
        <dt>Total</dt>
        <dd class="total">${money(invoice.total)}</dd>
        ${
          owed
            ? html`<dt>Paid so far</dt>
                <dd>
                  <span data-field="amount-paid">${displayAmount(invoice.amountPaid)}</span>
                  ${invoice.mint}
                </dd>
                ${
                  invoice.amountCredited !== '0'
                    ? html`<dt>Credited</dt>
                        <dd>${money(invoice.amountCredited)}</dd>`
                    : null
                }
                <dt>Still due</dt>
                <dd><span data-field="amount-due">${displayAmount(due)}</span> ${invoice.mint}</dd>
                <dt>Due date</dt>
                <dd>${day(invoice.dueDate)}</dd>`
            : null
        }
      </dl>
      ${open ? this.payBlock(invoice) : null} ${open ? await this.issuerNotes(invoice.mint) : null}
      <p class="note">
        <a href="/checkout/invoices/${invoice.id}/pdf">Invoice ${invoice.number} (PDF)</a>${
          invoice.status === 'Paid'
            ? html` · <a href="/checkout/invoices/${invoice.id}/receipt/pdf">Receipt (PDF)</a>`
            : null
        }
      </p>`;
    return this.shell.render({
      title: `Invoice ${invoice.number} · ${invoice.merchantName}`,
      page: 'invoice',
      body,
    });
  }

  async plan(id: string): Promise<string> {
    const plan = await this.checkout.plan(id);
    const every = everyText(plan.intervalSeconds);
    const money = (amount: string) => displayAmount(amount, plan.mint);
    const meter = plan.meter;
    const price = meter
      ? `${money(plan.fixedAmount)} every ${every} + usage (at most ${money(meter.cap)})`
      : `${money(plan.amount)} every ${every}`;
    const until =
      plan.authorizedPeriods !== null
        ? new Date(
            this.clock.now().getTime() + plan.authorizedPeriods * plan.intervalSeconds * 1000,
          ).toISOString()
        : null;
    const authorises =
      plan.authorizedAmount !== null
        ? html`<p>
              ${plan.merchantName} may collect
              <strong>up to ${money(plan.amountPerPeriod)} every ${every}</strong>,
              <strong>${plan.authorizedPeriods} times</strong> (at most
              ${money(plan.authorizedAmount)} in all, until about ${day(until)}), straight from your
              token account. The first payment is taken now. You can cancel at any time; you will be
              asked to re-authorise before the authorisation runs out.
            </p>
            ${
              plan.amountPerPeriod !== plan.amount
                ? html`<p class="note">
                    ${money(plan.amountPerPeriod)} includes the stablecoin's transfer fee, which the
                    network withholds: ${money(plan.amount)} reaches the merchant.
                  </p>`
                : null
            }`
        : html`<p>
            ${plan.merchantName} may collect
            <strong>${meter ? 'up to ' : ''}${money(plan.amount)} every ${every}</strong> from your
            token account, until you cancel. The first payment is taken now.
          </p>`;
    const usage = meter
      ? html`<p class="usage">
          Each payment is the fixed fee of ${money(plan.fixedAmount)} plus what you used of
          <strong>${meter.name}</strong> in the period before: ${money(meter.unitPrice)} for every
          ${units(meter.unitSize)} beyond the first ${units(meter.includedUnits)} of each period,
          <strong>never more than ${money(meter.cap)} for usage</strong>, so never more than
          ${money(plan.amount)} in one payment. Usage beyond that is not charged.
        </p>`
      : null;
    const link = encodeURL({
      link: new URL(`${this.config.publicBaseUrl}/api/checkout/plans/${plan.id}/transaction`),
    }).toString();
    const body = html` <p class="merchant">${plan.merchantName}</p>
      <h1>${plan.label}</h1>
      ${plan.description ? html`<p>${plan.description}</p>` : null}
      <p class="price"><strong>${price}</strong></p>
      ${
        plan.active
          ? html`<h2>What you authorise</h2>
              ${authorises} ${usage}
              <button type="button" data-action="subscribe" data-plan="${plan.id}">
                Subscribe with a browser wallet
              </button>
              <div id="wallets" hidden></div>
              ${this.phone(link, 'Subscribe from your phone', 'Scan with a Solana Pay wallet to subscribe.')}
              ${await this.issuerNotes(plan.mint)}`
          : html`<p><span class="badge badge-inactive">Not available</span></p>
              <p>This plan no longer accepts new subscribers.</p>`
      }`;
    return this.shell.render({ title: `${plan.label} · ${plan.merchantName}`, page: 'plan', body });
  }

  private payBlock(invoice: Awaited<ReturnType<CheckoutService['invoice']>>): SafeHtml {
    // The configured address, not the chain's view of it: the page renders with the RPC down.
    const mint = configuredMints(this.config).find((m) => m.symbol === invoice.mint)!;
    const request = encodeURL({
      link: new URL(`${this.config.publicBaseUrl}/api/checkout/invoices/${invoice.id}/transaction`),
    }).toString();
    const transfer = encodeURL({
      recipient: new PublicKey(invoice.merchantWallet),
      amount: new BigNumber(invoice.amountToPay),
      splToken: new PublicKey(mint.address),
      reference: new PublicKey(invoice.reference),
      label: invoice.merchantName,
      message: `Invoice ${invoice.number}`,
    }).toString();
    return html` <button type="button" data-action="pay-invoice" data-invoice="${invoice.id}">
        Pay ${displayAmount(invoice.amountToPay, invoice.mint)} with a browser wallet
      </button>
      <div id="wallets" hidden></div>
      ${this.phone(request, 'Pay from your phone', 'Scan with a Solana Pay wallet.')}
      <p class="note">
        Or open a <a href="${transfer}" class="break">Solana Pay transfer request</a> for
        ${displayAmount(invoice.amountToPay, invoice.mint)} in a wallet app.
      </p>
      ${
        invoice.amountToPay !== invoice.amountDue
          ? html`<p class="note">
              ${displayAmount(invoice.amountToPay, invoice.mint)} includes the stablecoin's transfer
              fee, which the network withholds: ${displayAmount(invoice.amountDue, invoice.mint)}
              reaches the merchant.
            </p>`
          : null
      }`;
  }

  /**
   * What the stablecoin's issuer can do to the payer's money, read from the mint's Token-2022
   * extensions (docs/solana.md, "Token-2022 extensions"), in plain words: a permanent delegate
   * (it can move funds out of any account of the mint), a transfer hook (its program checks, and
   * may refuse, each transfer), accounts that start frozen. Nothing when the mint has none, or
   * when the mint cannot be read right now (the page renders with the RPC down).
   */
  private async issuerNotes(symbol: MintSymbol): Promise<SafeHtml | null> {
    let mint: ResolvedMint;
    try {
      mint = await withTimeout(this.chain.mint(symbol), ISSUER_NOTES_TIMEOUT_MS);
    } catch {
      return null;
    }
    const e = mint.extensions;
    const notes: SafeHtml[] = [];
    if (e.permanentDelegate) {
      notes.push(
        html`<li data-field="permanent-delegate">
          ${symbol}'s issuer holds a permanent delegate (<span class="break"
            >${e.permanentDelegate}</span
          >): it can move or burn ${symbol} from any ${symbol} account, yours and the merchant's
          included, without the owner's signature.
        </li>`,
      );
    }
    if (e.transferHook?.programId) {
      notes.push(
        html`<li data-field="transfer-hook">
          Every ${symbol} transfer runs a program of the issuer's choosing (its transfer hook,
          <span class="break">${e.transferHook.programId}</span>), which can refuse it.
        </li>`,
      );
    }
    if (e.pausable) {
      notes.push(
        html`<li data-field="pausable">
          The issuer can pause ${symbol}: while it is paused, no ${symbol} payment goes through.
        </li>`,
      );
    }
    if (e.defaultAccountState === 'frozen') {
      notes.push(
        html`<li data-field="default-frozen">
          New ${symbol} accounts start frozen: a wallet can pay only once the issuer has thawed its
          account.
        </li>`,
      );
    }
    if (notes.length === 0) return null;
    return html`<section aria-label="What the issuer of ${symbol} can do">
      <h2>What the issuer of ${symbol} can do</h2>
      <ul class="note">
        ${notes}
      </ul>
    </section>`;
  }

  private phone(link: string, title: string, hint: string): SafeHtml {
    return html`<section class="phone" aria-label="${title}">
      ${new SafeHtml(qrSvg(link, `${title}: Solana Pay QR code`))}
      <div>
        <h2>${title}</h2>
        <p>${hint}</p>
        <p><a href="${link}">Open in a wallet app</a></p>
      </div>
    </section>`;
  }
}

/** How long a page waits for the mint's extensions (cached after the first read). */
const ISSUER_NOTES_TIMEOUT_MS = 2_000;

/** "7.5%" from 750 basis points. */
/** A quantity of usage units as words: "1 unit", "1000 units", "0.5 units". */
function units(quantity: string): string {
  return `${quantity} ${quantity === '1' ? 'unit' : 'units'}`;
}

function formatBps(bps: number): string {
  return `${formatAmount(BigInt(bps), 2)}%`;
}

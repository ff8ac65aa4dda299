import { displayAmount, formatUnits } from '../common/money';
import type { SolanaCluster } from '../config/app-config';
import { invoiceNumber } from '../invoices/invoice.mapper';
import type { CheckoutInvoiceRow } from '../invoices/invoices.service';
import { creditNoteNumber } from '../credit-notes/credit-note.mapper';
import type { CreditNoteRow } from '../credit-notes/credit-notes.repository';
import type { CreditNoteAction } from '../credit-notes/entities/credit-note.entity';
import type { PaymentResponse } from '../payments/dto/payment.response';

/** What a document shows, as text already formatted for people (money via the money module). */
export interface DocumentView {
  /** `Invoice` or `Receipt`. */
  title: string;
  merchantName: string;
  number: string;
  /** Label, value pairs under the title (dates, status). */
  facts: [string, string][];
  billedTo: string[];
  lines: { description: string; quantity: string; unit: string; amount: string }[];
  /** Label, value pairs of the totals, the last one set in bold. */
  totals: [string, string][];
  /** Payments and refunds on-chain: what, how much, and a link to the transaction. */
  transfers: { label: string; amount: string; signature: string; link: string }[];
  footer: string[];
}

/**
 * The Solana explorer's page of a transaction on the service's cluster. A localnet's is the
 * explorer's custom cluster at the RPC's origin only (a provider's path or query can hold its
 * key: never printed on a customer's document).
 */
export function explorerLink(signature: string, cluster: SolanaCluster, rpcUrl: string): string {
  const base = `https://explorer.solana.com/tx/${signature}`;
  if (cluster === 'mainnet-beta') return base;
  if (cluster === 'devnet') return `${base}?cluster=devnet`;
  return `${base}?cluster=custom&customUrl=${encodeURIComponent(new URL(rpcUrl).origin)}`;
}

/** `2026-11-27T10:00:00.000Z` → `2026-11-27` (documents are dated in UTC). */
const day = (iso: string) => iso.slice(0, 10);

/**
 * An invoice as its PDF shows it (`kind: 'invoice'`), or its receipt once Paid (`'receipt'`:
 * when and how it was paid, each payment's and refund's signature with its explorer link).
 */
export function invoiceDocument(
  kind: 'invoice' | 'receipt',
  invoice: CheckoutInvoiceRow,
  ledger: PaymentResponse[],
  chain: { cluster: SolanaCluster; rpcUrl: string; checkoutUrl: string },
): DocumentView {
  const money = (units: string) => displayAmount(formatUnits(units), invoice.mint);
  const facts: [string, string][] = [
    ['Issued', day(invoice.created_at)],
    ...(invoice.due_date ? [['Due', day(invoice.due_date)] as [string, string]] : []),
    ...(kind === 'receipt' && invoice.paid_at
      ? [['Paid', day(invoice.paid_at)] as [string, string]]
      : []),
    ['Status', invoice.status],
    ['Currency', `${invoice.mint} on Solana`],
  ];
  const lines = invoice.line_items.map((item) => ({
    description: item.description,
    quantity: String(item.quantity),
    unit: money(item.unitAmount),
    amount: money((BigInt(item.unitAmount) * BigInt(item.quantity)).toString()),
  }));
  const taxPercent = `${formatUnits(String(invoice.tax_bps), 2)}%`;
  const totals: [string, string][] = [
    ['Subtotal', money(invoice.subtotal)],
    [`Tax (${taxPercent})`, money(invoice.tax)],
    ['Total', money(invoice.total)],
    ['Paid', money(invoice.amount_paid)],
    ...(invoice.amount_credited !== '0'
      ? [['Credited', money(invoice.amount_credited)] as [string, string]]
      : []),
    ...(invoice.amount_refunded !== '0'
      ? [['Refunded', money(invoice.amount_refunded)] as [string, string]]
      : []),
    ...(invoice.amount_credited_to_balance !== '0'
      ? [['Credited to balance', money(invoice.amount_credited_to_balance)] as [string, string]]
      : []),
  ];
  totals.push(
    kind === 'receipt'
      ? ['Amount received', money(invoice.amount_paid)]
      : ['Amount due', money(invoice.amount_due)],
  );
  const transfers = ledger
    .filter((line) => line.signature !== null && line.status !== 'failed')
    .map((line) => ({
      label: line.kind === 'refund' ? 'Refund' : 'Payment',
      amount: displayAmount(line.amount.replace(/^-/, ''), invoice.mint),
      signature: line.signature!,
      link: explorerLink(line.signature!, chain.cluster, chain.rpcUrl),
    }));
  return {
    title: kind === 'receipt' ? 'Receipt' : 'Invoice',
    merchantName: invoice.merchant_name,
    number:
      kind === 'receipt'
        ? `${invoiceNumber(invoice.number)} (paid)`
        : invoiceNumber(invoice.number),
    facts,
    billedTo: [
      ...(invoice.customer_label ? [invoice.customer_label] : []),
      `Wallet ${invoice.customer_wallet}`,
    ],
    lines,
    totals,
    transfers,
    footer:
      kind === 'receipt'
        ? [
            `Paid in ${invoice.mint} on Solana to ${invoice.merchant_wallet}.`,
            'Each transaction above can be checked on the Solana explorer.',
          ]
        : [
            `Pay in ${invoice.mint} on Solana at ${chain.checkoutUrl}`,
            `Payments go to the merchant's wallet ${invoice.merchant_wallet}.`,
          ],
  };
}

/** What a credit note's action did, in words. */
const EFFECTS: Record<CreditNoteAction, string> = {
  reduce_due: 'Reduces the amount due on the invoice',
  refund: 'Refunded to the paying wallet',
  credit: "Credited to the customer's balance for the next invoice",
};

/** A credit note as its PDF shows it. */
export function creditNoteDocument(note: CreditNoteRow, invoice: CheckoutInvoiceRow): DocumentView {
  const money = (units: string) => displayAmount(formatUnits(units), note.mint);
  return {
    title: 'Credit note',
    merchantName: invoice.merchant_name,
    number: creditNoteNumber(note.number),
    facts: [
      ['Issued', day(note.created_at)],
      ['Invoice', invoiceNumber(invoice.number)],
      ['Reason', note.reason.replace(/_/g, ' ')],
      ['Effect', EFFECTS[note.action]],
      ['Currency', `${note.mint} on Solana`],
    ],
    billedTo: [
      ...(invoice.customer_label ? [invoice.customer_label] : []),
      `Wallet ${invoice.customer_wallet}`,
    ],
    lines: note.lines.map((item) => ({
      description: item.description,
      quantity: String(item.quantity),
      unit: money(item.unitAmount),
      amount: money((BigInt(item.unitAmount) * BigInt(item.quantity)).toString()),
    })),
    totals: [
      ['Subtotal', money(note.subtotal)],
      [`Tax (${formatUnits(String(invoice.tax_bps), 2)}%)`, money(note.tax)],
      ['Total credited', money(note.amount)],
    ],
    transfers: [],
    footer: note.memo ? [note.memo] : [],
  };
}

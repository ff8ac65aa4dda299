import { formatAmount, multiplyAmount, parseAmount } from '../common/money';

/** One line of the invoice as the API returns it. */
export interface InvoiceEmailLine {
  description: string;
  quantity: number;
  /** Canonical decimal string, e.g. `"9.99"`. */
  unitAmount: string;
}

/** What the invoice notification shows; amounts are canonical decimal strings (DESIGN D5). */
export interface InvoiceEmailInput {
  merchantName: string;
  /** `INV-000042` (D16). */
  invoiceNumber: string;
  /** The mint's symbol as the API writes it: `USDC`, `PYUSD`, `USDG`. */
  mint: string;
  lineItems: InvoiceEmailLine[];
  subtotal: string;
  /** Basis points, shown as a percentage next to the tax when given. */
  taxBps?: number;
  tax: string;
  total: string;
  /** ISO 8601 UTC, or null when the invoice has no due date. */
  dueDate: string | null;
  /** `${PUBLIC_BASE_URL}/checkout/invoices/:id`; must be http(s). */
  hostedCheckoutUrl: string;
  // No memo: it is the merchant's internal note (spec section 2), never shown to the customer.
}

/** A message ready for the outbox: a subject, a plain-text body and its HTML alternative. */
export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

/** Control characters and line separators become one space: single-line fields stay one line. */
function oneLine(text: string): string {
  return text
    .replace(/[\p{Cc}\u2028\u2029]+/gu, ' ')
    .replace(/ {2,}/g, ' ')
    .trim();
}

/** `2026-12-01 17:00 UTC`: one unambiguous form, whatever the reader's locale. */
function formatDue(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) throw new RangeError(`Invalid due date: ${iso}`);
  return `${date.toISOString().slice(0, 10)} ${date.toISOString().slice(11, 16)} UTC`;
}

/** 825 basis points -> `8.25%`, without floating point. */
function formatPercent(bps: number): string {
  return `${formatAmount(BigInt(bps), 2)}%`;
}

function checkoutUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new RangeError('The checkout link must be an http(s) URL');
  }
  return parsed.toString();
}

const BODY_STYLE =
  'margin:0;padding:24px;background:#f9fafb;color:#111827;' +
  "font-family:-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif";
const CARD_STYLE = 'max-width:600px;margin:0 auto;background:#ffffff;padding:24px';
const BUTTON_STYLE =
  'display:inline-block;padding:12px 20px;background:#111827;color:#ffffff;' +
  'text-decoration:none;border-radius:6px';
const SMALL_STYLE = 'margin:0;font-size:12px;color:#6b7280';
const CELL_STYLE = 'padding:6px 8px;border-bottom:1px solid #e5e7eb';

/** One table row; the first column is left-aligned, the figures right-aligned. */
function row(cells: string[], tag: 'td' | 'th' = 'td'): string {
  const html = cells.map((text, i) => {
    const align = i === 0 ? 'left' : 'right';
    return `<${tag} style="${CELL_STYLE};text-align:${align}">${escapeHtml(text)}</${tag}>`;
  });
  return `<tr>${html.join('')}</tr>`;
}

/**
 * The e-mail that tells a customer about a new invoice: who it is from, what it is for, how much,
 * by when, and the hosted checkout link. Pure: the caller enqueues the result in the transaction
 * that creates the invoice.
 *
 * Every value is the merchant's or the customer's text, so all of it is escaped in the HTML
 * (element content and attributes alike) and stripped of control characters where one line is
 * expected (the subject above all: no header injection). The HTML is self-contained (inline
 * styles; no images, fonts, scripts or other remote resources) and the text part says the same.
 * Line amounts are `quantity x unitAmount` in base units, never floats.
 *
 * @throws MoneyError for an amount that is not a canonical decimal string.
 * @throws RangeError for a due date that is not a date, or a checkout link that is not http(s).
 */
export function renderInvoiceEmail(input: InvoiceEmailInput): RenderedEmail {
  const merchant = oneLine(input.merchantName);
  const number = oneLine(input.invoiceNumber);
  const mint = oneLine(input.mint);
  const money = (amount: string) => `${formatAmount(parseAmount(amount))} ${mint}`;
  const lines = input.lineItems.map((line) => {
    const unit = parseAmount(line.unitAmount);
    return {
      description: oneLine(line.description),
      quantity: String(line.quantity),
      unit: `${formatAmount(unit)} ${mint}`,
      amount: `${formatAmount(multiplyAmount(unit, line.quantity))} ${mint}`,
    };
  });
  const taxLabel = input.taxBps === undefined ? 'Tax' : `Tax (${formatPercent(input.taxBps)})`;
  const totals: [string, string][] = [
    ['Subtotal', money(input.subtotal)],
    [taxLabel, money(input.tax)],
    ['Total', money(input.total)],
  ];
  const due = input.dueDate ? formatDue(input.dueDate) : null;
  const link = checkoutUrl(input.hostedCheckoutUrl);
  const subject = `Invoice ${number} from ${merchant}: ${money(input.total)}`;

  const text = [
    `${merchant} sent you invoice ${number}.`,
    '',
    `Amount due: ${money(input.total)}`,
    due ? `Due: ${due}` : 'No due date',
    '',
    'Items:',
    ...lines.map((l) => `- ${l.description}: ${l.quantity} x ${l.unit} = ${l.amount}`),
    '',
    ...totals.map(([label, value]) => `${label}: ${value}`),
    '',
    'Pay this invoice:',
    link,
    '',
    `You received this e-mail because ${merchant} issued an invoice to this address.`,
    '',
  ].join('\n');

  const e = escapeHtml;
  const rows = [
    row(['Item', 'Qty', 'Unit price', 'Amount'], 'th'),
    ...lines.map((l) => row([l.description, l.quantity, l.unit, l.amount])),
    ...totals.map(([label, value]) => row(['', '', label, value])),
  ];
  const html = [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${e(subject)}</title>`,
    '</head>',
    `<body style="${BODY_STYLE}">`,
    `<div style="${CARD_STYLE}">`,
    `<p style="margin:0 0 16px">${e(merchant)} sent you invoice <strong>${e(number)}</strong>.</p>`,
    `<p style="margin:0 0 4px;font-size:20px"><strong>${e(money(input.total))}</strong></p>`,
    `<p style="margin:0 0 24px;color:#4b5563">${due ? `Due ${e(due)}` : 'No due date'}</p>`,
    '<table role="presentation" style="width:100%;border-collapse:collapse;font-size:14px">',
    ...rows,
    '</table>',
    `<p style="margin:24px 0"><a href="${e(link)}" style="${BUTTON_STYLE}">Pay invoice</a></p>`,
    `<p style="${SMALL_STYLE};word-break:break-all">Or open this link: ` +
      `<a href="${e(link)}" style="color:#6b7280">${e(link)}</a></p>`,
    `<p style="${SMALL_STYLE};margin-top:16px">You received this e-mail because ${e(merchant)} ` +
      'issued an invoice to this address.</p>',
    '</div>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
  return { subject, text, html };
}

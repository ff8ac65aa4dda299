import { MoneyError } from '../common/money';
import { escapeHtml, InvoiceEmailInput, renderInvoiceEmail } from './invoice-email';

const INVOICE: InvoiceEmailInput = {
  merchantName: 'Acme',
  invoiceNumber: 'INV-000042',
  mint: 'USDC',
  lineItems: [
    { description: 'Consulting, November', quantity: 3, unitAmount: '120.5' },
    { description: 'Hosting', quantity: 1, unitAmount: '0.000001' },
  ],
  subtotal: '361.500001',
  taxBps: 825,
  tax: '29.823750',
  total: '391.323751',
  dueDate: '2026-12-01T17:00:00.000Z',
  hostedCheckoutUrl:
    'https://pay.example.com/checkout/invoices/3f1c2a9e-5b0d-4a51-9c43-0c8a8f6a2b7e',
};

/** The visible text of the HTML, tags removed and entities decoded (enough for these tests). */
function visible(html: string): string {
  return html
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

describe('renderInvoiceEmail', () => {
  it('says who, what, how much, by when and where to pay, in the subject, text and HTML', () => {
    const { subject, text, html } = renderInvoiceEmail(INVOICE);
    expect(subject).toBe('Invoice INV-000042 from Acme: 391.323751 USDC');
    expect(text).toBe(
      [
        'Acme sent you invoice INV-000042.',
        '',
        'Amount due: 391.323751 USDC',
        'Due: 2026-12-01 17:00 UTC',
        '',
        'Items:',
        '- Consulting, November: 3 x 120.5 USDC = 361.5 USDC',
        '- Hosting: 1 x 0.000001 USDC = 0.000001 USDC',
        '',
        'Subtotal: 361.500001 USDC',
        'Tax (8.25%): 29.82375 USDC',
        'Total: 391.323751 USDC',
        '',
        'Pay this invoice:',
        INVOICE.hostedCheckoutUrl,
        '',
        'You received this e-mail because Acme issued an invoice to this address.',
        '',
      ].join('\n'),
    );
    const shown = visible(html);
    for (const part of [
      'Acme sent you invoice INV-000042',
      '391.323751 USDC',
      'Due 2026-12-01 17:00 UTC',
      'Consulting, November',
      '120.5 USDC',
      '361.5 USDC',
      'Tax (8.25%)',
      '29.82375 USDC',
      INVOICE.hostedCheckoutUrl,
    ]) {
      expect(shown).toContain(part);
    }
    expect(html).toContain(`<a href="${INVOICE.hostedCheckoutUrl}"`);
    expect(html.startsWith('<!doctype html>')).toBe(true);
  });

  it('multiplies line amounts in base units, never in floating point', () => {
    // 0.1 x 3 is 0.30000000000000004 in floating point.
    const { text } = renderInvoiceEmail({
      ...INVOICE,
      lineItems: [{ description: 'Tea', quantity: 3, unitAmount: '0.1' }],
    });
    expect(text).toContain('- Tea: 3 x 0.1 USDC = 0.3 USDC');
    const big = renderInvoiceEmail({
      ...INVOICE,
      lineItems: [{ description: 'Big', quantity: 1000, unitAmount: '9007199254.740993' }],
    });
    expect(big.text).toContain('= 9007199254740.993 USDC');
  });

  it('writes amounts canonically and refuses what is not a decimal string', () => {
    expect(renderInvoiceEmail({ ...INVOICE, total: '10.500000' }).subject).toBe(
      'Invoice INV-000042 from Acme: 10.5 USDC',
    );
    expect(() => renderInvoiceEmail({ ...INVOICE, total: '1e3' })).toThrow(MoneyError);
    expect(() => renderInvoiceEmail({ ...INVOICE, tax: '-1' })).toThrow(MoneyError);
  });

  it('without a due date or a tax rate', () => {
    const { text, html } = renderInvoiceEmail({ ...INVOICE, dueDate: null, taxBps: undefined });
    expect(text).toContain('\nNo due date\n');
    expect(text).toContain('\nTax: 29.82375 USDC\n');
    expect(visible(html)).toContain('No due date');
  });

  it('escapes markup in descriptions and the merchant name', () => {
    const attack = '<script>alert(1)</script><img src=x onerror="alert(2)">';
    const { html, text } = renderInvoiceEmail({
      ...INVOICE,
      merchantName: `Evil "Corp" & <b>Sons</b>'`,
      lineItems: [{ description: attack, quantity: 1, unitAmount: '1' }],
    });
    expect(html).not.toMatch(/<script|<img|<b>|onerror="|<a href="https:\/\/phish/i);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('Evil &quot;Corp&quot; &amp; &lt;b&gt;Sons&lt;/b&gt;&#39;');
    expect(visible(html)).toContain(attack);
    // The only links are the checkout link.
    expect([...html.matchAll(/<a href="([^"]*)"/g)].map((m) => m[1])).toEqual([
      INVOICE.hostedCheckoutUrl,
      INVOICE.hostedCheckoutUrl,
    ]);
    // Plain text is not HTML: it carries the text as written.
    expect(text).toContain(attack);
  });

  it('loads nothing remote: no images, stylesheets, fonts or scripts', () => {
    const { html } = renderInvoiceEmail(INVOICE);
    expect(html).not.toMatch(/<(img|script|link|iframe|object|embed|style)\b/i);
    expect(html).not.toMatch(/url\(|@import|src=/i);
  });

  it('keeps the subject on one line whatever the names hold (no header injection)', () => {
    const { subject, text } = renderInvoiceEmail({
      ...INVOICE,
      merchantName: 'Acme\r\nBcc: victim@example.com\u2028X',
      invoiceNumber: 'INV-000042\n',
    });
    expect(subject).toBe('Invoice INV-000042 from Acme Bcc: victim@example.com X: 391.323751 USDC');
    expect(subject).not.toMatch(/[\r\n\u2028]/);
    expect(text.split('\n')[0]).toBe('Acme Bcc: victim@example.com X sent you invoice INV-000042.');
  });

  it('escapes the checkout link in its attribute and refuses one that is not http(s)', () => {
    const { html } = renderInvoiceEmail({
      ...INVOICE,
      hostedCheckoutUrl: 'https://pay.example.com/checkout/invoices/1?a=1&b="x"',
    });
    expect(html).toContain('href="https://pay.example.com/checkout/invoices/1?a=1&amp;b=%22x%22"');
    expect(() =>
      renderInvoiceEmail({ ...INVOICE, hostedCheckoutUrl: 'javascript:alert(1)' }),
    ).toThrow(RangeError);
    expect(() => renderInvoiceEmail({ ...INVOICE, hostedCheckoutUrl: 'not a url' })).toThrow();
  });

  it('refuses a due date that is not a date', () => {
    expect(() => renderInvoiceEmail({ ...INVOICE, dueDate: 'tomorrow' })).toThrow(RangeError);
  });
});

describe('escapeHtml', () => {
  it('escapes the five characters that matter in content and quoted attributes', () => {
    expect(escapeHtml(`<a href="x" title='y'>&amp;</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;',
    );
    expect(escapeHtml('plain text, ünïcode ✓')).toBe('plain text, ünïcode ✓');
  });
});

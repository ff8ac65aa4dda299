import { invoiceNumber } from '../src/invoices/invoice.mapper';
import { createTestApp, TestApp } from './helpers/test-app';

/** The SQL function the invoice list and search use says exactly what the API shows. */
describe('SQL twin of the invoice number', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('invoice_number(n) = invoiceNumber(n), past six digits too', async () => {
    const numbers = [1, 9, 42, 99_999, 999_999, 1_000_000, 1_234_567, 2_147_483_647];
    const rows = await t.sql<{ n: number; s: string }>(
      'SELECT n, invoice_number(n) AS s FROM unnest($1::int[]) AS n',
      [numbers],
    );
    expect(rows.map((r) => r.s)).toEqual(numbers.map(invoiceNumber));
  });
});

import { randomUUID } from 'node:crypto';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';

interface Line {
  id: string;
  invoice_id: string | null;
  subscription_id: string | null;
  customer_id: string | null;
  status: string;
  kind: string;
}

/**
 * The payments ledger's filters (issue 22: the list is one typed statement per way in, by the
 * merchant's, the invoice's or the subscription's index, the other filters optional): every
 * combination answers what filtering the whole ledger would, newest first, and never another
 * merchant's line.
 */
describe('GET /api/payments filters', () => {
  let t: TestApp;
  let m: TestMerchant;
  const invoices = [randomUUID(), randomUUID()];
  const subscriptions = [randomUUID(), randomUUID()];
  const customers = [randomUUID(), randomUUID()];
  const lines: Line[] = [];

  beforeAll(async () => {
    t = await createTestApp();
    m = await t.createMerchant('Ledger');
    const other = await t.createMerchant('Other');
    for (let i = 0; i < 24; i++) {
      const kind = ['invoice', 'subscription', 'unattributed'][i % 3];
      const line: Line = {
        id: randomUUID(),
        kind,
        status: ['confirmed', 'finalized', 'failed'][Math.floor(i / 3) % 3],
        invoice_id: kind === 'invoice' ? invoices[i % 2] : null,
        // Lines carrying both an invoice and a subscription: the invoice's way in, narrowed.
        subscription_id:
          kind === 'subscription' || i % 4 === 0 ? subscriptions[(i >> 1) % 2] : null,
        customer_id: kind === 'unattributed' ? null : customers[(i >> 2) % 2],
      };
      lines.unshift(line); // newest first
      for (const merchant of i === 5 ? [m, other] : [m]) {
        await t.sql(
          `INSERT INTO payments (id, created_at, updated_at, merchant_id, kind, status, customer_id,
             invoice_id, subscription_id, period, signature, mint, amount, fee, "references",
             excess, slot)
           VALUES ($1::uuid, $2, $2, $3, $4, $5, $6, $7, $8, 1, $1::uuid::text, 'USDC', 1500000,
             10, '{r1,r2}', 0, 42)`,
          [
            merchant === m ? line.id : randomUUID(),
            new Date(Date.UTC(2026, 10, 1, 0, 0, i, 5)),
            merchant.id,
            line.kind,
            line.status,
            line.customer_id,
            line.invoice_id,
            line.subscription_id,
          ],
        );
      }
    }
  });
  afterAll(() => t.close());

  it('renders a line whole', async () => {
    const res = await t.http.get('/api/payments').set(m.auth).expect(200);
    expect(res.body).toHaveLength(lines.length);
    expect(res.body[0]).toMatchObject({
      id: lines[0].id,
      amount: '1.5',
      fee: '0.00001',
      excess: '0',
      references: ['r1', 'r2'],
      mint: 'USDC',
      period: 1,
      slot: 42,
      createdAt: '2026-11-01T00:00:23.005Z',
      updatedAt: '2026-11-01T00:00:23.005Z',
      finalizedAt: null,
    });
  });

  it('answers every combination of filters as filtering the whole ledger would', async () => {
    const choices = {
      invoiceId: [undefined, ...invoices],
      subscriptionId: [undefined, ...subscriptions],
      customerId: [undefined, customers[0]],
      status: [undefined, 'finalized'],
      kind: [undefined, 'invoice'],
    };
    const column = {
      invoiceId: 'invoice_id',
      subscriptionId: 'subscription_id',
      customerId: 'customer_id',
      status: 'status',
      kind: 'kind',
    } as const;
    let combinations: Record<string, string>[] = [{}];
    for (const [name, values] of Object.entries(choices)) {
      combinations = combinations.flatMap((query) =>
        values.map((value) => (value === undefined ? query : { ...query, [name]: value })),
      );
    }
    let nonEmpty = 0;
    for (const query of combinations) {
      const expected = lines
        .filter((line) =>
          Object.entries(query).every(
            ([name, value]) => line[column[name as keyof typeof column]] === value,
          ),
        )
        .map((line) => line.id);
      const res = await t.http.get('/api/payments').query(query).set(m.auth).expect(200);
      expect([query, res.body.map((line: { id: string }) => line.id)]).toEqual([query, expected]);
      if (expected.length > 0) nonEmpty++;
    }
    expect(nonEmpty).toBeGreaterThan(20);
  });
});

import { ChainCursorsRepository } from '../src/billing/repositories/chain-cursors.repository';
import { InvoiceWatchRepository } from '../src/billing/repositories/invoice-watch.repository';
import type { Db } from '../src/database/db';
import { withoutNullabilityHints } from '../src/database/pg-transaction';
import { type PlanNode, planNodes } from './helpers/query-plans';
import { createTestApp, randomWallet, TestApp, TestMerchant } from './helpers/test-app';

/**
 * The invoice watcher's reads follow what is due, not what exists (the production issue): the
 * overdue sweep reads its own partial index (Open invoices not yet marked), not every overdue
 * invoice marked already; "merchants without cursors", run on every sweep, reads no invoice of a
 * merchant whose receiving accounts have their cursors. Each statement is the repository's own,
 * under `EXPLAIN ANALYZE`.
 */
describe('Background reads proportional to what is due', () => {
  let t: TestApp;
  let m: TestMerchant;

  beforeAll(async () => {
    t = await createTestApp();
    m = await t.createMerchant('Busy');
    const [customer] = await t.sql<{ id: string }>(
      `INSERT INTO customers (id, merchant_id, wallet_address, created_at, updated_at)
       VALUES (gen_random_uuid(), $1, $2, now(), now()) RETURNING id`,
      [m.id, randomWallet()],
    );
    // 3 000 Open invoices overdue and marked, 10 overdue not yet marked, 2 000 due ahead.
    await t.sql(
      `INSERT INTO invoices (id, merchant_id, customer_id, number, status, onchain_id, mint,
         line_items, subtotal, tax_bps, tax, total, amount_paid, due_date, overdue_at,
         created_at, updated_at)
       SELECT gen_random_uuid(), $1::uuid, $2, g, 'Open', md5($1::text || g), 'USDC',
              '[{"description":"Work","quantity":1,"unitAmount":"1000000"}]', 1000000, 0, 0,
              1000000, 0,
              CASE WHEN g <= 3010 THEN now() - interval '2 days' ELSE now() + interval '9 days' END,
              CASE WHEN g <= 3000 THEN now() - interval '1 day' END,
              now() - interval '3 days', now() - interval '3 days'
         FROM generate_series(1, 5010) g`,
      [m.id, customer.id],
    );
    await t.sql('ANALYZE invoices');
  });
  afterAll(() => t.close());

  /** The statement `run` makes its repository run, under EXPLAIN ANALYZE: its plan's nodes. */
  async function planOf(run: (db: Db) => Promise<unknown>): Promise<PlanNode[]> {
    let seen: { text: string; values: unknown[] } | undefined;
    const db = {
      query: (text: string, values: unknown[]) => {
        seen = { text: withoutNullabilityHints(text), values };
        return Promise.resolve({ rows: [], rowCount: 0 });
      },
    } as unknown as Db;
    await run(db);
    const [{ 'QUERY PLAN': plan }] = await t.sql<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${seen!.text}`,
      seen!.values,
    );
    return planNodes(plan[0].Plan);
  }

  it('the overdue sweep reads the invoices not yet marked, through their own index', async () => {
    const plan = await planOf((db) => new InvoiceWatchRepository(db).newlyOverdue(new Date(), 500));
    expect(plan[0]['Actual Rows']).toBe(10);
    const scans = plan.filter((node) => node['Relation Name'] === 'invoices');
    expect(scans.map((node) => node['Index Name'])).toEqual(['invoices_newly_overdue_idx']);
    // The index holds what is due: the scan returns those ten, not the 3 000 marked.
    expect(scans[0]['Actual Rows']).toBe(10);
  });

  it('merchants without cursors reads no invoice of a merchant that has its cursors', async () => {
    const missing = (db: Db) => new ChainCursorsRepository(db).merchantsWithoutCursors(3);
    // Without cursors, the merchant is found (its Open invoices are read for their first slot).
    let plan = await planOf(missing);
    expect(plan[0]['Actual Rows']).toBe(1);
    await t.sql(
      `INSERT INTO chain_cursors (address, kind, merchant_id, mint, updated_at)
       SELECT $2::text || mint, 'merchant_account', $1::uuid, mint, now()
         FROM unnest(ARRAY['USDC', 'PYUSD', 'USDG']) mint`,
      [m.id, randomWallet().slice(0, 30)],
    );
    plan = await planOf(missing);
    expect(plan[0]['Actual Rows']).toBe(0);
    const invoiceReads = plan.filter((node) => node['Relation Name'] === 'invoices');
    expect(invoiceReads.length).toBeGreaterThan(0);
    for (const node of invoiceReads) expect(node['Actual Loops']).toBe(0); // never executed
  });
});

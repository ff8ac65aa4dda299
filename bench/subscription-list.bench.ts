/**
 * The subscription list's rendering (issue 22, "each response shape is rendered in one place"):
 * `node scripts/run-ts.js bench/subscription-list.bench.ts`. A 10 000-row list rendered as JSON
 * text, in alternating rounds (this machine is shared; alternation keeps its drift out of the
 * ratio), by:
 * - A, before: hand-concatenated text from array rows (the list's own serializer, a second
 *   definition of the response, copied here as it was);
 * - B, now: `JSON.stringify` of the mapper's object (`toSubscriptionResponse`), from the object
 *   rows pgtyped's cursor hands over.
 * - B + scan: B after the scan pgtyped's runtime makes of every row it returns (each column name
 *   checked for a `!`/`?` hint to strip), copied here: what the cursor's object rows add.
 * Rendering only: the rows are made in memory, no database (pg's parse of a row into an object
 * rather than an array is not measured).
 */
import { formatUnits } from '../src/common/money';
import { toSubscriptionResponse } from '../src/subscriptions/subscription.mapper';
import type { SubscriptionListRow } from '../src/subscriptions/subscriptions.repository';

const ROWS = Number(process.env.BENCH_ROWS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);

const objects: SubscriptionListRow[] = Array.from({ length: ROWS }, (_, i) => ({
  id: `c4f1e2d3-b4a5-4968-8776-${String(i).padStart(12, '0')}`,
  plan_id: '5d0c2a9e-1b4f-4e8a-9a43-7c6f1e2d3b4a',
  customer_id: `3f1c2a9e-5b0d-4a51-9c43-${String(i).padStart(12, '0')}`,
  status: i % 3 === 0 ? 'PastDue' : 'Active',
  current_period_end: '2026-12-24T10:15:30.123Z',
  cancelled_at: null,
  revoked_at: i % 7 === 0 ? '2026-11-24T10:15:30.123Z' : null,
  last_charge_at: '2026-11-24T10:15:30.123Z',
  failure_reason: i % 3 === 0 ? 'insufficient_funds' : null,
  onchain_address: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin',
  created_at: '2026-11-24T10:15:30.123Z',
  updated_at: '2026-11-24T10:15:30.123Z',
  p_label: 'Pro monthly',
  p_amount: '9990000',
  p_mint: 'USDC',
  p_interval_seconds: 2_592_000,
  c_wallet_address: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin',
  c_label: i % 2 === 0 ? 'Ada Lovelace' : null,
}));

/** The array rows of the list before, in its column order. */
const C = {
  id: 0,
  planId: 1,
  customerId: 2,
  status: 3,
  currentPeriodEnd: 4,
  cancelledAt: 5,
  lastChargeAt: 6,
  failureReason: 7,
  onchainAddress: 8,
  planLabel: 9,
  planAmount: 10,
  planMint: 11,
  planIntervalSeconds: 12,
  customerWalletAddress: 13,
  customerLabel: 14,
  createdAt: 15,
  updatedAt: 16,
  revokedAt: 17,
};
const arrays: unknown[][] = objects.map((o) => [
  o.id,
  o.plan_id,
  o.customer_id,
  o.status,
  o.current_period_end,
  o.cancelled_at,
  o.last_charge_at,
  o.failure_reason,
  o.onchain_address,
  o.p_label,
  o.p_amount,
  o.p_mint,
  o.p_interval_seconds,
  o.c_wallet_address,
  o.c_label,
  o.created_at,
  o.updated_at,
  o.revoked_at,
]);

const text = (value: unknown): string => (value === null ? 'null' : JSON.stringify(value));
const plain = (value: unknown): string => (value === null ? 'null' : `"${value as string}"`);

/** A: the list's hand-concatenated serializer before (subscription-list.ts, as it was). */
function before(r: unknown[]): string {
  return (
    `{"id":"${r[C.id] as string}","planId":"${r[C.planId] as string}",` +
    `"customerId":"${r[C.customerId] as string}","status":"${r[C.status] as string}",` +
    `"currentPeriodEnd":${plain(r[C.currentPeriodEnd])},"cancelledAt":${plain(r[C.cancelledAt])},` +
    `"cancelAtPeriodEnd":${r[C.revokedAt] !== null && r[C.status] === 'Active'},` +
    `"customerCancelledAt":${plain(r[C.revokedAt])},"lastChargeAt":${plain(r[C.lastChargeAt])},` +
    `"failureReason":${text(r[C.failureReason])},"onchainAddress":${plain(r[C.onchainAddress])},` +
    `"plan":{"id":"${r[C.planId] as string}","label":${text(r[C.planLabel])},` +
    `"amount":"${formatUnits(r[C.planAmount] as string)}","mint":"${r[C.planMint] as string}",` +
    `"intervalSeconds":${r[C.planIntervalSeconds] as number}},` +
    `"customer":{"id":"${r[C.customerId] as string}",` +
    `"walletAddress":"${r[C.customerWalletAddress] as string}","label":${text(r[C.customerLabel])}},` +
    `"createdAt":"${r[C.createdAt] as string}","updatedAt":"${r[C.updatedAt] as string}"}`
  );
}

/** pgtyped's `mapQueryResultRows` (runtime/lib/tag.js), as it runs on each batch. */
function pgtypedScan(rows: Record<string, unknown>[]): void {
  for (const row of rows) {
    for (const column in row) {
      const last = column[column.length - 1];
      if (last === '!' || last === '?') {
        row[column.slice(0, -1)] = row[column];
        delete row[column];
      }
    }
  }
}

const variants: [string, () => string][] = [
  ['A hand-concatenated, array rows', () => arrays.map(before).join(',')],
  [
    'B JSON.stringify(mapper), object rows',
    () => objects.map((row) => JSON.stringify(toSubscriptionResponse(row))).join(','),
  ],
  [
    'B + scan',
    () => {
      pgtypedScan(objects);
      return objects.map((row) => JSON.stringify(toSubscriptionResponse(row))).join(',');
    },
  ],
];

if (variants[0][1]() !== variants[1][1]()) throw new Error('A and B render different text');
const times = new Map<string, number[]>(variants.map(([name]) => [name, []]));
let sink = 0;
for (let round = 0; round < ROUNDS; round++) {
  // Each round in another order: A, B, B + scan; then B, B + scan, A; then B + scan, A, B.
  const order = variants.map((_, i) => variants[(i + round) % variants.length]);
  for (const [name, render] of order) {
    const start = process.hrtime.bigint();
    sink += render().length;
    times.get(name)?.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = median(times.get(variants[0][0]) ?? []);
for (const [name, ms] of times) {
  const m = median(ms);
  console.log(
    `${name}: median ${m.toFixed(2)} ms per ${ROWS} rows (min ${Math.min(...ms).toFixed(2)}), ` +
      `${(m / base).toFixed(2)}x A`,
  );
}
console.log(`(${ROUNDS} alternating rounds; ${sink} characters rendered)`);

/**
 * Money (DESIGN D5, D10): amounts cross the API as decimal strings and live everywhere else as
 * integer base units (`bigint`), never floats. The three stablecoins have 6 decimals. This is the
 * one place that parses, prints, sums, multiplies, rounds and bounds them.
 *
 * Bounds: an amount is stored in a PostgreSQL `bigint` column (signed 64-bit) and sent on-chain as
 * a u64. The smaller of the two, 2^63 - 1 base units (9 223 372 036 854.775807 tokens), is the
 * largest amount the service accepts or computes; anything beyond is a `MoneyRangeError`, which
 * the API answers with 400, never letting it reach the database or the chain.
 */

/** Fraction digits of every amount the service handles. */
export const MONEY_DECIMALS = 6;
/** Largest amount in base units: PostgreSQL's bigint (2^63 - 1), below the chain's u64. */
export const MAX_AMOUNT_UNITS = 9_223_372_036_854_775_807n;
/** The chain's own limit (u64), for reference: never reached, the database's is lower. */
export const U64_MAX = 18_446_744_073_709_551_615n;
/** Basis points in a whole (10 000 = 100 %). */
export const BPS_DENOMINATOR = 10_000n;

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/** An amount that is not a decimal string, or is out of range. */
export class MoneyError extends RangeError {
  constructor(message: string) {
    super(message);
    this.name = 'MoneyError';
  }
}

/** An amount or a computed total beyond `MAX_AMOUNT_UNITS`. */
export class MoneyRangeError extends MoneyError {
  constructor(what = 'the amount') {
    super(`${what} exceeds the largest supported amount (${formatAmount(MAX_AMOUNT_UNITS)})`);
    this.name = 'MoneyRangeError';
  }
}

/**
 * Why `value` is not an acceptable decimal amount, or null when it is one: a string of digits
 * with an optional fraction of at most 6 digits, no sign, no exponent, no spaces, within bounds.
 */
export function amountProblem(value: unknown, decimals = MONEY_DECIMALS): string | null {
  if (typeof value !== 'string') return 'must be a decimal string, e.g. "9.99"';
  const match = DECIMAL.exec(value);
  if (!match) return 'must be a decimal string with no sign or exponent, e.g. "9.99"';
  if ((match[2] ?? '').length > decimals) return `must have at most ${decimals} decimal places`;
  if (unitsOf(match[1], match[2] ?? '', decimals) > MAX_AMOUNT_UNITS) {
    return `must be at most ${formatAmount(MAX_AMOUNT_UNITS, decimals)}`;
  }
  return null;
}

/** "9.99" → 9990000n. @throws MoneyError when the string is not an acceptable amount. */
export function parseAmount(value: string, decimals = MONEY_DECIMALS): bigint {
  const problem = amountProblem(value, decimals);
  if (problem) throw new MoneyError(`Amount ${JSON.stringify(value)} ${problem}`);
  const [whole, fraction = ''] = value.split('.');
  return unitsOf(whole, fraction, decimals);
}

/** 9990000n → "9.99": canonical, with no trailing zeros and no trailing dot. */
export function formatAmount(units: bigint, decimals = MONEY_DECIMALS): string {
  if (units < 0n) throw new MoneyError('Amounts are never negative');
  return formatUnits(units.toString(), decimals);
}

/**
 * An amount as people read it on a page or a document (never in the API, which keeps the
 * canonical `formatAmount`): the API's decimal string (`"1200"`, `"500.65625"`) with thousands
 * grouped by commas and at least two decimals, more only when the amount has them (up to the
 * mint's six), then the mint: `"1,200.00 USDC"`, `"500.65625 USDC"`, `"0.000001 USDC"`.
 * @throws MoneyError unless `amount` is a canonical amount string.
 */
export function displayAmount(amount: string, mint?: string): string {
  const problem = amountProblem(amount, MONEY_DECIMALS);
  if (problem) throw new MoneyError(`Amount ${JSON.stringify(amount)} ${problem}`);
  const [whole, fraction = ''] = amount.split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const shown = `${grouped}.${fraction.padEnd(2, '0')}`;
  return mint ? `${shown} ${mint}` : shown;
}

const DIGITS = /^\d+$/;

/**
 * `formatAmount` of base units given as their decimal digits (`"9990000"` → `"9.99"`), as
 * PostgreSQL returns a `bigint` column as text: the same string without a detour through BigInt
 * (a 10,000-invoice list formats 110,000 amounts).
 * @throws MoneyError unless `digits` is one or more decimal digits.
 */
export function formatUnits(digits: string, decimals = MONEY_DECIMALS): string {
  if (!DIGITS.test(digits)) throw new MoneyError(`Not a number of base units: ${digits}`);
  const padded = digits.length > decimals ? digits : digits.padStart(decimals + 1, '0');
  let start = 0;
  const end = padded.length - decimals;
  while (start < end - 1 && padded.charCodeAt(start) === 48) start++; // leading zeros
  let stop = padded.length;
  while (stop > end && padded.charCodeAt(stop - 1) === 48) stop--; // trailing zeros
  const whole = padded.slice(start, end);
  return stop > end ? `${whole}.${padded.slice(end, stop)}` : whole;
}

/**
 * `formatUnits` of a ledger amount that may be negative (a refund's line: money that left the
 * merchant): `"-1500000"` → `"-1.5"`. Only the ledger's signed amounts go through here.
 */
export function formatSignedUnits(digits: string, decimals = MONEY_DECIMALS): string {
  return digits.startsWith('-')
    ? `-${formatUnits(digits.slice(1), decimals)}`
    : formatUnits(digits, decimals);
}

/** @throws MoneyRangeError when `units` is negative or beyond `MAX_AMOUNT_UNITS`. */
export function assertAmountInRange(units: bigint, what?: string): bigint {
  if (units < 0n) throw new MoneyError(`${what ?? 'the amount'} is negative`);
  if (units > MAX_AMOUNT_UNITS) throw new MoneyRangeError(what);
  return units;
}

/** The sum of amounts, bounded. */
export function sumAmounts(amounts: Iterable<bigint>, what = 'the sum'): bigint {
  let total = 0n;
  for (const amount of amounts) total += amount;
  return assertAmountInRange(total, what);
}

/** `units` x a whole quantity (a line item), bounded. */
export function multiplyAmount(units: bigint, quantity: number | bigint, what?: string): bigint {
  const q = BigInt(quantity);
  if (q < 0n) throw new MoneyError('a quantity is never negative');
  return assertAmountInRange(units * q, what);
}

/** Tax of `taxBps` basis points on `subtotal`, rounded half up to the base unit. */
export function taxHalfUp(subtotal: bigint, taxBps: number | bigint): bigint {
  const bps = BigInt(taxBps);
  if (bps < 0n || bps > BPS_DENOMINATOR) throw new MoneyError('taxBps must be 0..10000');
  return (subtotal * bps + BPS_DENOMINATOR / 2n) / BPS_DENOMINATOR;
}

/** A line item's price: a quantity of a unit amount. */
export interface PricedLine {
  quantity: number;
  unitAmount: bigint;
}

/**
 * An invoice's totals (DESIGN D10): `subtotal = sum(quantity x unitAmount)`,
 * `tax = half-up(subtotal x taxBps / 10000)`, `total = subtotal + tax`, each bounded.
 * @throws MoneyRangeError when any of them exceeds the largest supported amount.
 */
export function invoiceTotals(
  lines: PricedLine[],
  taxBps: number,
): { subtotal: bigint; tax: bigint; total: bigint } {
  const subtotal = sumAmounts(
    lines.map((line, i) => multiplyAmount(line.unitAmount, line.quantity, `line ${i + 1}`)),
    'the subtotal',
  );
  const tax = taxHalfUp(subtotal, taxBps);
  return { subtotal, tax, total: sumAmounts([subtotal, tax], 'the total') };
}

function unitsOf(whole: string, fraction: string, decimals: number): bigint {
  return BigInt(whole + fraction.padEnd(decimals, '0'));
}

/** A meter's terms (docs/usage.md): quantities in millionths of a unit, amounts in base units. */
export interface MeterTerms {
  /** The price of one block of `unitSize` units. */
  unitPrice: bigint;
  unitSize: bigint;
  includedUnits: bigint;
  /** The most a period's usage is charged. */
  cap: bigint;
}

/** What a period's usage comes to under a meter, and what of it is charged. */
export interface MeteredCharge {
  /** Units beyond the included ones (millionths). */
  billableUnits: bigint;
  /** Priced blocks: a started block counts whole. */
  blocks: bigint;
  /** The usage's price before the cap (bounded to the largest amount). */
  usageAmount: bigint;
  /** What is charged: `usageAmount` up to the cap. */
  charged: bigint;
  capped: boolean;
}

/**
 * `units` of usage (millionths of a unit) under `terms`: the units beyond the included ones, in
 * blocks of `unitSize` (rounded up), each at `unitPrice`, charged up to `cap`. Exact integers.
 */
export function meteredCharge(terms: MeterTerms, units: bigint): MeteredCharge {
  if (units < 0n) throw new MoneyError('usage is never negative');
  if (terms.unitSize <= 0n) throw new MoneyError('a block of units is never empty');
  const billableUnits = units > terms.includedUnits ? units - terms.includedUnits : 0n;
  const blocks = (billableUnits + terms.unitSize - 1n) / terms.unitSize;
  const price = blocks * terms.unitPrice;
  const usageAmount = price > MAX_AMOUNT_UNITS ? MAX_AMOUNT_UNITS : price;
  const capped = price > terms.cap;
  return { billableUnits, blocks, usageAmount, charged: capped ? terms.cap : price, capped };
}

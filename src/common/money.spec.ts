import {
  displayAmount,
  amountProblem,
  assertAmountInRange,
  formatAmount,
  formatUnits,
  invoiceTotals,
  MAX_AMOUNT_UNITS,
  meteredCharge,
  MoneyError,
  MoneyRangeError,
  multiplyAmount,
  parseAmount,
  sumAmounts,
  taxHalfUp,
  U64_MAX,
} from './money';

describe('money', () => {
  describe('parse', () => {
    it.each([
      ['9.99', 9_990_000n],
      ['1', 1_000_000n],
      ['0.000001', 1n],
      ['0.64625', 646_250n],
      ['007.50', 7_500_000n],
      ['0', 0n],
      ['9223372036854.775807', MAX_AMOUNT_UNITS],
    ])('%s is %s base units', (decimal, units) => {
      expect(parseAmount(decimal)).toBe(units);
    });

    it.each([
      '-1',
      '+1',
      '1e6',
      '1.',
      '.5',
      ' 1',
      '1 ',
      '1,5',
      '',
      '1.0000001',
      'NaN',
      '0x10',
      '١',
    ])('rejects %j', (bad) => {
      expect(amountProblem(bad)).not.toBeNull();
      expect(() => parseAmount(bad)).toThrow(MoneyError);
    });

    it('rejects what the database column cannot hold, one base unit past the bound and u64', () => {
      expect(amountProblem('9223372036854.775808')).toBe('must be at most 9223372036854.775807');
      expect(amountProblem(formatAmount(U64_MAX))).toMatch(/at most/);
      expect(amountProblem('1' + '0'.repeat(40))).toMatch(/at most/);
      expect(() => parseAmount('9223372036854.775808')).toThrow(MoneyError);
    });

    it('rejects non-strings with a message that says so', () => {
      for (const value of [9.99, 1n, null, undefined, {}, ['1']]) {
        expect(amountProblem(value)).toBe('must be a decimal string, e.g. "9.99"');
      }
    });
  });

  describe('format', () => {
    it.each([
      [9_990_000n, '9.99'],
      [1_000_000n, '1'],
      [1n, '0.000001'],
      [10n, '0.00001'],
      [646_250n, '0.64625'],
      [0n, '0'],
      [100_000_000n, '100'],
      [MAX_AMOUNT_UNITS, '9223372036854.775807'],
    ])('%s base units print canonically as %s', (units, decimal) => {
      expect(formatAmount(units)).toBe(decimal);
    });

    it('refuses negative amounts', () => {
      expect(() => formatAmount(-1n)).toThrow(MoneyError);
    });

    it('formatUnits of the digits (as PostgreSQL returns a bigint) says what formatAmount says', () => {
      const values = [
        0n,
        1n,
        9n,
        10n,
        999_999n,
        1_000_000n,
        1_000_001n,
        10_500_000n,
        MAX_AMOUNT_UNITS,
      ];
      for (let units = 0n; units < 3_000_000n; units += 99_991n) values.push(units);
      for (const units of values) expect(formatUnits(units.toString())).toBe(formatAmount(units));
      expect(formatUnits('0000001')).toBe('0.000001'); // leading zeros are tolerated
      expect(formatUnits('00')).toBe('0');
      for (const bad of ['', '-1', '1.5', ' 1', '1e3', 'abc']) {
        expect(() => formatUnits(bad)).toThrow(MoneyError);
      }
    });

    it('round-trips every fraction length and the bounds', () => {
      for (const s of ['1.1', '1.12', '1.123', '1.1234', '1.12345', '1.123456', '0.000001']) {
        expect(formatAmount(parseAmount(s))).toBe(s);
      }
      for (let units = 0n; units < 2_000n; units += 7n) {
        expect(parseAmount(formatAmount(units))).toBe(units);
      }
    });
  });

  describe('arithmetic', () => {
    it('sums and multiplies exactly, within bounds', () => {
      expect(sumAmounts([1n, 2n, 3n])).toBe(6n);
      expect(sumAmounts([])).toBe(0n);
      expect(multiplyAmount(9_990_000n, 3)).toBe(29_970_000n);
      expect(multiplyAmount(1n, 1_000_000)).toBe(1_000_000n);
      expect(() => sumAmounts([MAX_AMOUNT_UNITS, 1n])).toThrow(MoneyRangeError);
      expect(() => multiplyAmount(MAX_AMOUNT_UNITS, 2)).toThrow(MoneyRangeError);
      expect(() => multiplyAmount(1n, -1)).toThrow(MoneyError);
      expect(assertAmountInRange(MAX_AMOUNT_UNITS)).toBe(MAX_AMOUNT_UNITS);
      expect(() => assertAmountInRange(-1n)).toThrow(MoneyError);
    });

    it.each([
      // subtotal, bps, tax: half up at exactly .5 of a base unit, down below it
      [1_000_000n, 0, 0n],
      [1_000_000n, 10_000, 1_000_000n],
      [1_000_000n, 825, 82_500n],
      [1n, 5_000, 1n], // 0.5 -> 1
      [1n, 4_999, 0n], // 0.4999 -> 0
      [3n, 5_000, 2n], // 1.5 -> 2
      [5n, 1_000, 1n], // 0.5 -> 1
      [15n, 1_000, 2n], // 1.5 -> 2
      [14n, 1_000, 1n], // 1.4 -> 1
      [9_999_999n, 1, 1_000n], // 999.9999 -> 1000
      [MAX_AMOUNT_UNITS, 10_000, MAX_AMOUNT_UNITS],
    ])('tax on %s at %s bps is %s', (subtotal, bps, tax) => {
      expect(taxHalfUp(subtotal, bps)).toBe(tax);
    });

    it('refuses tax rates outside 0..10000', () => {
      expect(() => taxHalfUp(1n, -1)).toThrow(MoneyError);
      expect(() => taxHalfUp(1n, 10_001)).toThrow(MoneyError);
    });

    it('computes invoice totals as D10 says, and refuses totals past the bound', () => {
      expect(
        invoiceTotals(
          [
            { quantity: 2, unitAmount: 4_995_000n },
            { quantity: 1, unitAmount: 1n },
          ],
          825,
        ),
      ).toEqual({ subtotal: 9_990_001n, tax: 824_175n, total: 10_814_176n });
      // Each line fits, the sum does not.
      const half = MAX_AMOUNT_UNITS / 2n + 1n;
      expect(() =>
        invoiceTotals(
          [
            { quantity: 1, unitAmount: half },
            { quantity: 1, unitAmount: half },
          ],
          0,
        ),
      ).toThrow(/the subtotal exceeds/);
      // The subtotal fits, the tax pushes the total over.
      expect(() => invoiceTotals([{ quantity: 1, unitAmount: MAX_AMOUNT_UNITS }], 1)).toThrow(
        /the total exceeds/,
      );
      expect(() =>
        invoiceTotals([{ quantity: 1_000_000, unitAmount: MAX_AMOUNT_UNITS / 1000n }], 0),
      ).toThrow(/line 1 exceeds/);
    });
  });
});

describe('displayAmount: money as people read it', () => {
  it.each<[string, string | undefined, string]>([
    ['1200', 'USDC', '1,200.00 USDC'],
    ['500.65625', 'USDC', '500.65625 USDC'],
    ['9.9', 'PYUSD', '9.90 PYUSD'],
    ['0', 'USDG', '0.00 USDG'],
    ['0.000001', 'USDC', '0.000001 USDC'],
    ['1234567.5', 'USDC', '1,234,567.50 USDC'],
    ['100', undefined, '100.00'],
    ['999999.999999', undefined, '999,999.999999'],
  ])('%s %s -> %s', (amount, mint, shown) => expect(displayAmount(amount, mint)).toBe(shown));

  it.each(['1e3', '-1', '1.0000001', 'abc', ''])('refuses %j', (amount) =>
    expect(() => displayAmount(amount, 'USDC')).toThrow(MoneyError),
  );
});

describe('meteredCharge', () => {
  const U = 1_000_000n; // one unit, in millionths; also one USDC in base units
  const terms = { unitPrice: 2_000n, unitSize: U, includedUnits: 1000n * U, cap: 50n * U };

  it('charges the units beyond the included ones, per block, exactly', () => {
    expect(meteredCharge(terms, 1520n * U)).toEqual({
      billableUnits: 520n * U,
      blocks: 520n,
      usageAmount: 1_040_000n,
      charged: 1_040_000n,
      capped: false,
    });
  });

  it('charges nothing up to the included units', () => {
    expect(meteredCharge(terms, 1000n * U)).toMatchObject({ blocks: 0n, charged: 0n });
    expect(meteredCharge(terms, 0n)).toMatchObject({ billableUnits: 0n, charged: 0n });
  });

  it('counts a started block whole (blocks of 100 units; a fraction of a unit is usage)', () => {
    const blocks = { ...terms, unitSize: 100n * U, unitPrice: U, includedUnits: 0n };
    expect(meteredCharge(blocks, 100n * U)).toMatchObject({ blocks: 1n, charged: U });
    expect(meteredCharge(blocks, 100n * U + 1n)).toMatchObject({ blocks: 2n, charged: 2n * U });
    expect(meteredCharge(blocks, 1n)).toMatchObject({ blocks: 1n, charged: U });
  });

  it('charges at most the cap, and says so', () => {
    expect(meteredCharge(terms, 1_000_000n * U)).toEqual({
      billableUnits: 999_000n * U,
      blocks: 999_000n,
      usageAmount: 1_998_000_000n,
      charged: 50n * U,
      capped: true,
    });
    // At the cap exactly: not capped.
    expect(meteredCharge(terms, 26_000n * U)).toMatchObject({ charged: 50n * U, capped: false });
  });

  it('bounds the usage amount it reports to the largest amount', () => {
    const huge = meteredCharge({ ...terms, unitPrice: 10n ** 12n }, MAX_AMOUNT_UNITS);
    expect(huge.usageAmount).toBe(MAX_AMOUNT_UNITS);
    expect(huge.charged).toBe(terms.cap);
  });

  it('refuses negative usage and empty blocks', () => {
    expect(() => meteredCharge(terms, -1n)).toThrow(MoneyError);
    expect(() => meteredCharge({ ...terms, unitSize: 0n }, 1n)).toThrow(MoneyError);
  });
});

import { decimalAmountProblem, fromBaseUnits, toBaseUnits } from './amounts';

describe('amounts', () => {
  it.each([
    ['9.99', 9_990_000n],
    ['1', 1_000_000n],
    ['0.000001', 1n],
    ['0.64625', 646_250n],
    ['007.50', 7_500_000n],
    ['18446744073709.551615', 18_446_744_073_709_551_615n],
    ['0', 0n],
  ])('%s is %s base units', (decimal, units) => {
    expect(toBaseUnits(decimal)).toBe(units);
  });

  it.each([
    [9_990_000n, '9.99'],
    [1_000_000n, '1'],
    [1n, '0.000001'],
    [646_250n, '0.64625'],
    [0n, '0'],
    [18_446_744_073_709_551_615n, '18446744073709.551615'],
  ])('%s base units print canonically as %s', (units, decimal) => {
    expect(fromBaseUnits(units)).toBe(decimal);
  });

  it.each(['-1', '+1', '1e6', '1.', '.5', ' 1', '1,5', '', '1.0000001', 'NaN', '0x10'])(
    'rejects %j',
    (bad) => {
      expect(decimalAmountProblem(bad)).not.toBeNull();
      expect(() => toBaseUnits(bad)).toThrow(RangeError);
    },
  );

  it('rejects non-strings and negative base units', () => {
    expect(decimalAmountProblem(9.99)).toBe('must be a decimal string, e.g. "9.99"');
    expect(() => fromBaseUnits(-1n)).toThrow(RangeError);
  });

  it('round-trips every fraction length', () => {
    for (const s of ['1.1', '1.12', '1.123', '1.1234', '1.12345', '1.123456']) {
      expect(fromBaseUnits(toBaseUnits(s))).toBe(s);
    }
  });
});

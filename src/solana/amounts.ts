import { STABLECOIN_DECIMALS } from './mints';

/**
 * Money crosses the API as decimal strings and lives everywhere else as integer base units
 * (bigint): never a float (DESIGN D5). A decimal string has no sign, no exponent, no spaces and at
 * most `decimals` fraction digits.
 */
const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/** Why `value` is not a decimal amount, or null when it is one. */
export function decimalAmountProblem(
  value: unknown,
  decimals = STABLECOIN_DECIMALS,
): string | null {
  if (typeof value !== 'string') return 'must be a decimal string, e.g. "9.99"';
  const match = DECIMAL.exec(value);
  if (!match) return 'must be a decimal string with no sign or exponent, e.g. "9.99"';
  if ((match[2] ?? '').length > decimals) return `must have at most ${decimals} decimal places`;
  return null;
}

/** "9.99" → 9990000n. @throws RangeError when the string is not a decimal amount. */
export function toBaseUnits(value: string, decimals = STABLECOIN_DECIMALS): bigint {
  const problem = decimalAmountProblem(value, decimals);
  if (problem) throw new RangeError(`Amount ${JSON.stringify(value)} ${problem}`);
  const [whole, fraction = ''] = value.split('.');
  return BigInt(whole + fraction.padEnd(decimals, '0'));
}

/** 9990000n → "9.99": canonical, with no trailing zeros and no trailing dot. */
export function fromBaseUnits(units: bigint, decimals = STABLECOIN_DECIMALS): string {
  if (units < 0n) throw new RangeError('Amounts are never negative');
  const digits = units.toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}

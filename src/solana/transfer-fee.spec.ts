import { calculateFee } from '@solana/spl-token';
import { feeOf, grossUp, type TransferFee } from './transfer-fee';

const fee = (bps: number, max: bigint): TransferFee => ({
  epoch: 0n,
  transferFeeBasisPoints: bps,
  maximumFee: max,
});

describe('Token-2022 transfer fees', () => {
  it('feeOf is the token program rule: ceil(gross * bps / 10000) capped at the maximum', () => {
    expect(feeOf(null, 1_000_000n)).toBe(0n);
    expect(feeOf(fee(100, 10n ** 18n), 100_000_000n)).toBe(1_000_000n); // 1% of 100
    expect(feeOf(fee(100, 10n ** 18n), 150n)).toBe(2n); // 1.5 rounds up
    expect(feeOf(fee(100, 250_000n), 100_000_000n)).toBe(250_000n); // capped
    expect(feeOf(fee(0, 5n), 1_000n)).toBe(0n);
    expect(feeOf(fee(10_000, 7n), 1_000n)).toBe(7n);
  });

  it('grossUp: no fee (or nothing to send) asks for the amount itself', () => {
    expect(grossUp(null, 9_990_000n)).toBe(9_990_000n);
    expect(grossUp(fee(0, 1000n), 9_990_000n)).toBe(9_990_000n);
    expect(grossUp(fee(100, 1000n), 0n)).toBe(0n);
    expect(() => grossUp(fee(100, 1000n), -1n)).toThrow(RangeError);
  });

  it('grossUp worked examples: 1% on 100 PYUSD, a capped fee, the 100% fee', () => {
    // 101.010102 PYUSD sent, a fee of 1.010102 withheld (rounded up), 100 arrive.
    expect(grossUp(fee(100, 10n ** 18n), 100_000_000n)).toBe(101_010_102n);
    expect(feeOf(fee(100, 10n ** 18n), 101_010_102n)).toBe(1_010_102n);
    // The cap binds: the fee is 0.25 whatever the amount.
    expect(grossUp(fee(100, 250_000n), 100_000_000n)).toBe(100_250_000n);
    expect(grossUp(fee(10_000, 3n), 5n)).toBe(8n);
  });

  it('grossUp is exact and the smallest such transfer, for every amount, rate and cap tried', () => {
    const rates = [1, 2, 7, 33, 100, 250, 999, 5000, 9999, 10_000];
    const caps = [0n, 1n, 2n, 5n, 17n, 100n, 10n ** 18n];
    const wrong: unknown[] = [];
    for (const bps of rates) {
      for (const max of caps) {
        const f = fee(bps, max);
        for (let net = 0n; net <= 600n; net++) {
          const gross = grossUp(f, net);
          // Exact: the net arrives, to the unit (the spl-token rule, independently).
          const exact = gross - calculateFee(f, gross) === net;
          // Smallest: one unit less does not get the net there.
          const smallest = gross === 0n || gross - 1n - calculateFee(f, gross - 1n) < net;
          if (!exact || !smallest) wrong.push({ bps, max, net, gross, exact, smallest });
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('grossUp on large amounts (up to the largest storable) stays exact', () => {
    const big = 2n ** 62n;
    for (const f of [fee(1, 10n ** 18n), fee(100, 10n ** 18n), fee(9_999, 10n ** 12n)]) {
      for (const net of [big, big + 12_345n, 9_223_372_036_854n]) {
        const gross = grossUp(f, net);
        expect(gross - calculateFee(f, gross)).toBe(net);
        expect(gross - 1n - calculateFee(f, gross - 1n)).toBeLessThan(net);
      }
    }
  });
});

import { calculateFee, type TransferFee } from '@solana/spl-token';

export type { TransferFee } from '@solana/spl-token';

const ONE_IN_BASIS_POINTS = 10_000n;

/**
 * What a Token-2022 transfer fee withholds from a transfer of `gross` (the token program's own
 * rule, through spl-token: `min(ceil(gross * bps / 10000), maximumFee)`). No fee: 0.
 */
export function feeOf(fee: TransferFee | null, gross: bigint): bigint {
  return fee ? calculateFee(fee, gross) : 0n;
}

/**
 * The smallest transfer whose amount after the fee is `net` (the fee's inverse): what to ask a
 * payer for so that `net` arrives. Exact: `gross - feeOf(fee, gross) === net`.
 *
 * Why it is exact and smallest: what arrives of `g`, `g - min(ceil(g*b/10000), M)`, is
 * `max(floor(g*(10000-b)/10000), g - M)`: it never falls as `g` grows and rises by at most one
 * per unit, so the smallest `g` reaching `net` arrives at exactly `net`; the first term reaches
 * it at `ceil(net*10000/(10000-b))`, the second at `net + M`.
 */
export function grossUp(fee: TransferFee | null, net: bigint): bigint {
  if (net < 0n) throw new RangeError('net must not be negative');
  if (!fee || fee.transferFeeBasisPoints === 0 || net === 0n) return net;
  const capped = net + fee.maximumFee;
  const bps = BigInt(fee.transferFeeBasisPoints);
  if (bps >= ONE_IN_BASIS_POINTS) return capped;
  const keep = ONE_IN_BASIS_POINTS - bps;
  const uncapped = (net * ONE_IN_BASIS_POINTS + keep - 1n) / keep;
  return uncapped < capped ? uncapped : capped;
}

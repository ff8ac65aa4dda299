import type { Db } from '../../database/db';
import { type ChargeInput, reservedOf } from '../../solana/chain.port';
import {
  type WalletReservation,
  WalletReservationsRepository,
} from './wallet-reservations.repository';

/**
 * What a charge holds back for its wallet's older subscriptions (`judged`, resolved by
 * `reservedOf` once the token account is read): a claim's reading is an upper bound (what all
 * the others need), good enough when the approval covers the charge and it; the older ones'
 * exact sum is read only when it does not.
 */
describe("a token-delegate charge's reservation as judged", () => {
  /** The exact sum as the database would answer it, and how often it was asked. */
  function repository(exact: bigint) {
    const reads = { count: 0 };
    const db = {
      query: () => {
        reads.count++;
        return Promise.resolve({
          rows: [{ reserved: exact.toString(), in_flight: 0, siblings: 2, version: '4' }],
          rowCount: 1,
        });
      },
    } as unknown as Db;
    return { reservations: new WalletReservationsRepository(db), reads };
  }
  const self = { createdAt: '2026-11-28 08:00:00+00', id: 'sub' };
  const seen = (reserved: bigint, upperBound?: boolean): WalletReservation => ({
    reserved,
    upperBound,
    inFlight: 0,
    siblings: 2,
    version: '4',
  });
  /** What `reservedOf` resolves for a charge of 10 from an allowance of `delegated`. */
  async function resolved(
    reservations: WalletReservationsRepository,
    reading: WalletReservation,
    delegated: bigint,
  ) {
    const input = {
      amount: 10n,
      reservedForEarlier: reservations.judged(reading, 'wallet', 'USDC', self),
    } as ChargeInput;
    return reservedOf(input, delegated - input.amount);
  }

  it('an exact reading is used as it is', async () => {
    const { reservations, reads } = repository(99n);
    expect(await resolved(reservations, seen(30n), 100n)).toBe(30n);
    expect(reads.count).toBe(0);
  });

  it('an upper bound the allowance covers with the charge is enough: nothing more is read', async () => {
    const { reservations, reads } = repository(5n);
    expect(await resolved(reservations, seen(90n, true), 100n)).toBe(90n);
    expect(reads.count).toBe(0);
  });

  it('an upper bound the allowance falls short of: the exact sum is read and judged', async () => {
    const { reservations, reads } = repository(5n);
    expect(await resolved(reservations, seen(91n, true), 100n)).toBe(5n);
    expect(reads.count).toBe(1);
  });

  it('an upper bound below 0 (totals not the subscriptions’) is no bound: the exact sum is read', async () => {
    const { reservations, reads } = repository(95n);
    expect(await resolved(reservations, seen(-1n, true), 100n)).toBe(95n);
    expect(reads.count).toBe(1);
  });
});

/**
 * The reservation of a wallet's shared approval (token-delegate scheme), read in
 * `repositories/wallet-reservations.repository.ts`. `reservedAllowance` is exported here too,
 * where the portal's re-authorise reads it in its transaction.
 */
export { reservedAllowance } from './repositories/wallet-reservations.repository';
export type { WalletReservation } from './repositories/wallet-reservations.repository';

import { IsString, Matches } from 'class-validator';
import { IsSolanaAddress } from '../../common/validators/solana-address';

/** Solana Pay transaction request body: the wallet that will sign. */
export class TransactionRequestDto {
  /** The customer's wallet (base58). @example "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin" */
  @IsSolanaAddress()
  account!: string;
}

export class ConfirmSubscribeDto {
  /**
   * The signature of the subscribe transaction the customer's wallet signed and sent (base58).
   * @example "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"
   */
  @IsString()
  @Matches(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/, { message: 'must be a base58 transaction signature' })
  signature!: string;
}

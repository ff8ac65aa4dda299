import { ApiProperty } from '@nestjs/swagger';
import bs58 from 'bs58';
import { IsString, ValidateBy } from 'class-validator';
import { IsSolanaAddress } from '../../common/validators/solana-address';

/** Solana Pay transaction request body: the wallet that will sign. */
export class TransactionRequestDto {
  /** The customer's wallet (base58). @example "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin" */
  @IsSolanaAddress()
  account!: string;
}

/** Base58, 64-88 characters: the shape of a transaction signature (it must also decode to 64 bytes). */
const SIGNATURE_PATTERN = /^[1-9A-HJ-NP-Za-km-z]{64,88}$/;

export class ConfirmSubscribeDto {
  /**
   * The signature of the subscribe transaction the customer's wallet signed and sent (base58).
   * @example "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"
   */
  @ApiProperty({ pattern: SIGNATURE_PATTERN.source })
  @IsString()
  @ValidateBy({
    name: 'isTransactionSignature',
    validator: {
      validate: isTransactionSignature,
      defaultMessage: () => 'must be a base58 transaction signature (64 bytes)',
    },
  })
  signature!: string;
}

/** A transaction signature: base58 of exactly 64 bytes (64-88 characters). */
export function isTransactionSignature(value: unknown): boolean {
  if (typeof value !== 'string' || !SIGNATURE_PATTERN.test(value)) return false;
  try {
    return bs58.decode(value).length === 64;
  } catch {
    return false;
  }
}

import bs58 from 'bs58';
import { registerDecorator, ValidationOptions } from 'class-validator';

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/** A Solana public key: base58, 32-44 characters, decoding to exactly 32 bytes. */
export function isSolanaAddress(value: unknown): value is string {
  if (typeof value !== 'string' || !BASE58.test(value)) return false;
  try {
    return bs58.decode(value).length === 32;
  } catch {
    return false;
  }
}

export function IsSolanaAddress(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isSolanaAddress',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: 'must be a base58 Solana address (32-44 characters, 32 bytes)',
        ...options,
      },
      validator: { validate: isSolanaAddress },
    });
}

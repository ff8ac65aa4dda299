import { isSolanaAddress } from './solana-address';

describe('isSolanaAddress', () => {
  it.each([
    '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin',
    'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
    '11111111111111111111111111111111', // the system program: 32 zero bytes, 32 characters
  ])('accepts %s', (address) => expect(isSolanaAddress(address)).toBe(true));

  it.each([
    ['empty', ''],
    ['too short', '9xQeWvG816bUx9EPjHmaT23yvVM2ZWb'],
    ['too long', '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin1'],
    ['non-base58 characters', '0OIl9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9Pu'],
    ['decodes to 33 bytes', 'zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz'],
    ['decodes to 31 bytes', '1111111111111111111111111111111111111111112'],
    ['not a string', 42],
  ])('rejects %s', (_, value) => expect(isSolanaAddress(value)).toBe(false));
});

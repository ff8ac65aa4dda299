import bs58 from 'bs58';
import { randomBytes } from 'node:crypto';
import { encodeBase58 } from './base58';

describe('encodeBase58', () => {
  it('is bs58, flattened: keys, signatures, leading zeros and edge cases', () => {
    const inputs = [
      Buffer.alloc(0),
      Buffer.alloc(32),
      Buffer.from([0, 0, 1]),
      Buffer.from([255]),
      Buffer.alloc(64, 255),
      ...Array.from({ length: 200 }, (_, i) => randomBytes(i % 2 === 0 ? 32 : 64)),
      ...Array.from({ length: 50 }, (_, i) => Buffer.concat([Buffer.alloc(i % 4), randomBytes(i)])),
    ];
    for (const input of inputs) expect(encodeBase58(input)).toBe(bs58.encode(input));
  });
});

const ALPHABET = Buffer.from(
  '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz',
  'latin1',
);

/**
 * Base58 (Bitcoin alphabet) into a flat string. The `bs58` package builds its result one
 * character at a time, which leaves V8 a rope of ~90 string nodes per signature (about 3 KB):
 * fine for a reply, too much for the millions of signatures and addresses the index keeps.
 */
export function encodeBase58(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  // log(256) / log(58) < 1.37 digits per byte.
  const size = Math.ceil(((bytes.length - zeros) * 137) / 100) + 1;
  const digits = new Uint8Array(size); // big-endian base-58 digits, filled from the end
  let used = 0;
  for (let i = zeros; i < bytes.length; i++) {
    let carry = bytes[i];
    let k = size - 1;
    for (let n = 0; (carry !== 0 || n < used) && k >= 0; k--, n++) {
      carry += 256 * digits[k];
      digits[k] = carry % 58;
      carry = Math.floor(carry / 58);
    }
    used = size - 1 - k;
  }
  let start = size - used;
  while (start < size && digits[start] === 0) start++;
  const text = Buffer.allocUnsafe(zeros + size - start);
  text.fill(ALPHABET[0], 0, zeros);
  for (let i = start; i < size; i++) text[zeros + i - start] = ALPHABET[digits[i]];
  return text.toString('latin1');
}

import bs58 from 'bs58';

/**
 * Base58 through `bs58`, as one flat string. `bs58` builds its result a character at a time,
 * which leaves V8 a rope of ~90 string nodes per signature (about 3 KB): fine for a reply, too
 * much for the many signatures and addresses the transaction index keeps. A round trip through
 * a Buffer flattens it.
 */
export function encodeBase58(bytes: Uint8Array): string {
  return Buffer.from(bs58.encode(bytes), 'latin1').toString('latin1');
}

import { createHash, timingSafeEqual } from 'node:crypto';

/** What a dev key may be: 32..256 printable ASCII characters, no spaces. */
export const DEV_KEY_PATTERN = /^[\x21-\x7e]{32,256}$/;

/**
 * Whether an `Authorization` header carries `devKey` as a bearer token. Compared in constant
 * time over digests, so neither the key's length nor a prefix leaks through timing.
 */
export function bearerIsDevKey(authorization: string | undefined, devKey: string): boolean {
  if (!authorization) return false;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match) return false;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(match[1]), digest(devKey));
}
